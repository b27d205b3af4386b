package runs

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"tribunal/analysis"
	"tribunal/stats"
	"tribunal/store"
)

// MinScored is how many scored items every compared model needs before
// Tribunal names a best model or a winner between two: with fewer, a pick
// is noise dressed as a result.
const MinScored = analysis.MinItems

// perTaskLimit bounds the per-task aggregates a summary carries.
const perTaskLimit = 200

// Summary is a run's results so far: what the run page, the API, the CLI
// and the report show. Every figure in it is computed here.
type Summary struct {
	Overall  store.Stats        `json:"overall"`
	PerModel []store.ModelStats `json:"per_model"`
	// PerTask covers the run's first tasks (by task_id).
	PerTask []store.TaskStats `json:"-"`
	// Tasks is how many tasks the run has in all.
	Tasks int64 `json:"tasks"`
	// PassThreshold is the score an item needs to pass.
	PassThreshold float64          `json:"pass_threshold"`
	Breakdown     *store.Breakdown `json:"breakdown"`
	// UseCases totals each use case per target above its categories, with costs.
	UseCases []UseCaseTotals `json:"usecases"`
	// Models holds each target's overall (0–100) with its interval.
	Models []ModelScore `json:"models"`
	// PerMetric lists every judge metric and check with each target's mean and n.
	PerMetric []MetricRow `json:"per_metric"`
	Best      Best        `json:"best"`
	// BestOverall and BestValue repeat Best's picks (0: none).
	BestOverall int64 `json:"best_overall_target_id,omitempty"`
	BestValue   int64 `json:"best_value_target_id,omitempty"`
	// Violations counts the judges' violations per model and category; nil
	// when no judge of the run lists violations.
	Violations *Violations `json:"violations,omitempty"`
}

// ModelScore is one target's overall score and what it cost.
type ModelScore struct {
	TargetID int64 `json:"target_id"`
	// Overall is the mean item overall, 0–100 (see ItemWeights); nil before any item is scored.
	Overall *float64 `json:"overall"`
	// OverallCI is Overall's 95 % interval over tasks (repeats averaged first).
	OverallCI *stats.Estimate `json:"overall_ci"`
	// Scored counts the target's items with an overall.
	Scored int64 `json:"scored"`
	// PerDollar is Overall per USD spent per item; nil when the price is unknown.
	PerDollar *float64 `json:"score_per_dollar"`
	// TimeMs, Tokens (completion) and PromptTokens spread over the model's
	// answered items (see Spread); nil before any answer.
	TimeMs       *Spread `json:"time_ms"`
	Tokens       *Spread `json:"tokens"`
	PromptTokens *Spread `json:"prompt_tokens"`
	// Grades counts the model's human grades.
	Grades Grades `json:"grades"`
	// Tools are an agent target's tool analytics; nil for a model target.
	Tools *ToolStats `json:"tools,omitempty"`
}

// MetricRow is one metric of one source across the run's targets.
type MetricRow struct {
	// Source is "judge:<id>", "check:<type>" or "measure"; Name says it for people.
	Source string `json:"source"`
	Name   string `json:"source_name"`
	Metric string `json:"metric"`
	// Lo and Hi are the metric's scale.
	Lo float64 `json:"scale_min"`
	Hi float64 `json:"scale_max"`
	// Weight is the metric's weight in an item's overall; 0 when it does not count.
	Weight float64      `json:"weight"`
	Cells  []MetricCell `json:"per_target"`
}

// MetricCell is one target's mean of one metric.
type MetricCell struct {
	TargetID int64    `json:"target_id"`
	Mean     *float64 `json:"mean"`
	N        int64    `json:"n"`
}

// Best names the best model overall and the best value (overall per dollar).
type Best struct {
	OverallTargetID int64 `json:"overall_target_id,omitempty"`
	ValueTargetID   int64 `json:"value_target_id,omitempty"`
	// Provisional: the run is still going, so the picks may change.
	Provisional bool `json:"provisional"`
	// Scored items so far, of Total.
	Scored int64 `json:"scored"`
	Total  int64 `json:"total"`
	// Note says in words why nothing is picked, or that the pick is provisional.
	Note string `json:"note,omitempty"`
}

// Summary returns the run's summary: from memory while its item counts
// stand still, else, for an ended run, from the snapshot stored when it
// ended (any process may have computed it), else computed afresh. Its
// grade counts are always those of the run's grades now: a grade recounts
// them (a scan of the grades alone) and, for an ended run, restores the
// snapshot.
func (s *Service) Summary(ctx context.Context, run *store.Run, prog Progress) (*Summary, error) {
	grades, err := s.store.GradeStamp(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	return s.summary(ctx, run, prog, &grades)
}

// summary is Summary for the grade stamp grades; with nil, any grade counts
// will do (the runs list shows none, and so spares itself the stamp).
func (s *Service) summary(ctx context.Context, run *store.Run, prog Progress, grades *string) (*Summary, error) {
	base := summaryStamp(run, prog)
	if cached, stamp, ok := s.summaries.entry(run.ID); ok {
		cbase, cgrades := splitStamp(stamp)
		if cbase == base || (run.Status.Active() && s.pace.recent(run.ID, s.now())) {
			if grades == nil || cgrades == *grades {
				return cached, nil
			}
			// The figures stand; only the grades moved.
			stamp = gradedStamp(cbase, *grades)
			sum, err := regrade(ctx, s.store, run, cached, stamp, cbase == base && !run.Status.Active())
			if err != nil {
				return nil, err
			}
			s.summaries.put(run.ID, stamp, sum)
			return sum, nil
		}
	}
	start := s.now()
	sum, stamp, err := summaryOf(ctx, s.store, run, prog, base, grades)
	if err != nil {
		return nil, err
	}
	s.summaries.put(run.ID, stamp, sum)
	s.pace.done(run.ID, start, s.now())
	return sum, nil
}

// pace keeps a live run's summary from being computed back to back: on a
// large run a summary is a scan of seconds, and while the run moves every
// view would start one. A live summary is provisional anyway.
type pace struct {
	mu   sync.Mutex
	last map[int64][2]time.Time // when the last computation started and ended
}

// recent reports whether the run's summary was computed within four times
// as long as computing it took: scans then take at most a fifth of the time.
func (p *pace) recent(runID int64, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.last[runID]
	return ok && now.Sub(l[1]) < 4*l[1].Sub(l[0])
}

func (p *pace) done(runID int64, start, end time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil || len(p.last) >= stampCacheSize {
		p.last = map[int64][2]time.Time{}
	}
	p.last[runID] = [2]time.Time{start, end}
}

// Snapshot is an ended run's summary, stored (or computed and stored, so
// that its first view in any process needs no scan): the watch evaluator
// reads the run's metrics from it. While this process's engine stores the
// run's statistics (StoreEnded), it waits for the summary and then reads
// it for the item counts the engine ended the run with: on a large run
// its own count of the items, beside the engine's scans, cost them a
// second.
func Snapshot(ctx context.Context, st *store.Store, run *store.Run) (*Summary, error) {
	counts, ok, err := ending.wait(ctx, st, run.ID)
	if err != nil {
		return nil, err
	}
	if ok {
		return summaryFor(ctx, st, run, counts)
	}
	return summaryNow(ctx, st, run)
}

// ending holds the runs whose statistics this process is storing (StoreEnded).
var ending endingRuns

type endingRuns struct{ runs sync.Map } // "store run" → *endingRun

// endingRun is a run whose statistics are being stored for counts; stored
// is closed once its summary is.
type endingRun struct {
	counts store.Progress
	stored chan struct{}
}

func endingKey(st *store.Store, runID int64) string { return fmt.Sprintf("%p %d", st, runID) }

// start marks the run's statistics as being stored for counts until done
// is called, and its summary until stored (or done) is first called.
func (e *endingRuns) start(st *store.Store, runID int64, counts store.Progress) (stored, done func()) {
	key, r := endingKey(st, runID), &endingRun{counts: counts, stored: make(chan struct{})}
	e.runs.Store(key, r)
	stored = sync.OnceFunc(func() { close(r.stored) })
	return stored, func() {
		stored()
		e.runs.CompareAndDelete(key, r)
	}
}

// wait waits until the run's summary is stored, if its statistics are
// being, and returns the counts they are stored for (ok).
func (e *endingRuns) wait(ctx context.Context, st *store.Store, runID int64) (counts store.Progress, ok bool, err error) {
	v, ok := e.runs.Load(endingKey(st, runID))
	if !ok {
		return store.Progress{}, false, nil
	}
	r := v.(*endingRun)
	select {
	case <-r.stored:
		return r.counts, true, nil
	case <-ctx.Done():
		return store.Progress{}, false, ctx.Err()
	}
}

// StoreSummary computes the ended run runID's summary and stores it, as
// StoreEnded does for the engine that ends a run, counting its items
// itself (the bench stores a run's statistics with it and StoreAnalysis).
func StoreSummary(ctx context.Context, st *store.Store, runID int64) error {
	run, err := st.Run(ctx, runID)
	if err != nil {
		return err
	}
	_, err = summaryNow(ctx, st, run)
	return err
}

// summaryShape changes when Summary gains figures, so that summaries
// stored in an older shape are computed again rather than shown without them.
const summaryShape = "v5"

// summaryStamp is what a summary's figures depend on: the run's status and
// item counts. Its grade counts depend on the grade stamp as well (gradedStamp).
func summaryStamp(run *store.Run, prog Progress) string {
	return fmt.Sprint(summaryShape, " ", run.Status, prog.ByStatus)
}

const gradeSep = " | grades "

// gradedStamp is a summary's whole stamp: its figures' and its grades'.
func gradedStamp(base, grades string) string { return base + gradeSep + grades }

func splitStamp(stamp string) (base, grades string) {
	base, grades, _ = strings.Cut(stamp, gradeSep)
	return base, grades
}

// snapshot is the stored form of a Summary: its per-task rows too.
type snapshot struct {
	*Summary
	PerTask []store.TaskStats `json:"per_task"`
}

// summaryOf reads an ended run's stored summary for base (recounting its
// grades when they moved), or computes the summary (and stores it when the
// run has ended). It returns the summary and its whole stamp. With grades
// nil, a stored summary's grade counts are taken as they are.
func summaryOf(ctx context.Context, st *store.Store, run *store.Run, prog Progress, base string, grades *string) (*Summary, string, error) {
	ended := !run.Status.Active()
	if ended {
		stamp, body, err := st.SummarySnapshot(ctx, run.ID)
		if err != nil {
			return nil, "", err
		}
		if sbase, sgrades := splitStamp(stamp); body != nil && sbase == base {
			snap := snapshot{Summary: &Summary{}}
			if err := json.Unmarshal(body, &snap); err == nil && (snap.UseCases != nil || snap.Breakdown == nil) {
				snap.Summary.PerTask = snap.PerTask
				if grades == nil || sgrades == *grades {
					return snap.Summary, stamp, nil
				}
				stamp = gradedStamp(base, *grades)
				sum, err := regrade(ctx, st, run, snap.Summary, stamp, true)
				return sum, stamp, err
			}
			// An older shape: compute it again below.
		}
	}
	if grades == nil {
		g, err := st.GradeStamp(ctx, run.ID)
		if err != nil {
			return nil, "", err
		}
		grades = &g
	}
	// The grade stamp is read before the grades are counted: a grade landing
	// in between leaves an older stamp, which only recounts them next time.
	stamp := gradedStamp(base, *grades)
	// Keyed by the store too (a process may open several databases), and
	// computed apart from the first caller's context, whose cancellation
	// must not fail the others waiting on it.
	v, err, _ := computing.Do(fmt.Sprintf("%p %d %s", st, run.ID, stamp), func() (any, error) {
		ctx := context.WithoutCancel(ctx)
		sum, err := summarize(ctx, st, run, prog)
		if err != nil || !ended {
			return sum, err
		}
		return sum, saveSnapshot(ctx, st, run.ID, stamp, sum)
	})
	if err != nil {
		return nil, "", err
	}
	return v.(*Summary), stamp, nil
}

// computing shares one computation of a run's summary among the callers
// that need it at once: as a run ends, the watch evaluator (which stores
// its summary, a second or so later) and the run's first viewers would
// otherwise each scan the run, each holding its rows. Summaries are never
// changed once made, so callers may share one.
var computing singleflight.Group

// regrade recounts sum's grades, and stores the result for stamp when save.
func regrade(ctx context.Context, st *store.Store, run *store.Run, sum *Summary, stamp string, save bool) (*Summary, error) {
	sum, err := withGrades(ctx, st, run.ID, sum)
	if err != nil || !save {
		return sum, err
	}
	return sum, saveSnapshot(ctx, st, run.ID, stamp, sum)
}

func saveSnapshot(ctx context.Context, st *store.Store, runID int64, stamp string, sum *Summary) error {
	body, err := json.Marshal(snapshot{Summary: sum, PerTask: sum.PerTask})
	if err != nil {
		return fmt.Errorf("runs: encode summary of run %d: %w", runID, err)
	}
	return st.SaveSummarySnapshot(ctx, runID, stamp, body)
}

func summarize(ctx context.Context, st *store.Store, run *store.Run, prog Progress) (*Summary, error) {
	// The scans are independent: on PostgreSQL they run side by side
	// on their own connections (SQLite's one connection takes them in turn).
	var figures *store.RunFigures
	var metrics []store.MetricMean
	var overalls map[int64]targetOverall
	var tools map[int64]*ToolStats
	var violations *Violations
	weights := ItemWeights(run)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		figures, err = st.RunFigures(gctx, run.ID, perTaskLimit)
		return err
	})
	g.Go(func() (err error) {
		metrics, err = st.RunMetricMeans(gctx, run.ID)
		return err
	})
	g.Go(func() (err error) {
		overalls, err = overallsOf(gctx, st, run, prog.Total, weights)
		return err
	})
	g.Go(func() (err error) {
		tools, err = toolStatsOf(gctx, st, run)
		return err
	})
	g.Go(func() (err error) {
		violations, err = violationsOf(gctx, st, run)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	base, b := figures.Summary, &store.Breakdown{Metrics: metrics, Groups: figures.Groups}
	sum := &Summary{Overall: base.Overall, PerModel: base.PerModel, PerTask: base.PerTask, Tasks: base.Tasks,
		PassThreshold: base.PassThreshold, Breakdown: b, Violations: violations, UseCases: useCaseTotals(b.Groups)}
	sum.Models = modelScores(base.PerModel, overalls)
	addMeasures(sum.Models, figures.Measures)
	for i := range sum.Models {
		sum.Models[i].Tools = tools[sum.Models[i].TargetID]
	}
	sum.PerMetric = metricRows(run, b.Metrics, weights)
	sum.Best = pickBest(run, sum.Models, prog)
	sum.BestOverall, sum.BestValue = sum.Best.OverallTargetID, sum.Best.ValueTargetID
	return withGrades(ctx, st, run.ID, sum)
}

// targetOverall is a target's overall, 0–100, with its 95 % interval over
// tasks (nil while none of its items has one), and the items it averages.
type targetOverall struct {
	est    *stats.Estimate
	scored int64
}

// overallsOf computes each target's overall from the run's items (items of
// them in all). For a target with many tasks the database sums their
// overalls, which is all the normal interval needs; only the tasks of a
// target with few, whose bootstrap needs each, are read: every target's in
// one read when the run's items, over its targets and repeats, are that
// few tasks. Which way a target goes changes only the cost (an imported
// run's targets may have fewer items than others): analysis.MeanCI picks
// the interval by the count of values either way.
func overallsOf(ctx context.Context, st *store.Store, run *store.Run, items int64, weights []store.SourceWeight) (map[int64]targetOverall, error) {
	out := map[int64]targetOverall{}
	if analysis.NeedsValues(items / int64(max(len(run.Targets), 1)*max(run.Repeats, 1))) {
		return out, overallsOfTasks(ctx, st, run.ID, weights, nil, out)
	}
	sums, err := st.TargetOveralls(ctx, run.ID, weights)
	if err != nil {
		return nil, err
	}
	var few []int64
	for _, s := range sums {
		if est, ok := analysis.MeanCIOfSums(s.Tasks, 100*s.Sum, 100*100*s.SumSq); ok {
			out[s.RunTargetID] = targetOverall{est: &est, scored: s.Items}
		} else {
			few = append(few, s.RunTargetID)
		}
	}
	if len(few) == 0 {
		return out, nil
	}
	return out, overallsOfTasks(ctx, st, run.ID, weights, few, out)
}

// overallsOfTasks puts into out the overalls of the run's targets given
// (every target's for none) from their task overalls.
func overallsOfTasks(ctx context.Context, st *store.Store, runID int64, weights []store.SourceWeight, targets []int64, out map[int64]targetOverall) error {
	tasks, err := st.TaskOveralls(ctx, runID, weights, targets...)
	if err != nil {
		return err
	}
	byTarget := map[int64][]float64{}
	scored := map[int64]int64{}
	for _, t := range tasks {
		byTarget[t.RunTargetID] = append(byTarget[t.RunTargetID], t.Overall*100)
		scored[t.RunTargetID] += t.Items
	}
	for id, xs := range byTarget {
		est := analysis.MeanCI(xs)
		out[id] = targetOverall{est: &est, scored: scored[id]}
	}
	return nil
}

// modelScores gives each target its overall and the overall per dollar.
func modelScores(perModel []store.ModelStats, overalls map[int64]targetOverall) []ModelScore {
	out := make([]ModelScore, 0, len(perModel))
	for _, pm := range perModel {
		o := overalls[pm.TargetID]
		ms := ModelScore{TargetID: pm.TargetID, Scored: o.scored}
		if est := o.est; est != nil {
			ms.Overall, ms.OverallCI = &est.Mean, est
			if pm.CostUSD != nil && *pm.CostUSD > 0 && pm.Items > 0 {
				pd := est.Mean / (*pm.CostUSD / float64(pm.Items))
				ms.PerDollar = &pd
			}
		}
		out = append(out, ms)
	}
	return out
}

// pickBest names the best overall and best value, only once every target
// has MinScored scored items; while the run is active the picks are
// provisional. A tie at the top picks nobody.
func pickBest(run *store.Run, models []ModelScore, prog Progress) Best {
	b := Best{Total: prog.Total, Provisional: run.Status.Active()}
	for _, m := range models {
		b.Scored += m.Scored
	}
	if run.Options.Pairwise {
		b.Note = "a pairwise run ranks its models on the leaderboard"
		return b
	}
	labels := map[int64]string{}
	for _, t := range run.Targets {
		labels[t.ID] = t.Model
	}
	// Once the run has ended, a model none of whose items scored (its
	// provider was down, say) has nothing to compare: it is left out, and
	// said so, rather than keeping the others from a verdict for ever.
	var compared []ModelScore
	var left []string
	for _, m := range models {
		if m.Scored == 0 && !b.Provisional {
			left = append(left, labels[m.TargetID])
			continue
		}
		compared = append(compared, m)
	}
	leftOut := ""
	if len(left) > 0 {
		leftOut = fmt.Sprintf("; %s left out: no scored item", strings.Join(left, ", "))
	}
	for _, m := range compared {
		if m.Scored < MinScored {
			b.Note = fmt.Sprintf("not enough data yet: %s has %d scored items (at least %d needed)%s", labels[m.TargetID], m.Scored, MinScored, leftOut)
			return b
		}
	}
	if len(compared) < 2 {
		b.Note = "fewer than two models scored: nothing to compare" + leftOut
		return b
	}
	models = compared
	pick := func(get func(ModelScore) *float64) int64 {
		var best int64
		var top float64
		tie := false
		for _, m := range models {
			switch v := get(m); {
			case v == nil:
			case best == 0 || *v > top:
				best, top, tie = m.TargetID, *v, false
			case *v == top:
				tie = true
			}
		}
		if tie {
			return 0
		}
		return best
	}
	b.OverallTargetID = pick(func(m ModelScore) *float64 { return m.Overall })
	b.ValueTargetID = pick(func(m ModelScore) *float64 { return m.PerDollar })
	switch {
	case b.Provisional:
		b.Note = fmt.Sprintf("provisional: %d of %d judged", b.Scored, b.Total)
	case leftOut != "":
		b.Note = strings.TrimPrefix(leftOut, "; ")
	}
	return b
}

// metricRows lays the breakdown out as one row per (source, metric), judges
// first in panel order, then checks, then measured values.
func metricRows(run *store.Run, metrics []store.MetricMean, weights []store.SourceWeight) []MetricRow {
	names := map[string]string{}
	judgeOrder := map[string]int{}
	scale := map[string][2]float64{}
	multi := map[string]bool{}
	for i, j := range run.Judges {
		names[j.Source()] = j.Name
		judgeOrder[j.Source()] = i
		scale[j.Source()] = [2]float64{float64(j.ScaleMin), float64(j.ScaleMax)}
		multi[j.Source()] = len(j.Metrics) > 1
	}
	index := map[[2]string]int{}
	var rows []MetricRow
	for _, m := range metrics {
		if m.Metric == "score" && multi[m.Source] {
			continue // the judge's weighted mean of its metrics, shown per judge
		}
		k := [2]string{m.Source, m.Metric}
		i, ok := index[k]
		if !ok {
			r := MetricRow{Source: m.Source, Metric: m.Metric, Name: names[m.Source], Lo: 0, Hi: 1, Weight: weightOf(weights, m.Source, m.Metric)}
			switch {
			case strings.HasPrefix(m.Source, "judge:"):
				r.Lo, r.Hi = scale[m.Source][0], scale[m.Source][1]
			case strings.HasPrefix(m.Source, "check:"):
				r.Name = "check"
			default:
				r.Name, r.Hi = "measured", 0
			}
			for _, t := range run.Targets {
				r.Cells = append(r.Cells, MetricCell{TargetID: t.ID})
			}
			i = len(rows)
			index[k] = i
			rows = append(rows, r)
		}
		for c := range rows[i].Cells {
			if rows[i].Cells[c].TargetID == m.RunTargetID {
				mean := m.Mean
				rows[i].Cells[c].Mean, rows[i].Cells[c].N = &mean, m.N
			}
		}
	}
	rank := func(r MetricRow) int {
		switch {
		case strings.HasPrefix(r.Source, "judge:"):
			return judgeOrder[r.Source]
		case strings.HasPrefix(r.Source, "check:"):
			return 1000
		}
		return 2000
	}
	slices.SortStableFunc(rows, func(a, b MetricRow) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Source, b.Source))
	})
	return rows
}
