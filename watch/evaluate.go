package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"tribunal/kpi"
	"tribunal/runs"
	"tribunal/store"
)

// Evaluator stores each finished run's metrics and KPI values, checks its
// alerts and counts its outcome against its schedule.
type Evaluator struct {
	st  *store.Store
	cfg Config
	log *slog.Logger
	// starter, when set, starts the schedules listening for run.finished.
	starter Starter
	// lastFull is when Tick last looked at every run; in between it looks
	// only at runs that finished in the last watermarkMargin.
	lastFull time.Time
}

// A full look at every run happens on start and every fullScanEvery;
// otherwise runs that finished within watermarkMargin (on the database's
// clock, which stamps finished_at) are enough, with room for slow commits
// and clocks that differ between processes.
const (
	fullScanEvery   = 10 * time.Minute
	watermarkMargin = 5 * time.Minute
)

// NewEvaluator builds an evaluator.
func NewEvaluator(cfg Config, st *store.Store, log *slog.Logger) *Evaluator {
	if log == nil {
		log = slog.Default()
	}
	return &Evaluator{st: st, cfg: cfg.withDefaults(), log: log}
}

// Run evaluates finished runs until ctx ends.
func (e *Evaluator) Run(ctx context.Context) {
	for {
		n, err := e.Tick(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.ErrorContext(ctx, "evaluator", "err", err)
		}
		if n > 0 && err == nil {
			continue // more may be waiting
		}
		select {
		case <-ctx.Done():
			return
		case <-e.cfg.Clock.After(jitter(e.cfg.PollInterval)):
		}
	}
}

// Tick evaluates the runs that finished since the last look (a batch of
// them); it reports how many it evaluated.
func (e *Evaluator) Tick(ctx context.Context) (int, error) {
	var since time.Time
	if wall := time.Now(); wall.Sub(e.lastFull) < fullScanEvery {
		since = wall.Add(-watermarkMargin)
	}
	tasks, err := e.st.ClaimEvaluations(ctx, e.cfg.WorkerID, e.cfg.Lease, 20, e.cfg.Clock.Now(), since)
	if err != nil {
		return 0, err
	}
	if since.IsZero() && len(tasks) < 20 {
		e.lastFull = time.Now() // caught up with every run: lately finished ones are enough for a while
	}
	var errs []error
	for _, t := range tasks {
		evalErr := e.evaluate(ctx, t)
		if evalErr != nil && ctx.Err() != nil {
			// Stopped midway: left claimed, the evaluation is done again
			// once its lease runs out, not recorded as failed for good.
			break
		}
		msg := ""
		if evalErr != nil {
			msg = evalErr.Error()
			if !errors.Is(evalErr, store.ErrNotFound) {
				errs = append(errs, fmt.Errorf("run %d: %w", t.RunID, evalErr))
			}
		}
		// Recorded on a context that outlives a shutdown, so a finished evaluation is not redone.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := e.st.FinishEvaluation(fctx, t.RunID, e.cfg.WorkerID, msg, e.cfg.Clock.Now()); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	return len(tasks), errors.Join(errs...)
}

func outcomeOf(status store.RunStatus) string {
	switch status {
	case store.RunFinished:
		return store.OutcomeSucceeded
	case store.RunFailed:
		return store.OutcomeFailed
	}
	return store.OutcomeCancelled
}

func (e *Evaluator) evaluate(ctx context.Context, t store.EvalTask) error {
	run, err := e.st.Run(ctx, t.RunID)
	if err != nil {
		return err
	}
	now := e.cfg.Clock.Now()
	if run.ScheduleID != nil {
		outcome := outcomeOf(run.Status)
		f, err := e.st.SetFiringOutcome(ctx, run.ID, outcome, now)
		if err != nil {
			return err
		}
		if f != nil && outcome != store.OutcomeCancelled {
			if err := e.countOutcome(ctx, run, outcome, now); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	// The run's page and JSON read its summary from now on (computing it
	// here spares the first viewer the scan), and so do its metrics.
	sum, err := runs.Snapshot(ctx, e.st, run)
	if err != nil {
		return err
	}
	if run.Status == store.RunCancelled {
		return nil // partial results: no KPI values, no alerts
	}
	rm := runs.NormalizedMetricsOf(run, sum)
	metrics := metricRows(rm, run.Targets)
	kpis, err := e.st.KPIsForRun(ctx, run)
	if err != nil {
		return err
	}
	values := ComputeKPIValues(kpis, metrics)
	if err := e.st.SaveRunEvaluation(ctx, run.ID, metrics, values); err != nil {
		return err
	}
	alerts, err := e.st.AlertsForRun(ctx, run, t.FinishedAt)
	if err != nil {
		return err
	}
	kpiNames := map[int64]string{}
	for _, k := range kpis {
		kpiNames[k.ID] = k.Name
	}
	var errs []error
	for i := range alerts {
		if err := e.checkAlert(ctx, &alerts[i], run, metrics, values, kpiNames, now); err != nil {
			errs = append(errs, fmt.Errorf("alert %d: %w", alerts[i].ID, err))
		}
	}
	// Evaluations are claimed, so each finish fires run.finished once across processes.
	if e.starter != nil && run.Status == store.RunFinished {
		if _, err := Fire(ctx, e.st, e.starter, Event{Name: store.EventRunFinished, RunID: run.ID}, now); err != nil {
			errs = append(errs, fmt.Errorf("run.finished: %w", err))
		}
		// An import from a trace source is finished once its answers are scored.
		for _, tg := range run.Targets {
			if tg.Source == nil || run.Kind != store.RunImported || run.TriggeredBy == store.TriggerEvent {
				continue
			}
			id := tg.Source.SourceID
			if _, err := Fire(ctx, e.st, e.starter, Event{Name: store.EventImportFinished, SourceID: &id, RunID: run.ID}, now); err != nil {
				errs = append(errs, fmt.Errorf("import.finished: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// countOutcome counts a scheduled run's end against its schedule.
func (e *Evaluator) countOutcome(ctx context.Context, run *store.Run, outcome string, now time.Time) error {
	if outcome == store.OutcomeSucceeded {
		_, err := e.st.RecordScheduleOutcome(ctx, *run.ScheduleID, true, "", now)
		return err
	}
	sc, err := e.st.Schedule(ctx, *run.ScheduleID)
	if err != nil {
		return err
	}
	reason := fmt.Sprintf("run %d failed", run.ID)
	if run.Error != "" {
		reason += ": " + run.Error
	}
	s := &Scheduler{st: e.st, cfg: e.cfg, log: e.log}
	return s.failure(ctx, sc.ID, sc.Name, reason, &run.ID, now)
}

// metricRows flattens a run's metrics into rows: model "" for the whole
// run, then each target by its label, with the model's own name.
func metricRows(rm *store.RunMetrics, targets []store.RunTarget) []store.RunMetric {
	names := map[string]string{}
	for _, t := range targets {
		names[t.Label()] = t.Model
	}
	var out []store.RunMetric
	for _, m := range slices.Sorted(maps.Keys(rm.Overall)) {
		out = append(out, store.RunMetric{Metric: m, Value: rm.Overall[m]})
	}
	for _, label := range slices.Sorted(maps.Keys(rm.PerModel)) {
		vals := rm.PerModel[label]
		for _, m := range slices.Sorted(maps.Keys(vals)) {
			out = append(out, store.RunMetric{Model: label, ModelName: names[label], Metric: m, Value: vals[m]})
		}
	}
	return out
}

// ComputeKPIValues evaluates each KPI on a run's metric rows, for the whole
// run and each model. A value that cannot be computed (a metric the run
// lacks, a division by zero) is stored as nil with the reason.
func ComputeKPIValues(kpis []store.KPI, metrics []store.RunMetric) []store.KPIValue {
	return compileKPIs(kpis).values(metrics)
}

// compiledKPIs are KPIs with their formulas compiled once, to evaluate on many runs.
type compiledKPIs []compiledKPI

type compiledKPI struct {
	kpi     *store.KPI
	formula *kpi.Formula
	err     string // why the formula does not compile
}

func compileKPIs(kpis []store.KPI) compiledKPIs {
	out := make(compiledKPIs, len(kpis))
	for i := range kpis {
		out[i].kpi = &kpis[i]
		f, errs := kpi.Compile(kpis[i].Formula, nil)
		if errs != nil {
			out[i].err = "formula: " + errs[0].Error()
		}
		out[i].formula = f
	}
	return out
}

// values evaluates the KPIs on one run's metric rows.
func (cs compiledKPIs) values(metrics []store.RunMetric) []store.KPIValue {
	type group struct {
		name string
		vals map[string]float64
	}
	groups := map[string]*group{"": {vals: map[string]float64{}}}
	order := []string{""}
	for _, m := range metrics {
		g := groups[m.Model]
		if g == nil {
			g = &group{name: m.ModelName, vals: map[string]float64{}}
			groups[m.Model] = g
			order = append(order, m.Model)
		}
		g.vals[m.Metric] = m.Value
	}
	var out []store.KPIValue
	for _, c := range cs {
		for _, model := range order {
			g := groups[model]
			v := store.KPIValue{KPIID: c.kpi.ID, Model: model, ModelName: g.name, KPIRevision: c.kpi.Revision}
			if c.err != "" {
				v.Error = c.err
			} else if x, err := c.formula.Eval(g.vals); err != nil {
				v.Error = err.Error()
			} else {
				v.Value = &x
			}
			out = append(out, v)
		}
	}
	return out
}

// BackfillKPI computes a KPI for every evaluated run it applies to (after
// it is created or its formula changes); it reports how many runs.
func BackfillKPI(ctx context.Context, st *store.Store, k *store.KPI) (int, error) {
	ids, err := st.KPIRuns(ctx, k)
	if err != nil {
		return 0, err
	}
	compiled := compileKPIs([]store.KPI{*k})
	for start := 0; start < len(ids); start += 200 {
		chunk := ids[start:min(start+200, len(ids))]
		metrics, err := st.RunMetricsOf(ctx, chunk)
		if err != nil {
			return 0, err
		}
		var values []store.KPIValue
		for _, id := range chunk {
			vs := compiled.values(metrics[id])
			for i := range vs {
				vs[i].RunID = id
			}
			values = append(values, vs...)
		}
		if err := st.SetKPIValues(ctx, k.ID, values); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// subject is one value an alert looks at: the whole run or one model.
type subject struct {
	model  string // label "provider / model", "" for the whole run
	byName bool   // the alert named the model without its provider
	value  float64
}

// subjects finds the values an alert watches in a run.
func subjects(a *store.Alert, metrics []store.RunMetric, values []store.KPIValue) []subject {
	type row struct {
		model, name string
		value       *float64
	}
	var rows []row
	if a.KPIID != nil {
		for _, v := range values {
			if v.KPIID == *a.KPIID {
				rows = append(rows, row{v.Model, v.ModelName, v.Value})
			}
		}
	} else {
		for _, m := range metrics {
			if strings.EqualFold(m.Metric, a.Metric) {
				x := m.Value
				rows = append(rows, row{m.Model, m.ModelName, &x})
			}
		}
	}
	var out []subject
	for _, r := range rows {
		if r.value == nil {
			continue
		}
		switch {
		case a.Model == "" && r.model == "":
			out = append(out, subject{value: *r.value})
		case a.Model == "*" && r.model != "":
			out = append(out, subject{model: r.model, value: *r.value})
		case a.Model != "" && a.Model != "*" && r.model != "" && r.model == a.Model:
			out = append(out, subject{model: r.model, value: *r.value})
		case a.Model != "" && a.Model != "*" && r.model != "" && r.name == a.Model:
			out = append(out, subject{model: r.model, byName: true, value: *r.value})
		}
	}
	return out
}

// checkAlert checks an alert on a run and records a notification for each
// value that meets its condition.
func (e *Evaluator) checkAlert(ctx context.Context, a *store.Alert, run *store.Run, metrics []store.RunMetric,
	values []store.KPIValue, kpiNames map[int64]string, now time.Time) error {
	name, what := a.Metric, "metric "+a.Metric
	if a.KPIID != nil {
		var ok bool
		if name, ok = kpiNames[*a.KPIID]; !ok {
			return nil // the KPI does not apply to this run
		}
		what = "KPI " + name
	}
	for _, sub := range subjects(a, metrics, values) {
		var baseline []float64
		if needsBaseline(a.Condition) {
			q := store.BaselineQuery{KPIID: a.KPIID, Metric: a.Metric, Model: sub.model, BeforeRunID: run.ID,
				N: a.BaselineRuns, CollectionID: a.CollectionID, ScheduleID: a.ScheduleID}
			if sub.byName {
				q.Model, q.ByName = a.Model, true
			}
			var err error
			if baseline, err = e.st.Baseline(ctx, q); err != nil {
				return err
			}
		}
		v := Check(a.Condition, sub.value, a.Threshold, baseline)
		if v.Skipped != "" {
			e.log.DebugContext(ctx, "alert not checked", "alert_id", a.ID, "run_id", run.ID, "model", sub.model, "why", v.Skipped)
		}
		if !v.Fired {
			continue
		}
		on := ""
		if sub.model != "" {
			on = " for " + sub.model
		}
		value, threshold, alertID, runID := sub.value, a.Threshold, a.ID, run.ID
		n := &store.Notification{Kind: "ALERT", AlertID: &alertID, RunID: &runID, ScheduleID: run.ScheduleID, KPIID: a.KPIID,
			Severity: a.Severity, Subject: name, Model: sub.model, Condition: a.Condition, Value: &value, Threshold: &threshold,
			Baseline: v.Baseline, BaselineSD: v.SD, BaselineN: v.N,
			Title:   fmt.Sprintf("%s: %s = %s%s (%s)", a.Name, what, num(sub.value), on, a.Condition),
			Message: fmt.Sprintf("Run %d “%s”: %s%s: %s.", run.ID, run.Name, what, on, v.Detail)}
		if err := e.st.CreateNotification(ctx, n, a.Channels, now); err != nil {
			return err
		}
		e.log.InfoContext(ctx, "alert fired", "alert_id", a.ID, "run_id", run.ID, "model", sub.model, "value", sub.value,
			"notification_id", n.ID)
	}
	return nil
}
