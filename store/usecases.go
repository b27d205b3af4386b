package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"tribunal/prompt"
)

// Cost priorities of a use case: what a recommendation trades first.
const (
	CostLow      = "low"      // the cheapest model that is good enough
	CostBalanced = "balanced" // quality and cost weighed together
	CostHigh     = "high"     // quality first; cost only breaks ties
)

// CostPriorities lists the cost priorities in display order.
var CostPriorities = []string{CostLow, CostBalanced, CostHigh}

// Bounds of a use case's fields.
const (
	maxUseCaseText       = 64 << 10
	maxUseCaseConstraint = 50
	maxCandidateModels   = 50
	maxContextTokens     = 10_000_000
)

// UseCaseInput is a use case's own fields (seed 004 §11): what its tasks
// are for, the constraints every one of them shares, and the defaults that
// drive prompts and model recommendation. Tasks name their use case by
// Name.
type UseCaseInput struct {
	Name        string `json:"name"`
	Goal        string `json:"goal"`
	Description string `json:"description"`
	Notes       string `json:"notes"`
	// Constraints are scalar values (numbers, booleans, text) keyed by name,
	// e.g. {"chunk_min": 500, "chunk_max": 2000, "coverage_required": true}.
	Constraints       map[string]any `json:"constraints" gorm:"serializer:json"`
	DefaultJudgeModel string         `json:"default_judge_model"`
	// DefaultCandidateModels are the models a recommendation suggests first
	// while the use case has no runs.
	DefaultCandidateModels []string `json:"default_candidate_models" gorm:"serializer:json"`
	// CostPriority is one of CostPriorities ("" means balanced).
	CostPriority string `json:"cost_priority"`
	// ContextNeededTokens is the context window a model needs (0: any).
	ContextNeededTokens int64 `json:"context_needed_tokens"`
}

// useCaseRow is a stored use case.
type useCaseRow struct {
	ID int64
	UseCaseInput
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (useCaseRow) TableName() string { return "usecases" }

// UseCase is one use case: its own fields where it has been saved (ID > 0;
// a use case only named by tasks has ID 0 and empty fields), and its
// categories with how many tasks each holds.
type UseCase struct {
	ID int64 `json:"id"`
	UseCaseInput
	Tasks      int64           `json:"tasks"`
	Categories []CategoryCount `json:"categories"`
}

// CategoryCount is a category with its task count.
type CategoryCount struct {
	Name  string `json:"category"`
	Tasks int64  `json:"tasks"`
}

// Normalize trims the fields, fills the defaults and checks every bound,
// naming the field that is wrong.
func (in *UseCaseInput) Normalize() error {
	in.Name = strings.TrimSpace(in.Name)
	in.Goal = strings.TrimSpace(in.Goal)
	in.DefaultJudgeModel = strings.TrimSpace(in.DefaultJudgeModel)
	in.CostPriority = strings.ToLower(strings.TrimSpace(in.CostPriority))
	switch {
	case in.Name == "":
		return invalid("name", "is required")
	case len(in.Name) > 255:
		return invalid("name", "is longer than 255 characters")
	case len(in.DefaultJudgeModel) > 255:
		return invalid("default_judge_model", "is longer than 255 characters")
	case in.ContextNeededTokens < 0 || in.ContextNeededTokens > maxContextTokens:
		return invalid("context_needed_tokens", "must be between 0 and %d", maxContextTokens)
	}
	for field, text := range map[string]string{"goal": in.Goal, "description": in.Description, "notes": in.Notes} {
		if len(text) > maxUseCaseText {
			return invalid(field, "is longer than %d KB", maxUseCaseText>>10)
		}
	}
	if in.CostPriority == "" {
		in.CostPriority = CostBalanced
	}
	if !validCostPriority(in.CostPriority) {
		return invalid("cost_priority", "must be one of %s", strings.Join(CostPriorities, ", "))
	}
	models, err := candidateModels(in.DefaultCandidateModels)
	if err != nil {
		return err
	}
	in.DefaultCandidateModels = models
	if in.Constraints == nil {
		in.Constraints = map[string]any{}
	}
	return checkUseCaseConstraints(in.Constraints)
}

func validCostPriority(p string) bool {
	for _, c := range CostPriorities {
		if p == c {
			return true
		}
	}
	return false
}

// candidateModels trims the list and drops blanks and repeats, keeping order.
func candidateModels(in []string) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, m := range in {
		m = strings.TrimSpace(m)
		if m == "" || seen[m] {
			continue
		}
		if len(m) > 255 {
			return nil, invalid("default_candidate_models", "%.40q… is longer than 255 characters", m)
		}
		seen[m] = true
		out = append(out, m)
	}
	if len(out) > maxCandidateModels {
		return nil, invalid("default_candidate_models", "has %d models; at most %d", len(out), maxCandidateModels)
	}
	return out, nil
}

// checkUseCaseConstraints allows scalar values only, and a NAME_min (or
// min_NAME) no larger than its NAME_max (max_NAME).
func checkUseCaseConstraints(c map[string]any) error {
	if len(c) > maxUseCaseConstraint {
		return invalid("constraints", "has %d keys; at most %d", len(c), maxUseCaseConstraint)
	}
	for k, v := range c {
		if strings.TrimSpace(k) == "" || len(k) > 64 {
			return invalid("constraints", "key %q must be 1–64 characters", k)
		}
		switch x := v.(type) {
		case bool:
		case string:
			if len(x) > 4096 {
				return invalid("constraints."+k, "is longer than 4096 characters")
			}
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return invalid("constraints."+k, "is not a finite number")
			}
		case int:
			c[k] = float64(x)
		case int64:
			c[k] = float64(x)
		default:
			return invalid("constraints."+k, "must be a number, true/false or text")
		}
	}
	// The min/max pairs are those a task's constraints have (one rule,
	// prompt.BoundConflicts); only numbers are compared.
	var nums []prompt.Constraint
	for _, k := range sortedKeys(c) {
		if x, ok := c[k].(float64); ok {
			nums = append(nums, prompt.Constraint{Key: k, Value: strconv.FormatFloat(x, 'g', -1, 64)})
		}
	}
	if bc := prompt.BoundConflicts(nums); len(bc) > 0 {
		return invalid("constraints", "%s", bc[0].Message)
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CreateUseCase saves a new use case; its name must be new.
func (s *Store) CreateUseCase(ctx context.Context, in UseCaseInput) (*UseCase, error) {
	if err := in.Normalize(); err != nil {
		return nil, err
	}
	now := s.now()
	row := useCaseRow{UseCaseInput: in, CreatedAt: now, UpdatedAt: now}
	if err := s.conn(ctx).Create(&row).Error; err != nil {
		return nil, fmt.Errorf("store: create use case: %w", useCaseConflict(err, in.Name))
	}
	return s.UseCase(ctx, row.ID)
}

// UpdateUseCase replaces a use case's fields. A new name is carried to the
// tasks that named the old one, in the same transaction; runs keep the name
// they froze.
func (s *Store) UpdateUseCase(ctx context.Context, id int64, in UseCaseInput) (*UseCase, error) {
	if err := in.Normalize(); err != nil {
		return nil, err
	}
	err := s.Transact(ctx, func(tx *Store) error {
		var old useCaseRow
		if err := tx.conn(ctx).Take(&old, id).Error; err != nil {
			return notFound(err, "use case", id)
		}
		row := useCaseRow{ID: id, UseCaseInput: in, CreatedAt: old.CreatedAt, UpdatedAt: tx.now()}
		if err := tx.conn(ctx).Save(&row).Error; err != nil {
			return useCaseConflict(err, in.Name)
		}
		if old.Name == in.Name {
			return nil
		}
		return tx.conn(ctx).Model(&Task{}).Where("usecase = ?", old.Name).
			Updates(map[string]any{"usecase": in.Name, "updated_at": tx.now()}).Error
	})
	if err != nil {
		return nil, fmt.Errorf("store: update use case: %w", err)
	}
	return s.UseCase(ctx, id)
}

// SaveUseCase creates the named use case or replaces the fields of the one
// with that name (a use-case file imported again); created says which.
func (s *Store) SaveUseCase(ctx context.Context, in UseCaseInput) (uc *UseCase, created bool, err error) {
	if err := in.Normalize(); err != nil {
		return nil, false, err
	}
	var id int64
	if err := s.conn(ctx).Model(&useCaseRow{}).Select("id").Where("name = ?", in.Name).Scan(&id).Error; err != nil {
		return nil, false, fmt.Errorf("store: save use case: %w", err)
	}
	if id == 0 {
		uc, err = s.CreateUseCase(ctx, in)
		return uc, true, err
	}
	uc, err = s.UpdateUseCase(ctx, id, in)
	return uc, false, err
}

// DeleteUseCase forgets a saved use case's own fields; its tasks keep
// naming it, so it stays listed as a task-only use case while they do.
func (s *Store) DeleteUseCase(ctx context.Context, id int64) error {
	res := s.conn(ctx).Delete(&useCaseRow{}, id)
	if res.Error != nil {
		return fmt.Errorf("store: delete use case: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: delete use case: %w", notFound(gorm.ErrRecordNotFound, "use case", id))
	}
	return nil
}

// PromptUseCase is what the use case adds to its tasks' prompts.
func (in UseCaseInput) PromptUseCase() prompt.UseCase {
	return prompt.UseCase{Goal: in.Goal, Notes: strings.TrimSpace(in.Notes), Constraints: in.Constraints}
}

// PromptUseCaseOf is what the saved use case of that name adds to its
// tasks' prompts; nothing for a name never saved (or "").
func (s *Store) PromptUseCaseOf(ctx context.Context, name string) (prompt.UseCase, error) {
	if strings.TrimSpace(name) == "" {
		return prompt.UseCase{}, nil
	}
	row, err := s.useCaseRowNamed(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return prompt.UseCase{}, nil
	}
	if err != nil {
		return prompt.UseCase{}, err
	}
	return row.PromptUseCase(), nil
}

func useCaseConflict(err error, name string) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return conflict("a use case named %q already exists", name)
	}
	return err
}

// UseCase returns one saved use case with its categories.
func (s *Store) UseCase(ctx context.Context, id int64) (*UseCase, error) {
	var row useCaseRow
	if err := s.conn(ctx).Take(&row, id).Error; err != nil {
		return nil, fmt.Errorf("store: use case: %w", notFound(err, "use case", id))
	}
	return s.withCategories(ctx, row)
}

// UseCaseNamed returns the saved use case of that name (ErrNotFound when
// tasks name it but it was never saved).
func (s *Store) UseCaseNamed(ctx context.Context, name string) (*UseCase, error) {
	row, err := s.useCaseRowNamed(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.withCategories(ctx, *row)
}

// useCaseRowNamed reads the saved use case's own fields, without counting
// its tasks.
func (s *Store) useCaseRowNamed(ctx context.Context, name string) (*useCaseRow, error) {
	var row useCaseRow
	if err := s.conn(ctx).Where("name = ?", strings.TrimSpace(name)).Take(&row).Error; err != nil {
		return nil, fmt.Errorf("store: use case: %w", notFound(err, "use case", name))
	}
	return &row, nil
}

func (s *Store) withCategories(ctx context.Context, row useCaseRow) (*UseCase, error) {
	uc := &UseCase{ID: row.ID, UseCaseInput: row.UseCaseInput, Categories: []CategoryCount{}}
	err := s.conn(ctx).Model(&Task{}).Select("category AS name, COUNT(*) AS tasks").
		Where("usecase = ?", row.Name).Group("category").Order("category").Scan(&uc.Categories).Error
	if err != nil {
		return nil, fmt.Errorf("store: use case categories: %w", err)
	}
	for _, c := range uc.Categories {
		uc.Tasks += c.Tasks
	}
	return uc, nil
}

// UseCases lists every use case, saved or only named by tasks, with its
// categories and task counts (the use case → category hierarchy of seed
// 003 §5), by name.
func (s *Store) UseCases(ctx context.Context) ([]UseCase, error) {
	var rows []struct {
		UseCase  string `gorm:"column:usecase"`
		Category string
		N        int64
	}
	err := s.conn(ctx).Model(&Task{}).Select("usecase, category, COUNT(*) AS n").
		Group("usecase, category").Order("usecase, category").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: use cases: %w", err)
	}
	var saved []useCaseRow
	if err := s.conn(ctx).Order("name").Find(&saved).Error; err != nil {
		return nil, fmt.Errorf("store: use cases: %w", err)
	}
	byName := map[string]*UseCase{}
	var names []string
	get := func(name string) *UseCase {
		if uc, ok := byName[name]; ok {
			return uc
		}
		uc := &UseCase{UseCaseInput: UseCaseInput{Name: name, Constraints: map[string]any{}, DefaultCandidateModels: []string{}},
			Categories: []CategoryCount{}}
		byName[name] = uc
		names = append(names, name)
		return uc
	}
	for _, r := range saved {
		uc := get(r.Name)
		uc.ID, uc.UseCaseInput = r.ID, r.UseCaseInput
	}
	for _, r := range rows {
		uc := get(r.UseCase)
		uc.Tasks += r.N
		uc.Categories = append(uc.Categories, CategoryCount{Name: r.Category, Tasks: r.N})
	}
	sort.Strings(names)
	out := make([]UseCase, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out, nil
}
