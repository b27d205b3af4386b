package runs

import (
	"context"
	"math"
	"strconv"

	"tribunal/format"
	"tribunal/store"
)

// Spread describes one measure over a model's answered items (those that
// have it): seed 001's mean, median, std, min and max. Median is the mean
// of the two middle values when N is even; Std is the population standard
// deviation (the items are the whole run, not a sample of it).
type Spread struct {
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	Std    float64 `json:"std"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int64   `json:"n"`
}

// spreadOf turns the store's aggregates into a Spread; nil when no item has the measure.
func spreadOf(m store.Moments) *Spread {
	if m.N == 0 {
		return nil
	}
	n := float64(m.N)
	mean := m.Sum / n
	// E[x²] − mean² leaves a rounding residue (even below zero) when every
	// value is equal: then the spread is exactly none.
	std := 0.0
	if m.Max > m.Min {
		std = math.Sqrt(max(m.SumSq/n-mean*mean, 0))
	}
	return &Spread{Mean: mean, Median: m.Median, Std: std, Min: m.Min, Max: m.Max, N: m.N}
}

// Grades are a model's human grades (seed 001): counts, accuracy (correct
// ÷ graded) and a weighted score (correct 1, partial 0.5, wrong 0, over the
// graded items); the two rates are nil while nothing is graded.
type Grades struct {
	Correct  int64    `json:"correct"`
	Partial  int64    `json:"partial"`
	Wrong    int64    `json:"wrong"`
	Ungraded int64    `json:"ungraded"`
	Accuracy *float64 `json:"accuracy"`
	Weighted *float64 `json:"weighted"`
}

// gradesOf counts a model's grades among its items.
func gradesOf(g store.TargetGrades, items int64) Grades {
	out := Grades{Correct: g.Correct, Partial: g.Partial, Wrong: g.Wrong}
	graded := g.Correct + g.Partial + g.Wrong
	out.Ungraded = max(items-graded, 0)
	if graded > 0 {
		acc := float64(g.Correct) / float64(graded)
		w := (float64(g.Correct) + 0.5*float64(g.Partial)) / float64(graded)
		out.Accuracy, out.Weighted = &acc, &w
	}
	return out
}

// addMeasures puts each model's time and token spreads into its ModelScore.
func addMeasures(models []ModelScore, measures []store.TargetMeasures) {
	by := map[int64]store.TargetMeasures{}
	for _, m := range measures {
		by[m.RunTargetID] = m
	}
	for i := range models {
		m := by[models[i].TargetID]
		models[i].TimeMs = spreadOf(m.TimeMs)
		models[i].Tokens = spreadOf(m.CompletionTokens)
		models[i].PromptTokens = spreadOf(m.PromptTokens)
	}
}

// withGrades returns sum with every model's grades counted afresh (a copy:
// a cached summary is shared). perModel gives each model's item count.
func withGrades(ctx context.Context, st *store.Store, runID int64, sum *Summary) (*Summary, error) {
	counts, err := st.RunGrades(ctx, runID)
	if err != nil {
		return nil, err
	}
	by := map[int64]store.TargetGrades{}
	for _, g := range counts {
		by[g.RunTargetID] = g
	}
	items := map[int64]int64{}
	for _, pm := range sum.PerModel {
		items[pm.TargetID] = pm.Items
	}
	out := *sum
	out.Models = make([]ModelScore, len(sum.Models))
	for i, m := range sum.Models {
		m.Grades = gradesOf(by[m.TargetID], items[m.TargetID])
		out.Models[i] = m
	}
	return &out, nil
}

// Measure is one of a model's spreads with its name for people, in the
// order the pages and the report list them.
type Measure struct {
	Key, Name string
	// Ms: the values are milliseconds (else counts).
	Ms     bool
	Spread *Spread
}

// Measures lists the model's time and token spreads.
func (m ModelScore) Measures() []Measure {
	return []Measure{
		{Key: "time_ms", Name: "Time per answer", Ms: true, Spread: m.TimeMs},
		{Key: "tokens", Name: "Output tokens", Spread: m.Tokens},
		{Key: "prompt_tokens", Name: "Prompt tokens", Spread: m.PromptTokens},
	}
}

// Cells writes the spread as the run page and the report show it: n, mean,
// median, std, min and max; times as durations, token counts with one
// decimal where they are averages; "–" for nothing measured.
func (m Measure) Cells() []string {
	s := m.Spread
	if s == nil {
		return []string{"0", format.None, format.None, format.None, format.None, format.None}
	}
	num := func(v float64, prec int) string {
		if m.Ms {
			return format.Ms(&v)
		}
		return format.Num(&v, prec)
	}
	return []string{strconv.FormatInt(s.N, 10), num(s.Mean, 1), num(s.Median, 1), num(s.Std, 1), num(s.Min, 0), num(s.Max, 0)}
}

// SpreadColumns name Cells' columns, with what each means.
var SpreadColumns = [][2]string{
	{"n", "Answered items that report it"},
	{"Mean", ""},
	{"Median", "The middle value; with an even n, the mean of the two middle values"},
	{"Std", "Population standard deviation over the answered items"},
	{"Min", ""},
	{"Max", ""},
}
