package runs

import (
	"context"
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
	in, err := s.store.RunJudgeAgreement(ctx, run.ID)
	if err != nil {
		return analysis.Report{}, err
	}
	return analysis.Agreements(run.Judges, in), nil
}

// Analysis returns the run's statistics: the cached ones, fresh when they
// match the run's current items and grades; stale or missing ones are
// computed again only when compute is set, since a pass over every item is
// too slow for a page to wait on.
func (s *Service) Analysis(ctx context.Context, run *store.Run, prog Progress, compute bool) (a Analysis, fresh, ok bool, err error) {
	stamp, err := s.analysisStamp(ctx, run.ID, prog)
	if err != nil {
		return a, false, false, err
	}
	if a, fresh, ok = s.analyses.get(run.ID, stamp); fresh || !compute {
		return a, fresh, ok, nil
	}
	if a.Agreement, err = s.Agreement(ctx, run); err != nil {
		return Analysis{}, false, false, err
	}
	if a.Report, err = s.runReport(ctx, run, a.Agreement); err != nil {
		return Analysis{}, false, false, err
	}
	s.analyses.put(run.ID, stamp, a)
	return a, true, true, nil
}

// analysisStamp keys a run's cached statistics by its item counts and
// grades: while neither moves, neither do the statistics.
func (s *Service) analysisStamp(ctx context.Context, runID int64, prog Progress) (string, error) {
	grades, err := s.store.GradeStamp(ctx, runID)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(prog.ByStatus) + "|" + grades, nil
}

// runReport computes the run report; human is the agreement the judges'
// reliability is read from. Its three reads are independent: on
// PostgreSQL they run side by side.
func (s *Service) runReport(ctx context.Context, run *store.Run, human analysis.Report) (*analysis.RunReport, error) {
	var tasks runTasks
	var probe *store.JudgeProbe
	var flips map[int64]analysis.Flips
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		tasks, err = readRunTasks(gctx, s.store, run)
		return err
	})
	g.Go(func() (err error) {
		probe, err = s.store.JudgeProbes(gctx, run.ID)
		return err
	})
	g.Go(func() (err error) {
		flips, err = s.judgeFlips(gctx, run.ID)
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
	out.Judges = analysis.Reliabilities(run.Judges, probe, human, flips)
	return out, nil
}

// runTasks is what the run report takes from the run's task results.
type runTasks struct {
	entries       []analysis.Entry
	distributions map[int64][]float64 // each target's task scores
	consistency   []analysis.ModelConsistency
}

// readRunTasks reads the run's task results one target at a time: the
// store streams them by target, and only the current target's rows are
// held beside the entries (a million-item run has half a million rows, and
// holding them all doubled what the report needs). Each target's entry and
// consistency depend on its own rows alone, so computing them per target
// gives what computing them over all rows gives.
func readRunTasks(ctx context.Context, st *store.Store, run *store.Run) (runTasks, error) {
	pass := store.PassThreshold(run.Judges)
	out := runTasks{entries: analysis.Entries(run, pass, nil), distributions: map[int64][]float64{}}
	if run.Repeats > 1 {
		out.consistency = analysis.Consistency(run, nil)
	}
	index := map[int64]int{}
	for i, t := range run.Targets {
		index[t.ID] = i
	}
	var target []store.TaskResult
	done := func() {
		if i, ok := index[target[0].RunTargetID]; ok {
			out.entries[i] = analysis.Entries(run, pass, target)[i]
			if out.consistency != nil {
				out.consistency[i] = analysis.Consistency(run, target)[i]
			}
		}
		target = target[:0]
	}
	err := st.EachTaskResult(ctx, run.ID, func(r store.TaskResult) error {
		if len(target) > 0 && target[0].RunTargetID != r.RunTargetID {
			done()
		}
		target = append(target, r)
		if r.Score != nil {
			out.distributions[r.RunTargetID] = append(out.distributions[r.RunTargetID], *r.Score)
		}
		return nil
	})
	if err != nil {
		return runTasks{}, err
	}
	if len(target) > 0 {
		done()
	}
	return out, nil
}

// judgeFlips is each judge's pairwise record: comparisons done and how many flipped.
func (s *Service) judgeFlips(ctx context.Context, runID int64) (map[int64]analysis.Flips, error) {
	list, err := s.store.RunJudgeFlips(ctx, runID)
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
