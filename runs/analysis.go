package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"tribunal/analysis"
	"tribunal/store"
)

// Analysis is a run's statistics: judge agreement (kappa) and the run
// report (means with intervals, paired tests, consistency, judge reliability).
type Analysis struct {
	Agreement analysis.Report
	Report    *analysis.RunReport
}

// Agreement is the run's judge–human and judge–judge agreement, computed now.
func (s *Service) Agreement(ctx context.Context, run *store.Run) (analysis.Report, error) {
	return agreementOf(ctx, s.store, run)
}

func agreementOf(ctx context.Context, st *store.Store, run *store.Run) (analysis.Report, error) {
	in, err := st.RunJudgeAgreement(ctx, run.ID)
	if err != nil {
		return analysis.Report{}, err
	}
	return analysis.Agreements(run.Judges, in), nil
}

// Analysis returns the run's statistics: the cached ones, fresh when they
// match the run's current items and grades, else an ended run's stored ones
// (StoreAnalysis) when they match; stale or missing ones are computed again
// only when compute is set, since a pass over every item is too slow for a
// page to wait on.
func (s *Service) Analysis(ctx context.Context, run *store.Run, prog Progress, compute bool) (a Analysis, fresh, ok bool, err error) {
	grades, err := s.store.GradeStamp(ctx, run.ID)
	if err != nil {
		return a, false, false, err
	}
	stamp := analysisStamp(run, prog, grades)
	if a, fresh, ok = s.analyses.get(run.ID, stamp); fresh {
		return a, true, true, nil
	}
	if !run.Status.Active() {
		stored, found, err := storedAnalysis(ctx, s.store, run.ID, stamp)
		if err != nil {
			return Analysis{}, false, false, err
		}
		if found {
			s.analyses.put(run.ID, stamp, stored)
			return stored, true, true, nil
		}
	}
	if !compute {
		return a, false, ok, nil
	}
	if a, err = analysisOf(ctx, s.store, run, stamp); err != nil {
		return Analysis{}, false, false, err
	}
	s.analyses.put(run.ID, stamp, a)
	return a, true, true, nil
}

// StoreEnded is the engine's RunEndedFunc: it stores the ended run's
// summary and then its statistics, one after the other, since side by side
// the two scans would hold their rows at once. Both are for the item counts
// the engine read as it ended the run (an ended run's stand still, and
// counting a million items takes most of a second): should an item have
// moved in between, the stamps differ from the run's, and its next view
// computes them afresh. The watch evaluator, which reads the summary
// meanwhile (Snapshot), reads it for those counts too.
func StoreEnded(ctx context.Context, st *store.Store, runID int64, counts store.Progress) error {
	stored, done := ending.start(st, runID, counts)
	defer done()
	run, err := st.Run(ctx, runID)
	if err != nil {
		return err
	}
	if _, err := summaryFor(ctx, st, run, counts); err != nil {
		return err
	}
	stored() // the evaluator waits for the summary alone
	return storeAnalysisFor(ctx, st, run, counts)
}

// StoreAnalysis computes the ended run runID's statistics and stores them,
// as StoreEnded does for the engine that ends a run, counting its items
// itself (the bench stores a run's statistics with it and StoreSummary).
func StoreAnalysis(ctx context.Context, st *store.Store, runID int64) error {
	run, err := st.Run(ctx, runID)
	if err != nil {
		return err
	}
	counts, err := st.RunProgress(ctx, run.ID)
	if err != nil {
		return err
	}
	return storeAnalysisFor(ctx, st, run, counts)
}

// storeAnalysisFor stores the run's statistics for the item counts given,
// unless they are stored already.
func storeAnalysisFor(ctx context.Context, st *store.Store, run *store.Run, counts store.Progress) error {
	grades, err := st.GradeStamp(ctx, run.ID)
	if err != nil {
		return err
	}
	stamp := analysisStamp(run, progressOf(counts), grades)
	if _, found, err := storedAnalysis(ctx, st, run.ID, stamp); err != nil || found {
		return err
	}
	_, err = analysisOf(ctx, st, run, stamp)
	return err
}

// analysisShape changes when Analysis gains figures, so that statistics
// stored in an older shape are computed again rather than shown without them.
const analysisShape = "a1"

// analysisStamp is what a run's statistics depend on: its status, item
// counts and grades (the judges' agreement with them). Unlike a summary's,
// every grade moves the whole stamp: the agreement and the judges'
// reliability are the statistics.
func analysisStamp(run *store.Run, prog Progress, grades string) string {
	return fmt.Sprint(analysisShape, " ", run.Status, prog.ByStatus, gradeSep, grades)
}

// analysisSnapshot is the stored form of an Analysis: with the per-task
// score distributions, which its JSON for the API leaves out.
type analysisSnapshot struct {
	Analysis
	Distributions map[int64][]float64 `json:"distributions"`
}

// storedAnalysis reads the run's stored statistics, found only when they
// were computed for stamp.
func storedAnalysis(ctx context.Context, st *store.Store, runID int64, stamp string) (a Analysis, found bool, err error) {
	body, err := st.AnalysisSnapshot(ctx, runID, stamp)
	if err != nil || body == nil {
		return Analysis{}, false, err
	}
	var stored analysisSnapshot
	if err := json.Unmarshal(body, &stored); err != nil || stored.Report == nil {
		return Analysis{}, false, nil // unreadable: computed again
	}
	stored.Report.Distributions = stored.Distributions
	return stored.Analysis, true, nil
}

// analysisOf computes the run's statistics for stamp, and stores them when
// the run has ended. Callers that want one run's statistics at once (the
// engine that ended it and its first viewers) share one computation, made
// apart from the first caller's context, whose cancellation must not fail
// the others.
func analysisOf(ctx context.Context, st *store.Store, run *store.Run, stamp string) (Analysis, error) {
	v, err, _ := computing.Do(fmt.Sprintf("analysis %p %d %s", st, run.ID, stamp), func() (any, error) {
		ctx := context.WithoutCancel(ctx)
		a, err := analyze(ctx, st, run)
		if err != nil || run.Status.Active() {
			return a, err
		}
		body, err := json.Marshal(analysisSnapshot{Analysis: a, Distributions: a.Report.Distributions})
		if err != nil {
			return a, fmt.Errorf("runs: encode analysis of run %d: %w", run.ID, err)
		}
		return a, st.SaveAnalysisSnapshot(ctx, run.ID, stamp, body)
	})
	if err != nil {
		return Analysis{}, err
	}
	return v.(Analysis), nil
}

// analyze computes the run's statistics now.
func analyze(ctx context.Context, st *store.Store, run *store.Run) (a Analysis, err error) {
	if a.Agreement, err = agreementOf(ctx, st, run); err != nil {
		return Analysis{}, err
	}
	if a.Report, err = runReport(ctx, st, run, a.Agreement); err != nil {
		return Analysis{}, err
	}
	return a, nil
}

// runReport computes the run report; human is the agreement the judges'
// reliability is read from. Its three reads are independent: on
// PostgreSQL they run side by side.
func runReport(ctx context.Context, st *store.Store, run *store.Run, human analysis.Report) (*analysis.RunReport, error) {
	var tasks runTasks
	var probe *store.JudgeProbe
	var flips map[int64]analysis.Flips
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		tasks, err = readRunTasks(gctx, st, run)
		return err
	})
	g.Go(func() (err error) {
		probe, err = st.JudgeProbes(gctx, run.ID)
		return err
	})
	g.Go(func() (err error) {
		flips, err = judgeFlips(gctx, st, run.ID)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := &analysis.RunReport{Entries: analysis.Summarise(tasks.entries, nil), PairTests: analysis.PairTests(tasks.entries),
		Distributions: tasks.distributions, Consistency: tasks.consistency}
	if out.PairTests == nil {
		out.PairTests = []analysis.PairTest{}
	}
	for i := range out.Entries {
		out.Entries[i].Entry = out.Entries[i].WithoutTasks()
	}
	out.Judges = analysis.Reliabilities(run.Judges, probe, human, flips)
	return out, nil
}

// runTasks is what the run report takes from the run's task results.
type runTasks struct {
	entries       []analysis.Entry
	distributions map[int64][]float64 // each target's task scores
	consistency   []analysis.ModelConsistency
}

// taskReadParts is how many ranges of a run's targets readRunTasks reads
// side by side, on as many connections: the read is the longest of the
// statistics, and each range's index walk then has a core of its own.
const taskReadParts = 2

// readRunTasks reads the run's task results one target at a time: the
// store streams them by target, and each target's rows become its entry's
// tasks, with nothing else held (a million-item run has half a million
// rows, and holding a copy of them all doubled what the report needs).
// Each target's entry and consistency depend on its own rows alone, so
// computing them per target gives what computing them over all rows
// gives, and each is written to its target's place alone, so ranges of
// targets can be read side by side.
func readRunTasks(ctx context.Context, st *store.Store, run *store.Run) (runTasks, error) {
	pass := store.PassThreshold(run.Judges)
	out := runTasks{entries: analysis.Entries(run, pass, nil), distributions: map[int64][]float64{}}
	if run.Repeats > 1 {
		out.consistency = analysis.Consistency(run, nil)
	}
	index := make(map[int64]int, len(run.Targets))
	for i, t := range run.Targets {
		index[t.ID] = i
	}
	dists := make([][]float64, len(run.Targets)) // each target's task scores
	err := st.EachTargetTaskResults(ctx, run.ID, taskReadParts, func(rows []store.TaskResult) error {
		i, ok := index[rows[0].RunTargetID]
		if !ok {
			return nil
		}
		if out.consistency != nil {
			out.consistency[i] = analysis.Consistency(run, rows)[i]
		}
		scores := make([]float64, 0, len(rows))
		for _, res := range rows {
			if res.Score != nil {
				scores = append(scores, *res.Score)
			}
		}
		dists[i] = scores
		out.entries[i] = out.entries[i].WithTasks(rows) // last: the rows become the entry's
		return nil
	})
	if err != nil {
		return runTasks{}, err
	}
	for i, d := range dists {
		if len(d) > 0 {
			out.distributions[run.Targets[i].ID] = d
		}
	}
	return out, nil
}

// judgeFlips is each judge's pairwise record: comparisons done and how many flipped.
func judgeFlips(ctx context.Context, st *store.Store, runID int64) (map[int64]analysis.Flips, error) {
	list, err := st.RunJudgeFlips(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]analysis.Flips, len(list))
	for _, f := range list {
		out[f.RunJudgeID] = analysis.Flips{Comparisons: f.Comparisons, Flipped: f.Flipped}
	}
	return out, nil
}

// UntrustedJudges says, per run judge id, why its reliability card fails;
// pages that show a judge's scores mark it with this. Cached statistics do,
// even a few grades or items behind: every grade moves the stamp, and the
// grading page must not redo the whole analysis per keystroke.
func (s *Service) UntrustedJudges(ctx context.Context, run *store.Run) (map[int64]string, error) {
	prog, err := s.Progress(ctx, run)
	if err != nil {
		return nil, err
	}
	a, _, ok, err := s.Analysis(ctx, run, prog, false)
	if err == nil && !ok {
		a, _, _, err = s.Analysis(ctx, run, prog, true)
	}
	if err != nil {
		return nil, err
	}
	out := map[int64]string{}
	for _, j := range a.Report.Judges {
		if len(j.Untrusted) > 0 {
			out[j.RunJudgeID] = strings.Join(j.Untrusted, "; ")
		}
	}
	return out, nil
}
