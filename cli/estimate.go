package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"tribunal/engine"
	"tribunal/format"
	"tribunal/runfile"
	"tribunal/runs"
	"tribunal/store"
)

// errEstimated rolls back what prepareRun saved for an estimate.
var errEstimated = errors.New("estimated: roll back")

// estimateRun prints what the file's run would call and cost, and leaves
// the database as it was. The file is resolved exactly as a start resolves
// it (its providers, tasks and judges saved), inside a transaction that is
// then rolled back: so the estimate reads the same tasks, targets and
// prices the run would, through the one runs.Service.Estimate the API
// uses, and no second, "what would exist" resolution can drift from it.
func (e *env) estimateRun(ctx context.Context, st *store.Store, eng *engine.Engine, f *runfile.File, name string, extraTags []string) error {
	var est *runs.Estimate
	err := st.Transact(ctx, func(tx *store.Store) error {
		// The engine lets models: auto suggest from the providers' model
		// lists where the use case has no runs yet, as the run itself would.
		in, err := e.prepareRun(ctx, tx, eng, f, name, extraTags, io.Discard)
		if err != nil {
			return err
		}
		if est, err = runs.New(tx, nil).Estimate(ctx, in); err != nil {
			return e.runInputError(f, "estimate the run", err)
		}
		return errEstimated
	})
	if !errors.Is(err, errEstimated) {
		return err
	}
	e.printEstimate(est)
	fmt.Fprintln(e.stderr, "Estimate only: nothing was saved or started.")
	return nil
}

// printEstimate writes an estimate as a table: a row per target and judge,
// then the total.
func (e *env) printEstimate(est *runs.Estimate) {
	fmt.Fprintf(e.stdout, "Estimate for %s:\n\n", plural(est.Tasks, "task"))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tMODEL\tCALLS\tINPUT TOKENS\tOUTPUT TOKENS\tLOW\tEXPECTED\tHIGH\t")
	rows := func(kind string, rs []runs.EstimateRow) {
		for _, r := range rs {
			low, exp, high := format.None, format.None, format.None
			if r.USD != nil {
				low, exp, high = format.USD(&r.USD.Low), format.USD(&r.USD.Expected), format.USD(&r.USD.High)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", kind, r.Name, r.Calls, r.InputTokens, r.OutputTokens, low, exp, high, r.Note)
		}
	}
	rows("target", est.Targets)
	rows("judge", est.Judges)
	t := est.TotalUSD
	fmt.Fprintf(tw, "total\t\t\t\t\t%s\t%s\t%s\t\n", format.USD(&t.Low), format.USD(&t.Expected), format.USD(&t.High))
	tw.Flush()
	if est.Partial {
		fmt.Fprintln(e.stdout, "The total leaves out the models without a price: it is a lower bound.")
	}
}
