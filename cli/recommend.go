package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"tribunal/engine"
	"tribunal/format"
	"tribunal/runs"
)

const recommendUsage = `Usage: tribunal recommend --usecase NAME | --category NAME [flags]

Which model to use: ranks the models of your finished runs on the use
case's (or category's) tasks, best first by the use case's cost priority,
with overall and its 95 % interval, cost per 1,000 tasks, median latency,
tokens/s, n, the Pareto front of quality vs cost and the reason for each
place; models left out follow, with why. With no model to rank yet, it
suggests candidates from the providers' model lists. GET /api/recommend
and the Recommend page answer the same.

Flags:
`

// optFloat is a float flag that may be left unset.
type optFloat struct{ v *float64 }

func (o *optFloat) String() string {
	if o.v == nil {
		return ""
	}
	return fmt.Sprint(*o.v)
}

func (o *optFloat) Set(s string) error {
	var x float64
	if _, err := fmt.Sscan(s, &x); err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	o.v = &x
	return nil
}

func (e *env) recommend(args []string) error {
	fs := newFlagSet("recommend", recommendUsage, e.stderr)
	var db dbFlags
	e.addDBFlags(fs, &db)
	var q runs.RecommendQuery
	fs.StringVar(&q.UseCase, "usecase", "", "the use case whose tasks decide")
	fs.StringVar(&q.Category, "category", "", "or the category whose tasks decide")
	var budget, minOverall, maxLatency optFloat
	fs.Var(&budget, "budget-per-1k", "the most a model may cost per 1,000 tasks (USD)")
	fs.Var(&minOverall, "min-overall", "the least overall (0–100) a model must have")
	fs.Var(&maxLatency, "max-latency-ms", "the slowest median answer time allowed (ms)")
	minItems := fs.Int64("min-items", runs.DefaultMinItems, "scored items a model needs")
	fs.StringVar(&q.CostPriority, "cost-priority", "", "low, balanced or high (default: the use case's)")
	asJSON := fs.Bool("json", false, "print JSON (as GET /api/recommend)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		fs.Usage()
		return usageErr("recommend takes flags only, not %q", pos[0])
	}
	q.BudgetPer1K, q.MinOverall, q.MaxLatencyMs, q.MinItems = budget.v, minOverall.v, maxLatency.v, *minItems
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := e.openStore(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	policy, err := e.egress()
	if err != nil {
		return err
	}
	// An engine that never runs: its client reads the providers' model lists.
	eng := engine.New(engine.Config{Egress: policy}, st, engine.NewBroker(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	rec, err := runs.New(st, eng).Recommend(ctx, q)
	if err != nil {
		return storeError(err)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tMODEL\tOVERALL [95% CI]\tCOST/1K TASKS\tMEDIAN\tTOKENS/S\tN\tFRONT\tWHY")
	for i, m := range rec.Models {
		rank := "–"
		if m.Eligible {
			rank = fmt.Sprint(i + 1)
		}
		overall := format.Overall(m.Overall)
		if m.OverallCI != nil {
			overall = format.CI(m.OverallCI.Mean, m.OverallCI.Lo, m.OverallCI.Hi, 1)
		}
		front := ""
		if m.Pareto {
			front = "pareto"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", rank, m.Label(), overall, format.USD(m.CostPer1K),
			format.Ms(m.MedianLatencyMs), format.Num(m.TokensPerS, 1), m.N, front, m.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, pe := range rec.ProviderErrors {
		fmt.Fprintf(e.stderr, "provider %q: could not list its models: %s\n", pe.Provider, pe.Error)
	}
	fmt.Fprintf(e.stderr, "%s from %s; cost priority %s; at least %s per model\n", plural(len(rec.Models), "model"),
		plural(rec.Runs, "finished run"), rec.CostPriority, plural(int(rec.MinItems), "scored item"))
	return nil
}
