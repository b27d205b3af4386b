package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"tribunal/engine"
	"tribunal/format"
	"tribunal/report"
	"tribunal/runfile"
	"tribunal/runs"
	"tribunal/store"
)

const runUsage = `Usage: tribunal run FILE.yaml [--out DIR] [--database-url URL]
       tribunal run --resume RUN_ID [FILE.yaml] [--out DIR]
       tribunal run --estimate FILE.yaml

Runs a whole benchmark headless from a run file (see README, "Run files"):
it saves the file's providers and tasks, starts the run (which shows in the
UI like any other), shows a progress bar per phase, prints a table per model,
writes results to --out (results.csv, results.json, report.html,
summary.json), and exits 0 when every gate of the file holds, 1 when a gate
fails, 2 for a usage or validation error, 3 when the run failed. Ctrl-C
pauses the run (exit 130); --resume RUN_ID continues it, with the file's
gates when FILE is given. --estimate prints what the run would call and
cost (per model and judge: calls, tokens, USD low/expected/high) and starts
nothing, saving nothing.
`

func (e *env) run(args []string) error {
	fs := newFlagSet("run", runUsage, e.stderr)
	var db dbFlags
	e.addDBFlags(fs, &db)
	out := fs.String("out", "", "write results.csv, results.json, report.html and summary.json here (default: out: in the file; none without)")
	resume := fs.Int64("resume", 0, "continue this run (paused with Ctrl-C, or left by a crash) instead of starting one")
	name := fs.String("name", "", "the run's name (default: name: in the file, else the file's name)")
	tags := fs.String("tags", "", "more run tags, comma-separated")
	mode := fs.String("progress", "auto", "auto (bars on a terminal, plain lines otherwise), bars, plain or none")
	interval := fs.Duration("progress-interval", 10*time.Second, "how often plain progress lines are printed")
	maxInFlight := fs.Int("max-in-flight", e.envInt("TRIBUNAL_MAX_IN_FLIGHT", 64), "provider calls at once in this process (TRIBUNAL_MAX_IN_FLIGHT)")
	timeout := fs.Duration("timeout", 0, "cancel the run and exit 3 when it takes longer than this (0: no limit)")
	estimate := fs.Bool("estimate", false, "print the run's estimated calls, tokens and cost, and start nothing")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 1:
		return usageErr("one run file at a time (got %s)", strings.Join(pos, " "))
	case len(pos) == 0 && *resume == 0:
		fs.Usage()
		return usageErr("name a run file, or --resume RUN_ID")
	case *estimate && (*resume != 0 || len(pos) == 0):
		return usageErr("--estimate takes a run file, not --resume: a started run's cost is on its page")
	}
	switch *mode {
	case "auto", "bars", "plain", "none":
	default:
		return usageErr("--progress %q: use auto, bars, plain or none", *mode)
	}
	var f *runfile.File
	if len(pos) == 1 {
		if f, err = runfile.Load(pos[0], e.lookup); err != nil {
			n := e.printProblems(err)
			return usageErr("%s: %s; nothing was run", pos[0], plural(n, "problem"))
		}
	}
	outDir := *out
	if outDir == "" && f != nil && f.Out != "" {
		outDir = f.Out
		if !filepath.IsAbs(outDir) {
			outDir = filepath.Join(f.Dir, outDir)
		}
	}

	tty := false
	if fd, ok := e.stderr.(*os.File); ok {
		tty = term.IsTerminal(int(fd.Fd())) && e.getenv("TERM") != "dumb"
	}
	switch *mode {
	case "bars":
		tty = true
	case "plain", "none":
		tty = false
	}
	prog := newProgress(e.stderr, tty, max(*interval, time.Second))
	if *mode == "none" {
		prog.w = io.Discard
	}
	db.logLevel = cmp.Or(db.logLevel, "warn")
	log, err := db.logger(lineWriter{prog})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bg := context.Background()
	st, err := e.openStore(bg, db)
	if err != nil {
		return err
	}
	defer st.Close()
	policy, err := e.egress()
	if err != nil {
		return err
	}
	broker := engine.NewBroker()
	// A process dedicated to one run polls more often than the server's default.
	eng := engine.New(engine.Config{MaxInFlight: max(*maxInFlight, 1), PollInterval: 200 * time.Millisecond, Egress: policy,
		ItemWeightsFunc: runs.ItemWeights}, st, broker, log)
	if *estimate {
		return e.estimateRun(bg, st, eng, f, *name, store.ParseTags(*tags))
	}

	var run *store.Run
	if *resume != 0 {
		if run, err = st.Run(bg, *resume); err != nil {
			return storeError(err)
		}
		switch run.Status {
		case store.RunPaused:
			if run, err = eng.Resume(bg, run.ID); err != nil {
				return storeError(err)
			}
			fmt.Fprintf(e.stderr, "Resuming run %d %q\n", run.ID, run.Name)
		case store.RunPending, store.RunRunning:
			fmt.Fprintf(e.stderr, "Continuing run %d %q (%s)\n", run.ID, run.Name, run.Status)
		default:
			fmt.Fprintf(e.stderr, "Run %d %q is %s already; reporting it\n", run.ID, run.Name, run.Status)
		}
	} else {
		if run, err = e.startRun(bg, st, eng, f, *name, store.ParseTags(*tags)); err != nil {
			return err
		}
	}

	if run.Active() {
		if err := e.follow(ctx, stop, st, eng, broker, prog, run, f, *timeout); err != nil {
			return err
		}
	}
	return e.finish(bg, st, run.ID, f, outDir)
}

// finish prints the table per model, checks the gates, writes the results
// and picks the exit code.
func (e *env) finish(ctx context.Context, st *store.Store, runID int64, f *runfile.File, outDir string) error {
	run, err := st.Run(ctx, runID)
	if err != nil {
		return failErr("%v", err)
	}
	svc := runs.New(st, nil)
	_, sum, err := svc.Results(ctx, run)
	if err != nil {
		return failErr("%v", err)
	}
	bestOverall, bestValue := sum.Best.OverallTargetID, sum.Best.ValueTargetID
	metrics := runs.MetricsOf(run, sum)
	took := ""
	if run.StartedAt != nil && run.FinishedAt != nil {
		took = " in " + run.FinishedAt.Sub(*run.StartedAt).Round(100*time.Millisecond).String()
	}
	o := sum.Overall
	status := string(run.Status)
	if run.Status == store.RunFinished && o.Failed > 0 {
		status = fmt.Sprintf("finished with %d failures", o.Failed)
	}
	fmt.Fprintf(e.stdout, "\nRun %d %q %s%s: %d items, %d completed, %d failed\n", run.ID, run.Name, status, took, o.Items, o.Completed, o.Failed)
	if o.Failed > 0 {
		groups, err := svc.Failures(ctx, run.ID)
		if err != nil {
			return failErr("%v", err)
		}
		for _, g := range groups {
			fmt.Fprintf(e.stdout, "  %6d × %s: %s\n", g.Count, strings.ToLower(string(g.Phase)), oneLine(g.Reason, 120))
		}
		fmt.Fprintf(e.stdout, "  (POST /api/runs/%d/retry-failed, or Retry failed items on the run page, asks again)\n", run.ID)
	}
	fmt.Fprintln(e.stdout)
	overall := map[int64]runs.ModelScore{}
	for _, m := range sum.Models {
		overall[m.TargetID] = m
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tOVERALL [95% CI]\tSCORE\tPASS RATE\tMEAN TIME\tTOKENS/S\tCOST\tFAILED\t")
	label := map[int64]string{}
	for _, t := range run.Targets {
		label[t.ID] = t.Label()
	}
	for _, pm := range sum.PerModel {
		note := ""
		if pm.TargetID == bestOverall {
			note = "best overall"
		}
		if pm.TargetID == bestValue {
			note = strings.TrimPrefix(note+", best value", ", ")
		}
		cost := pm.CostUSD
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", label[pm.TargetID], overallCI(overall[pm.TargetID]),
			format.Score(pm.AvgScore), format.Pct(pm.PassRate), format.Ms(pm.AvgTimeMs), format.Num(pm.AvgTPS, 1),
			format.USD(cost), pm.Failed, note)
	}
	tw.Flush()
	if sum.Best.Note != "" {
		fmt.Fprintln(e.stdout, sum.Best.Note)
	}
	if o.JudgeCostUSD != nil && *o.JudgeCostUSD > 0 {
		fmt.Fprintf(e.stdout, "Judging cost %s\n", format.USD(o.JudgeCostUSD))
	}

	var results []runfile.GateResult
	if f != nil && !f.Gates.Empty() {
		results = f.Gates.Evaluate(metrics)
		fmt.Fprintln(e.stdout, "\nGates:")
		for _, r := range results {
			fmt.Fprintln(e.stdout, "  "+r.String())
		}
	}
	code := ExitOK
	switch {
	case run.Status == store.RunFailed || run.Status == store.RunCancelled:
		code = ExitRunFailed
	case !runfile.Passed(results):
		code = ExitGateFailed
	}
	if outDir != "" {
		if err := writeResults(ctx, svc, run, outDir, results, metrics, code, e.stdout); err != nil {
			return failErr("write results: %v", err)
		}
	}
	switch code {
	case ExitRunFailed:
		msg := fmt.Sprintf("run %d %s", run.ID, strings.ToLower(string(run.Status)))
		if run.Error != "" {
			msg += ": " + run.Error
		}
		return &exitError{code, msg}
	case ExitGateFailed:
		n := 0
		for _, r := range results {
			if !r.Pass {
				n++
			}
		}
		return &exitError{code, fmt.Sprintf("%s of %d failed", plural(n, "gate"), len(results))}
	}
	if len(results) > 0 {
		fmt.Fprintf(e.stdout, "All %d gates passed.\n", len(results))
	}
	return nil
}

// overallCI is a model's overall with its interval, as the run page shows it.
func overallCI(m runs.ModelScore) string {
	if m.OverallCI == nil {
		return format.None
	}
	return format.CI(m.OverallCI.Mean, m.OverallCI.Lo, m.OverallCI.Hi, 1)
}

// gateJSON is one gate's outcome in summary.json.
type gateJSON struct {
	Scope     string   `json:"scope"`
	Gate      string   `json:"gate"`
	Metric    string   `json:"metric"`
	Op        string   `json:"op"`
	Threshold float64  `json:"threshold"`
	Value     *float64 `json:"value"`
	Pass      bool     `json:"pass"`
	Line      int      `json:"line"`
}

func writeResults(ctx context.Context, svc *runs.Service, run *store.Run, dir string, gates []runfile.GateResult,
	metrics *store.RunMetrics, code int, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var lines []report.GateLine
	var gj []gateJSON
	for _, r := range gates {
		val := "no value"
		if r.Value != nil {
			val = strconv.FormatFloat(*r.Value, 'f', -1, 64)
		}
		lines = append(lines, report.GateLine{Scope: r.Scope, Gate: r.Gate.String(), Value: val, Pass: r.Pass})
		op := ">="
		if r.Gate.Max {
			op = "<="
		}
		gj = append(gj, gateJSON{Scope: r.Scope, Gate: r.Gate.Key, Metric: r.Gate.Metric, Op: op, Threshold: r.Gate.Value,
			Value: r.Value, Pass: r.Pass, Line: r.Gate.Line})
	}
	steps := []struct {
		name string
		fn   func(io.Writer) error
	}{
		{"results.csv", func(w io.Writer) error { return exportCSV(ctx, svc, w, run.ID) }},
		{"results.json", func(w io.Writer) error { return report.WriteJSON(ctx, w, svc, run.ID) }},
		{"report.html", func(w io.Writer) error {
			return report.WriteHTML(ctx, w, svc, report.Options{Gates: lines}, run.ID)
		}},
		{"summary.json", func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if gj == nil {
				gj = []gateJSON{}
			}
			return enc.Encode(map[string]any{"run_id": run.ID, "name": run.Name, "status": run.Status, "exit_code": code,
				"gates_passed": runfile.Passed(gates), "gates": gj, "metrics": metrics})
		}},
	}
	var names []string
	for _, s := range steps {
		path := filepath.Join(dir, s.name)
		if err := writeAtomic(path, s.fn); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		names = append(names, path)
	}
	fmt.Fprintf(stdout, "\nResults: %s\n", strings.Join(names, ", "))
	return nil
}

// ---- starting a run from a file ----

// problems collects problems found against the database, with the file's lines.
type problems struct {
	file string
	list runfile.Problems
}

func (p *problems) add(line int, field, format string, args ...any) {
	p.list = append(p.list, runfile.Problem{File: p.file, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (e *env) fail(p *problems) error {
	n := e.printProblems(p.list)
	return usageErr("%s: %s; nothing was run", p.file, plural(n, "problem"))
}
