package runs

import (
	"context"

	"tribunal/rubric"
	"tribunal/store"
)

// Violations counts what a run's judges said each model's answers
// violated, per category (seed 004 §7).
type Violations struct {
	// Categories are rubric.ViolationCategories, the columns in order.
	Categories []string `json:"categories"`
	// PerModel has a row for every target, in the run's order, with or
	// without violations.
	PerModel []ModelViolations `json:"per_model"`
	Total    int64             `json:"total"`
}

// ModelViolations is one target's violations.
type ModelViolations struct {
	TargetID int64 `json:"target_id"`
	// ByCategory holds the categories with at least one violation.
	ByCategory map[string]ViolationTally `json:"by_category"`
	Total      int64                     `json:"total"`
}

// ViolationTally is how many violations of a category a model's answers
// drew, and on how many of its items.
type ViolationTally struct {
	Violations int64 `json:"violations"`
	Items      int64 `json:"items"`
}

// asksViolations reports whether a judge of the run lists violations.
func asksViolations(run *store.Run) bool {
	for _, j := range run.Judges {
		if j.AsksViolations {
			return true
		}
	}
	return false
}

// violationsOf counts the run's violations per target and category (one
// query, store.RunViolationCounts); nil when no judge of the run lists any.
func violationsOf(ctx context.Context, st *store.Store, run *store.Run) (*Violations, error) {
	if !asksViolations(run) {
		return nil, nil
	}
	counts, err := st.RunViolationCounts(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	v := &Violations{Categories: rubric.ViolationCategories, PerModel: make([]ModelViolations, len(run.Targets))}
	row := map[int64]*ModelViolations{}
	for i, t := range run.Targets {
		v.PerModel[i] = ModelViolations{TargetID: t.ID, ByCategory: map[string]ViolationTally{}}
		row[t.ID] = &v.PerModel[i]
	}
	for _, c := range counts {
		m := row[c.RunTargetID]
		if m == nil {
			continue // run.Targets came without this one (never, short of a partial load): skip, never panic
		}
		m.ByCategory[c.Category] = ViolationTally{Violations: c.Violations, Items: c.Items}
		m.Total += c.Violations
		v.Total += c.Violations
	}
	return v, nil
}
