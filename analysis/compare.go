package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"tribunal/format"
	"tribunal/stats"
	"tribunal/store"
)

// Entry is one model of one run: the unit a comparison sets side by side.
type Entry struct {
	RunID    int64  `json:"run_id"`
	RunName  string `json:"run"`
	TargetID int64  `json:"target_id"`
	// Model is the model, or for an agent its name and version (the
	// target's Label), so two versions of one agent stay apart.
	Model    string `json:"model"`
	Provider string `json:"provider"`
	// Version is the model version the run froze (store.RunTarget.Version).
	Version string `json:"version,omitempty"`
	// AgentID is the agent an agent target ran; its versions pair as one model.
	AgentID int64 `json:"agent_id,omitempty"`
	// Tasks holds the entry's results, one per task, in task id order (as
	// Entries and WithTasks set them): summaries, pair tests and task rows
	// all walk them in that order, and a big run has 50,000 per entry,
	// which a map would hash again and again.
	Tasks []store.TaskResult `json:"-"`
	// PassThreshold is the score a task needs to pass in the entry's run.
	PassThreshold float64 `json:"pass_threshold"`
}

// WithoutTasks is the entry without its per-task results: all a run's
// statistics keep of it once computed (a million-item run's entries hold
// half a million results, which nothing shows).
func (e Entry) WithoutTasks() Entry {
	e.Tasks = nil
	return e
}

// Label names an entry for people: "model (run name)".
func (e Entry) Label() string { return fmt.Sprintf("%s (%s)", e.Model, e.RunName) }

// sameSubject reports whether two entries benchmark the same thing: one
// model, or one agent at any of its versions.
func (e Entry) sameSubject(b Entry) bool {
	return e.Model == b.Model || (e.AgentID != 0 && e.AgentID == b.AgentID)
}

// WithTasks is the entry with results as its task results: they become
// its own, put in task id order (the last of a task listed twice counts).
func (e Entry) WithTasks(results []store.TaskResult) Entry {
	e.Tasks = inTaskOrder(results)
	return e
}

// Entries splits a run's task results into one entry per target, each
// entry's in task id order; of a task listed twice for one target, the
// last listed counts. The entries hold copies: results may be reused.
func Entries(run *store.Run, pass float64, results []store.TaskResult) []Entry {
	out := make([]Entry, len(run.Targets))
	index := make(map[int64]int, len(run.Targets))
	for i, t := range run.Targets {
		index[t.ID] = i
	}
	sizes := make([]int, len(run.Targets))
	for _, r := range results {
		if i, ok := index[r.RunTargetID]; ok {
			sizes[i]++
		}
	}
	for i, t := range run.Targets {
		out[i] = Entry{RunID: run.ID, RunName: run.Name, TargetID: t.ID, Model: t.Model, Provider: t.ProviderName, Version: t.Version,
			PassThreshold: pass}
		if sizes[i] > 0 {
			out[i].Tasks = make([]store.TaskResult, 0, sizes[i])
		}
		if t.IsAgent() {
			out[i].Model = t.Label()
			if t.AgentID != nil {
				out[i].AgentID = *t.AgentID
			}
		}
	}
	for _, r := range results {
		if i, ok := index[r.RunTargetID]; ok {
			out[i].Tasks = append(out[i].Tasks, r)
		}
	}
	for i := range out {
		out[i].Tasks = inTaskOrder(out[i].Tasks)
	}
	return out
}

// inTaskOrder sorts results by task id, keeping the last of a task listed
// twice. The store lists them in task order already: then nothing moves.
func inTaskOrder(rs []store.TaskResult) []store.TaskResult {
	byKey := func(a, b store.TaskResult) int { return strings.Compare(a.TaskKey, b.TaskKey) }
	if slices.IsSortedFunc(rs, byKey) && !hasRepeatedKey(rs) {
		return rs
	}
	slices.SortStableFunc(rs, byKey)
	out := rs[:0]
	for i, r := range rs {
		if i+1 < len(rs) && rs[i+1].TaskKey == r.TaskKey {
			continue // a later one of the same task counts
		}
		out = append(out, r)
	}
	return out
}

// hasRepeatedKey reports whether sorted results list a task twice.
func hasRepeatedKey(rs []store.TaskResult) bool {
	for i := 1; i < len(rs); i++ {
		if rs[i].TaskKey == rs[i-1].TaskKey {
			return true
		}
	}
	return false
}

// EntryStats summarises an entry with 95 % confidence intervals (bootstrap over tasks).
type EntryStats struct {
	Entry
	Score    stats.Estimate `json:"score"`
	PassRate stats.Estimate `json:"pass_rate"`
	TimeMs   *float64       `json:"time_ms"`
	TPS      *float64       `json:"tps"`
	CostUSD  *float64       `json:"cost_usd"`
	// Delta is the score difference to the baseline on shared tasks, paired, with its CI.
	Delta *stats.Estimate `json:"delta,omitempty"`
}

// seed fixes the bootstrap, so a page shows the same interval each time.
const seed = 20261126

// bootstrapMax is the most tasks a bootstrap interval is drawn over. Beyond
// it the percentile bootstrap and the normal interval agree closely (the
// central limit theorem), while the bootstrap's cost (2,000 resamples of n)
// would dominate the page; larger samples get the normal interval.
const bootstrapMax = 2000

// MeanCI is the mean with its 95 % interval: bootstrap over tasks, or normal for large n.
func MeanCI(xs []float64) stats.Estimate {
	if len(xs) <= bootstrapMax {
		return stats.MeanCI(xs, seed)
	}
	var sum, sq float64
	for _, x := range xs {
		sum += x
	}
	m := sum / float64(len(xs))
	for _, x := range xs {
		sq += (x - m) * (x - m)
	}
	return normalCI(len(xs), m, sq)
}

// NeedsValues reports whether MeanCI over n values needs the values
// themselves (a bootstrap), rather than their sums.
func NeedsValues(n int64) bool { return n <= bootstrapMax }

// MeanCIOfSums is MeanCI over n values known by their sum and the sum of
// their squares, or false when n is small enough for the bootstrap, which
// needs the values themselves.
func MeanCIOfSums(n int64, sum, sumSq float64) (stats.Estimate, bool) {
	if NeedsValues(n) {
		return stats.Estimate{}, false
	}
	m := sum / float64(n)
	return normalCI(int(n), m, max(sumSq-sum*m, 0)), true
}

// normalCI is the normal 95 % interval of the mean m of n values whose
// squared deviations from it sum to sq.
func normalCI(n int, m, sq float64) stats.Estimate {
	half := 1.959964 * math.Sqrt(sq/float64(n-1)/float64(n))
	return stats.Estimate{Mean: m, Lo: m - half, Hi: m + half, N: n}
}

// pairedCI is the mean paired difference a−b with its 95 % interval.
func pairedCI(a, b []float64) stats.Estimate {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return MeanCI(d)
}

func taskScore(r store.TaskResult) (float64, bool) {
	if r.Score == nil {
		return 0, false
	}
	return *r.Score, true
}

func taskPass(r store.TaskResult) (float64, bool) {
	if r.Scored == 0 {
		return 0, false
	}
	return float64(r.Passed) / float64(r.Scored), true
}

// values collects an entry's per-task values in task-id order.
func values(e Entry, get func(store.TaskResult) (float64, bool)) []float64 {
	out := make([]float64, 0, len(e.Tasks))
	for _, r := range e.Tasks {
		if v, ok := get(r); ok {
			out = append(out, v)
		}
	}
	return out
}

// Baselines picks each entry's baseline in the baseline run: the entry of
// the same model there, else that run's first entry; -1 for the baseline
// run's own entries, or when there is no baseline run.
func Baselines(entries []Entry, baselineRun int64) []int {
	out := make([]int, len(entries))
	first := -1
	for i, e := range entries {
		if e.RunID == baselineRun && first < 0 {
			first = i
		}
	}
	for i, e := range entries {
		out[i] = -1
		if first < 0 || e.RunID == baselineRun {
			continue
		}
		out[i] = first
		for j, b := range entries {
			if b.RunID == baselineRun && e.sameSubject(b) {
				out[i] = j
				break
			}
		}
	}
	return out
}

// Summarise computes each entry's estimates, and its paired delta against
// its baseline entry (baselines[i], -1 for none; nil for no baselines).
func Summarise(entries []Entry, baselines []int) []EntryStats {
	out := make([]EntryStats, len(entries))
	for i, e := range entries {
		es := EntryStats{Entry: e, Score: MeanCI(values(e, taskScore)), PassRate: MeanCI(values(e, taskPass))}
		var t, tps, cost, nt, ntps float64
		var hasCost bool
		// In task order: sums of floats depend on their order, and the
		// same run must give the same figures each time.
		for _, r := range e.Tasks {
			if r.TimeMs != nil {
				t += *r.TimeMs
				nt++
			}
			if r.TPS != nil {
				tps += *r.TPS
				ntps++
			}
			if r.CostUSD != nil {
				cost += *r.CostUSD
				hasCost = true
			}
		}
		if nt > 0 {
			v := t / nt
			es.TimeMs = &v
		}
		if ntps > 0 {
			v := tps / ntps
			es.TPS = &v
		}
		if hasCost {
			es.CostUSD = &cost
		}
		if i < len(baselines) && baselines[i] >= 0 {
			a, b := paired(e, entries[baselines[i]], taskScore)
			if len(a) > 0 {
				d := pairedCI(a, b)
				es.Delta = &d
			}
		}
		out[i] = es
	}
	return out
}

// paired returns the two entries' values on the tasks both have, in task order.
func paired(a, b Entry, get func(store.TaskResult) (float64, bool)) (xs, ys []float64) {
	return pairedColumns(columnOf(a, taskKeys(a), get), columnOf(b, taskKeys(b), get))
}

// column is an entry's value per task, in task order; ok says which tasks
// have one. PairTests reads each entry's columns once rather than reading
// every task's value again for each of its pairs (45 pairs of ten models,
// on 50,000 tasks), and walks keys and values packed together.
type column struct {
	keys []string
	v    []float64
	ok   []bool
}

// taskKeys lists the entry's task ids in order.
func taskKeys(e Entry) []string {
	keys := make([]string, len(e.Tasks))
	for i, r := range e.Tasks {
		keys[i] = r.TaskKey
	}
	return keys
}

// columnOf is e's column of get's values; keys are e's task keys.
func columnOf(e Entry, keys []string, get func(store.TaskResult) (float64, bool)) column {
	c := column{keys: keys, v: make([]float64, len(e.Tasks)), ok: make([]bool, len(e.Tasks))}
	for i, r := range e.Tasks {
		c.v[i], c.ok[i] = get(r)
	}
	return c
}

// pairedColumns returns two columns' values on the tasks both have values
// for, in task order: a merge of their sorted keys, or, when both have the
// same tasks (every model of one run that answered them all), the columns
// side by side.
func pairedColumns(a, b column) (xs, ys []float64) {
	n := min(len(a.keys), len(b.keys))
	xs, ys = make([]float64, 0, n), make([]float64, 0, n)
	if slices.Equal(a.keys, b.keys) {
		for i := range a.keys {
			if a.ok[i] && b.ok[i] {
				xs = append(xs, a.v[i])
				ys = append(ys, b.v[i])
			}
		}
		return xs, ys
	}
	for i, j := 0, 0; i < len(a.keys) && j < len(b.keys); {
		switch c := strings.Compare(a.keys[i], b.keys[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			if a.ok[i] && b.ok[j] {
				xs = append(xs, a.v[i])
				ys = append(ys, b.v[j])
			}
			i++
			j++
		}
	}
	return xs, ys
}

// PairTest is model A against model B on the tasks both answered.
type PairTest struct {
	A      string         `json:"a"`
	B      string         `json:"b"`
	N      int            `json:"n"`
	Diff   stats.Estimate `json:"diff"` // mean score of A minus B, paired, with its CI
	PScore float64        `json:"p_wilcoxon"`
	PPass  float64        `json:"p_mcnemar"`
	PHolm  float64        `json:"p_holm"` // the Wilcoxon p, Holm-adjusted over every pair compared
	// EnoughData: the pair shares at least MinItems scored tasks; without, the
	// p-values mean nothing and the verdict says so.
	EnoughData bool   `json:"enough_data"`
	Verdict    string `json:"verdict"`
	// Pairing says what the two share: PairSameModel, PairSameRun or neither ("").
	Pairing string `json:"pairing,omitempty"`
}

// What a pair of entries shares; PairTests lists same-model pairs first
// (the question a comparison of runs asks), then models within one run.
const (
	PairSameModel = "same_model" // one model in two runs
	PairSameRun   = "same_run"   // two models of one run
)

// PairingTitle heads a group of verdicts by what its pairs share, as the
// compare page and the comparison report both show it.
func PairingTitle(p string) string {
	switch p {
	case PairSameModel:
		return "Same model across runs"
	case PairSameRun:
		return "Models within a run"
	}
	return "Other pairs"
}

func pairing(a, b Entry) string {
	switch {
	case a.sameSubject(b) && a.RunID != b.RunID:
		return PairSameModel
	case a.RunID == b.RunID:
		return PairSameRun
	}
	return ""
}

func pairRank(p string) int {
	switch p {
	case PairSameModel:
		return 0
	case PairSameRun:
		return 1
	}
	return 2
}

// MinItems is the fewest scored items (tasks, for a pair) a model needs
// before Tribunal calls it better or best: fewer, and a pick is noise.
const MinItems = 5

// alpha is the significance level of the verdicts.
const alpha = 0.05

// PairTests compares every pair of entries on shared tasks: a paired
// bootstrap CI of the score difference, Wilcoxon's signed-rank test on the
// scores, McNemar's test on pass/fail, and Holm's correction over all pairs.
func PairTests(entries []Entry) []PairTest {
	var out []PairTest
	scores, passes := make([]column, len(entries)), make([]column, len(entries))
	for i, e := range entries {
		keys := taskKeys(e)
		scores[i], passes[i] = columnOf(e, keys, taskScore), columnOf(e, keys, taskPass)
	}
	for i := 0; i < len(entries); i++ {
		for j := i + 1; j < len(entries); j++ {
			a, b := entries[i], entries[j]
			xs, ys := pairedColumns(scores[i], scores[j])
			pt := PairTest{A: a.Label(), B: b.Label(), N: len(xs), PScore: 1, PPass: 1, EnoughData: len(xs) >= MinItems, Pairing: pairing(a, b)}
			if len(xs) > 0 {
				pt.Diff = pairedCI(xs, ys)
				_, pt.PScore = stats.Wilcoxon(xs, ys)
				var onlyA, onlyB int
				pa, pb := pairedColumns(passes[i], passes[j])
				for k := range pa {
					switch passA, passB := pa[k] >= 0.5, pb[k] >= 0.5; {
					case passA && !passB:
						onlyA++
					case passB && !passA:
						onlyB++
					}
				}
				pt.PPass = stats.McNemar(onlyA, onlyB)
			}
			out = append(out, pt)
		}
	}
	ps := make([]float64, len(out))
	for i, p := range out {
		ps[i] = p.PScore
	}
	for i, p := range stats.Holm(ps) {
		out[i].PHolm = p
		out[i].Verdict = verdict(out[i])
	}
	slices.SortStableFunc(out, func(x, y PairTest) int { return cmp.Compare(pairRank(x.Pairing), pairRank(y.Pairing)) })
	return out
}

func verdict(p PairTest) string {
	switch {
	case p.N == 0:
		return fmt.Sprintf("%s and %s share no scored task", p.A, p.B)
	case !p.EnoughData:
		return fmt.Sprintf("Not enough data yet to compare %s and %s: %d shared scored tasks (at least %d needed)", p.A, p.B, p.N, MinItems)
	case p.PHolm < alpha && p.Diff.Mean > 0:
		return fmt.Sprintf("%s beats %s on these tasks (p = %s, n = %d)", p.A, p.B, fmtP(p.PHolm), p.N)
	case p.PHolm < alpha && p.Diff.Mean < 0:
		return fmt.Sprintf("%s beats %s on these tasks (p = %s, n = %d)", p.B, p.A, fmtP(p.PHolm), p.N)
	}
	return fmt.Sprintf("No significant difference between %s and %s (p = %s, n = %d)", p.A, p.B, fmtP(p.PHolm), p.N)
}

func fmtP(p float64) string { return format.P(p) }

// TaskRow is one task across the compared entries.
type TaskRow struct {
	TaskID   string              `json:"task_id"`
	Category string              `json:"category"`
	Results  []*store.TaskResult `json:"results"` // per entry; nil where the entry lacks the task
	// Disagree: some entries pass the task and some fail it.
	Disagree bool `json:"disagree"`
	// Regressed: some entry scores lower than the baseline on it.
	Regressed bool `json:"regressed"`
	// RegressedIn lists those entries (their indexes).
	RegressedIn []int `json:"regressed_in,omitempty"`
}

// TaskAnswers is a task row with each entry's answer (its first repeat).
type TaskAnswers struct {
	TaskRow
	Question string    `json:"question"`
	Answers  []*string `json:"answers"`  // per entry; nil where it has none
	ItemIDs  []int64   `json:"item_ids"` // per entry, the answer's item; 0 where none
}

// TaskFilter narrows the task rows of a comparison.
type TaskFilter struct {
	Category     string
	Disagreement bool
	Regression   bool
}

// TaskRows lines up every task of the entries, filtered, in task-id order.
func TaskRows(entries []Entry, baselines []int, f TaskFilter) []TaskRow {
	var keys []string
	for _, e := range entries {
		for _, r := range e.Tasks {
			keys = append(keys, r.TaskKey)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	next := make([]int, len(entries)) // each entry's first task not yet lined up
	var out []TaskRow
	for _, k := range keys {
		row := TaskRow{TaskID: k, Results: make([]*store.TaskResult, len(entries))}
		var pass, fail bool
		for i, e := range entries {
			if next[i] >= len(e.Tasks) || e.Tasks[next[i]].TaskKey != k {
				continue
			}
			r := e.Tasks[next[i]]
			next[i]++
			row.Results[i] = &r
			row.Category = cmp.Or(row.Category, r.Category)
			if p, ok := taskPass(r); ok {
				pass = pass || p >= 0.5
				fail = fail || p < 0.5
			}
		}
		row.Disagree = pass && fail
		for i, r := range row.Results {
			if i >= len(baselines) || baselines[i] < 0 || r == nil || r.Score == nil {
				continue
			}
			if base := row.Results[baselines[i]]; base != nil && base.Score != nil && *r.Score < *base.Score-1e-9 {
				row.Regressed = true
				row.RegressedIn = append(row.RegressedIn, i)
			}
		}
		if (f.Category != "" && row.Category != f.Category) || (f.Disagreement && !row.Disagree) || (f.Regression && !row.Regressed) {
			continue
		}
		out = append(out, row)
	}
	return out
}

// CategoryGrid is the entries' mean score per category.
func CategoryGrid(entries []Entry) (cats []string, grid [][]float64) {
	set := map[string]bool{}
	for _, e := range entries {
		for _, r := range e.Tasks {
			set[r.Category] = true
		}
	}
	cats = slices.Sorted(maps.Keys(set))
	col := make(map[string]int, len(cats))
	for j, c := range cats {
		col[c] = j
	}
	grid = make([][]float64, len(entries))
	sum, n := make([]float64, len(cats)), make([]float64, len(cats))
	for i, e := range entries {
		clear(sum)
		clear(n)
		for _, r := range e.Tasks { // in order: see Summarise
			if r.Score != nil {
				j := col[r.Category]
				sum[j] += *r.Score
				n[j]++
			}
		}
		grid[i] = make([]float64, len(cats))
		for j := range cats {
			grid[i][j] = math.NaN()
			if n[j] > 0 {
				grid[i][j] = sum[j] / n[j]
			}
		}
	}
	return cats, grid
}
