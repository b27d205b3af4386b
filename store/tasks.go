package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// TaskInput is what a user sends to create or update a task.
type TaskInput struct {
	TaskKey                  string `json:"task_id"`
	Category                 string `json:"category"`
	Subcategory              string `json:"subcategory"`
	Question                 string `json:"question"`
	Excellent                string `json:"excellent"`
	Good                     string `json:"good"`
	Pass                     string `json:"pass"`
	IncorrectAnswerDirection string `json:"incorrect_answer_direction"`
	// Reference is the expected answer that checks (and the judge) compare with.
	Reference string `json:"reference"`
	// Turns are the user turns of a multi-turn task; Question is always the first.
	Turns             []string          `json:"turns"`
	SystemPrompt      string            `json:"system_prompt"`
	UseCase           string            `json:"usecase"`
	Tags              []string          `json:"tags"`
	Constraints       string            `json:"constraints"`
	Examples          string            `json:"examples"`
	JudgeInstructions string            `json:"judge_instructions"`
	Comments          string            `json:"comments"`
	Checks            []Check           `json:"checks"`
	Metadata          map[string]string `json:"metadata"`
}

// Check is a reference metric of a task that needs no LLM: Type is one of
// CheckTypes, and Value (when set) replaces the task's reference.
type Check struct {
	Type  string `json:"type"`
	Value string `json:"value,omitempty"`
}

// The check types of issue 4, in display order.
var CheckTypes = []string{"exact_match", "contains", "regex", "numeric", "f1", "bleu", "rouge_l", "json_valid", "json_schema"}

// Normalize trims the short fields and checks the required ones.
func (in *TaskInput) Normalize() error {
	in.TaskKey = strings.TrimSpace(in.TaskKey)
	in.Category = strings.TrimSpace(in.Category)
	in.Subcategory = strings.TrimSpace(in.Subcategory)
	switch {
	case in.TaskKey == "":
		return invalid("task_id", "is required")
	case len(in.TaskKey) > 255:
		return invalid("task_id", "is longer than 255 characters")
	case in.Category == "":
		return invalid("category", "is required")
	case len(in.Category) > 255:
		return invalid("category", "is longer than 255 characters")
	case len(in.Subcategory) > 255:
		return invalid("subcategory", "is longer than 255 characters")
	case strings.TrimSpace(in.Question) == "":
		return invalid("question", "is required")
	}
	return nil
}

// TaskFilter narrows and pages a task list.
type TaskFilter struct {
	Query    string // matches task_id or question, case-insensitive
	Category string
	Page     int // 1-based
	PerPage  int
}

// Page is one page of a list with the total count.
type Page[T any] struct {
	Items   []T   `json:"items"`
	Total   int64 `json:"total"`
	Page    int   `json:"page"`
	PerPage int   `json:"per_page"`
}

// Pages is the number of pages the total spans.
func (p Page[T]) Pages() int {
	if p.PerPage <= 0 {
		return 1
	}
	n := int((p.Total + int64(p.PerPage) - 1) / int64(p.PerPage))
	return max(n, 1)
}

func normPage(page, perPage, def int) (int, int) {
	if perPage <= 0 {
		perPage = def
	}
	perPage = min(perPage, 500)
	return min(max(page, 1), 1_000_000), perPage // the cap keeps offsets from overflowing
}

func likePattern(q string) string {
	q = strings.ToLower(q)
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(q) + "%"
}

// Tasks lists tasks by task_id, filtered and paginated.
func (s *Store) Tasks(ctx context.Context, f TaskFilter) (Page[Task], error) {
	page, perPage := normPage(f.Page, f.PerPage, 50)
	q := s.conn(ctx).Model(&Task{})
	if f.Query != "" {
		p := likePattern(f.Query)
		q = q.Where(`(LOWER(task_key) LIKE ? ESCAPE '\' OR LOWER(question) LIKE ? ESCAPE '\')`, p, p)
	}
	if f.Category != "" {
		q = q.Where("category = ?", f.Category)
	}
	out := Page[Task]{Page: page, PerPage: perPage, Items: []Task{}}
	if err := q.Count(&out.Total).Error; err != nil {
		return out, fmt.Errorf("store: count tasks: %w", err)
	}
	if err := q.Order("task_key").Offset((page - 1) * perPage).Limit(perPage).Find(&out.Items).Error; err != nil {
		return out, fmt.Errorf("store: list tasks: %w", err)
	}
	return out, nil
}

// TaskCategories lists the distinct task categories.
func (s *Store) TaskCategories(ctx context.Context) ([]string, error) {
	var cats []string
	if err := s.conn(ctx).Model(&Task{}).Distinct("category").Order("category").Pluck("category", &cats).Error; err != nil {
		return nil, fmt.Errorf("store: task categories: %w", err)
	}
	return cats, nil
}

// Task returns one task.
func (s *Store) Task(ctx context.Context, id int64) (*Task, error) {
	var t Task
	if err := s.conn(ctx).Take(&t, id).Error; err != nil {
		return nil, fmt.Errorf("store: task: %w", notFound(err, "task", id))
	}
	return &t, nil
}

// CreateTask saves a new task; its task_id must be unique.
func (s *Store) CreateTask(ctx context.Context, in TaskInput) (*Task, error) {
	if err := in.Normalize(); err != nil {
		return nil, err
	}
	now := s.now()
	t := Task{TaskKey: in.TaskKey, Category: in.Category, Subcategory: in.Subcategory, Question: in.Question,
		Excellent: in.Excellent, Good: in.Good, Pass: in.Pass, IncorrectAnswerDirection: in.IncorrectAnswerDirection,
		CreatedAt: now, UpdatedAt: now}
	if err := s.conn(ctx).Create(&t).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, conflict("a task with task_id %q already exists", in.TaskKey)
		}
		return nil, fmt.Errorf("store: create task: %w", err)
	}
	return &t, nil
}

// UpdateTask replaces a task's fields. Runs keep the copy they were made with.
func (s *Store) UpdateTask(ctx context.Context, id int64, in TaskInput) (*Task, error) {
	if err := in.Normalize(); err != nil {
		return nil, err
	}
	res := s.conn(ctx).Model(&Task{}).Where("id = ?", id).Updates(map[string]any{
		"task_key": in.TaskKey, "category": in.Category, "subcategory": in.Subcategory, "question": in.Question,
		"excellent": in.Excellent, "good": in.Good, "pass": in.Pass,
		"incorrect_answer_direction": in.IncorrectAnswerDirection, "updated_at": s.now(),
	})
	if res.Error != nil {
		if errors.Is(res.Error, gorm.ErrDuplicatedKey) {
			return nil, conflict("a task with task_id %q already exists", in.TaskKey)
		}
		return nil, fmt.Errorf("store: update task: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("store: update task: %w", &NotFoundError{What: "task", ID: id})
	}
	return s.Task(ctx, id)
}

// DeleteTask removes a task and its collection memberships; runs keep their copy.
func (s *Store) DeleteTask(ctx context.Context, id int64) error {
	res := s.conn(ctx).Delete(&Task{}, id)
	if res.Error != nil {
		return fmt.Errorf("store: delete task: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: delete task: %w", &NotFoundError{What: "task", ID: id})
	}
	return nil
}

// CreateTasks saves many tasks in one transaction: all of them, or none
// when any is invalid or its task_id is taken.
func (s *Store) CreateTasks(ctx context.Context, ins []TaskInput) error {
	now := s.now()
	rows := make([]Task, len(ins))
	for i := range ins {
		if err := ins[i].Normalize(); err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				ve.Field = fmt.Sprintf("tasks[%d].%s", i, ve.Field)
			}
			return err
		}
		in := ins[i]
		rows[i] = Task{TaskKey: in.TaskKey, Category: in.Category, Subcategory: in.Subcategory, Question: in.Question,
			Excellent: in.Excellent, Good: in.Good, Pass: in.Pass, IncorrectAnswerDirection: in.IncorrectAnswerDirection,
			CreatedAt: now, UpdatedAt: now}
	}
	err := s.Transact(ctx, func(tx *Store) error {
		return tx.conn(ctx).CreateInBatches(rows, 500).Error
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return conflict("a task_id in the batch already exists or repeats")
	}
	if err != nil {
		return fmt.Errorf("store: create tasks: %w", err)
	}
	return nil
}
