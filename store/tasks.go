package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"tribunal/checks"
	"tribunal/prompt"
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
	Turns             []string `json:"turns"`
	SystemPrompt      string   `json:"system_prompt"`
	UseCase           string   `json:"usecase"`
	Tags              []string `json:"tags"`
	Constraints       string   `json:"constraints"`
	Examples          string   `json:"examples"`
	JudgeInstructions string   `json:"judge_instructions"`
	Comments          string   `json:"comments"`
	// Input is the data the model works on, shown under the question.
	Input string `json:"input"`
	// PromptTemplate replaces the built-in layout of the prompt the model
	// gets (package prompt); it is checked when the task is saved.
	PromptTemplate string            `json:"prompt_template"`
	Checks         []Check           `json:"checks"`
	Metadata       map[string]string `json:"metadata"`
}

// Check is a reference metric of a task that needs no LLM: Type is one of
// CheckTypes, and Value (when set) replaces the task's reference; a trajectory
// check (checks.Trajectory) needs its own Value and never reads the reference.
type Check struct {
	Type  string `json:"type"`
	Value string `json:"value,omitempty"`
}

// CheckTypes lists the check types in display order.
var CheckTypes = checks.Types

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
	}
	if len(in.Turns) > 0 {
		if strings.TrimSpace(in.Question) == "" {
			in.Question = in.Turns[0]
		} else if in.Question != in.Turns[0] {
			return invalid("turns", "the first turn must be the question (or leave question empty)")
		}
	}
	if strings.TrimSpace(in.Question) == "" {
		return invalid("question", "is required")
	}
	switch {
	case len(in.Turns) > 50:
		return invalid("turns", "a task has at most 50 turns")
	case len(in.Turns) == 1:
		in.Turns = nil // a single turn is the question
	}
	for i, t := range in.Turns {
		if strings.TrimSpace(t) == "" {
			return invalid(fmt.Sprintf("turns[%d]", i), "is empty")
		}
	}
	if len(in.Input) > prompt.MaxInput {
		return invalid("input", "is longer than %d KB", prompt.MaxInput>>10)
	}
	// Contradictory bounds (min_words: 100, max_words: 10) fail every answer.
	if bc := prompt.BoundConflicts(prompt.ConstraintsOf(in.Constraints)); len(bc) > 0 {
		return invalid("constraints", "%s", bc[0].Message)
	}
	if err := prompt.Check(context.Background(), in.PromptTemplate); err != nil {
		return invalid("prompt_template", "%s", err.Error())
	}
	in.UseCase = strings.TrimSpace(in.UseCase)
	if len(in.UseCase) > 255 {
		return invalid("usecase", "is longer than 255 characters")
	}
	tags, err := normTags("tags", in.Tags)
	if err != nil {
		return err
	}
	in.Tags = tags
	if len(in.Checks) > 20 {
		return invalid("checks", "a task has at most 20 checks")
	}
	seenCheck := map[string]bool{}
	for i := range in.Checks {
		c := &in.Checks[i]
		c.Type = strings.TrimSpace(c.Type)
		field := fmt.Sprintf("checks[%d]", i)
		ref := checks.Ref(c.Type, c.Value, in.Reference)
		if err := checks.Validate(c.Type, ref); err != nil {
			return invalid(field, "%s", err.Error())
		}
		if ref == "" && c.Type != checks.JSONValid {
			return invalid(field, "%s needs a value or the task's reference", c.Type)
		}
		if seenCheck[c.Type] {
			return invalid(field, "%s is listed twice; one check per type (a regex can test several things)", c.Type)
		}
		seenCheck[c.Type] = true
	}
	if len(in.Metadata) > 100 {
		return invalid("metadata", "a task has at most 100 metadata keys")
	}
	return nil
}

// normTags trims, drops empty and repeated tags, and bounds their size.
func normTags(field string, tags []string) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || seen[strings.ToLower(t)] {
			continue
		}
		if len(t) > 64 {
			return nil, invalid(field, "tag %q is longer than 64 characters", t[:64])
		}
		seen[strings.ToLower(t)] = true
		out = append(out, t)
	}
	if len(out) > 50 {
		return nil, invalid(field, "at most 50 tags")
	}
	return out, nil
}

// Input is the input that would recreate the task.
func (t *Task) Input() TaskInput {
	return TaskInput{TaskKey: t.TaskKey, Category: t.Category, Subcategory: t.Subcategory, Question: t.Question,
		Excellent: t.Excellent, Good: t.Good, Pass: t.Pass, IncorrectAnswerDirection: t.IncorrectAnswerDirection,
		Reference: t.Reference, Turns: t.Turns, SystemPrompt: t.SystemPrompt, UseCase: t.UseCase, Tags: t.Tags,
		Constraints: t.Constraints, Examples: t.Examples, JudgeInstructions: t.JudgeInstructions, Comments: t.Comments,
		Input: t.InputData, PromptTemplate: t.PromptTemplate, Checks: t.Checks, Metadata: t.Metadata}
}

// row is the task row the input describes.
func (in *TaskInput) row() Task {
	return Task{TaskKey: in.TaskKey, Category: in.Category, Subcategory: in.Subcategory, Question: in.Question,
		Excellent: in.Excellent, Good: in.Good, Pass: in.Pass, IncorrectAnswerDirection: in.IncorrectAnswerDirection,
		TaskFields: TaskFields{Reference: in.Reference, Turns: nonNil(in.Turns), SystemPrompt: in.SystemPrompt, UseCase: in.UseCase,
			Tags: nonNil(in.Tags), Constraints: in.Constraints, Examples: in.Examples, JudgeInstructions: in.JudgeInstructions,
			Comments: in.Comments, InputData: in.Input, PromptTemplate: in.PromptTemplate, Checks: nonNil(in.Checks)},
		Metadata: nonNilMap(in.Metadata)}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// TaskFilter narrows and pages a task list.
type TaskFilter struct {
	Query    string // matches task_id or question, case-insensitive
	Category string
	UseCase  string
	Tag      string // tasks carrying this tag
	Page     int    // 1-based
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

// where is the condition on tasks' columns that f's filters make (its page
// fields aside), shared by the task list and AddMatchingTasks so that "all
// matching" adds exactly what the list shows.
func (f TaskFilter) where() (string, []any) {
	conds, args := []string{"1 = 1"}, []any{}
	if f.Query != "" {
		p := likePattern(f.Query)
		conds = append(conds, `(LOWER(tasks.task_key) LIKE ? ESCAPE '\' OR LOWER(tasks.question) LIKE ? ESCAPE '\')`)
		args = append(args, p, p)
	}
	if f.Category != "" {
		conds = append(conds, "tasks.category = ?")
		args = append(args, f.Category)
	}
	if f.UseCase != "" {
		conds = append(conds, "tasks.usecase = ?")
		args = append(args, f.UseCase)
	}
	if f.Tag != "" {
		// Tags are a JSON list of strings; the quoted form matches one whole tag.
		tag, _ := json.Marshal(f.Tag)
		conds = append(conds, `LOWER(tasks.tags) LIKE ? ESCAPE '\'`)
		args = append(args, likePattern(string(tag)))
	}
	return strings.Join(conds, " AND "), args
}

// Tasks lists tasks by task_id, filtered and paginated.
func (s *Store) Tasks(ctx context.Context, f TaskFilter) (Page[Task], error) {
	page, perPage := normPage(f.Page, f.PerPage, 50)
	cond, args := f.where()
	q := s.conn(ctx).Model(&Task{}).Where(cond, args...)
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
	t := in.row()
	t.CreatedAt, t.UpdatedAt = now, now
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
	t := in.row()
	t.UpdatedAt = s.now()
	res := s.conn(ctx).Model(&Task{}).Where("id = ?", id).Select("*").Omit("id", "created_at").Updates(&t)
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
		rows[i] = ins[i].row()
	}
	err := s.Transact(ctx, func(tx *Store) error {
		return tx.insertTasks(ctx, rows, now)
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return conflict("a task_id in the batch already exists or repeats")
	}
	if err != nil {
		return fmt.Errorf("store: create tasks: %w", err)
	}
	return nil
}
