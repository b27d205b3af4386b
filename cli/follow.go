package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"tribunal/engine"
	"tribunal/runfile"
	"tribunal/store"
)

// lineWriter sends log lines through the progress display, above the bars.
type lineWriter struct{ p *progress }

func (l lineWriter) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		l.p.event(line)
	}
	return len(b), nil
}

// follow runs the engine in process until the run ends, drawing progress.
// Ctrl-C pauses the run and returns an ExitInterrupted error.
func (e *env) follow(ctx context.Context, stop func(), st *store.Store, eng *engine.Engine, broker *engine.Broker,
	prog *progress, run *store.Run, f *runfile.File, timeout time.Duration) error {
	bg := context.Background()
	// The entries before this point were shown already (or belong to an
	// earlier session of a resumed run); read before the engine starts, so
	// a run that fails at once still shows why.
	var lastLog int64
	if logs, err := st.LastRunLogs(bg, run.ID, 1); err == nil && len(logs) > 0 {
		lastLog = logs[len(logs)-1].ID
	}
	engCtx, stopEngine := context.WithCancel(bg)
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(engCtx) })
	stopped := false
	stopAll := func() {
		if !stopped {
			stopped = true
			stopEngine()
			wg.Wait() // calls in flight hand their items back
		}
	}
	defer stopAll()
	eng.Refresh()

	sub, unsub := broker.Subscribe(run.ID)
	defer unsub()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	judged := len(run.Judges) > 0
	start := time.Now()
	if run.StartedAt != nil {
		start = *run.StartedAt
	}
	for {
		select {
		case <-ctx.Done():
			stop() // a second Ctrl-C ends the process at once
			prog.event(fmt.Sprintf("Interrupted: pausing run %d (the calls in flight are handed back)…", run.ID))
			if _, err := eng.Pause(bg, run.ID); err != nil && !errors.Is(err, store.ErrConflict) {
				stopAll()
				return failErr("pause run %d: %v", run.ID, err)
			}
			stopAll()
			prog.finish()
			file := ""
			if f != nil {
				file = " " + f.Path
			}
			fmt.Fprintf(e.stderr, "Run %d is paused. Continue it with:\n  tribunal run --resume %d%s\n", run.ID, run.ID, file)
			return &exitError{code: ExitInterrupted}
		case <-deadline:
			prog.event(fmt.Sprintf("Run %d took longer than --timeout %s: cancelling it", run.ID, timeout))
			eng.Cancel(bg, run.ID)
			stopAll()
			prog.finish()
			return failErr("run %d cancelled after --timeout %s", run.ID, timeout)
		case <-sub:
		case <-tick.C:
		}
		cur, err := st.Run(bg, run.ID)
		if err != nil {
			return failErr("%v", err)
		}
		p, err := st.RunProgress(bg, run.ID)
		if err != nil {
			return failErr("%v", err)
		}
		work, _ := st.RunCurrent(bg, run.ID)
		model := ""
		if work == nil && cur.Phase == store.PhaseBenchmarking {
			if ts, _ := st.PendingTargets(bg, run.ID); len(ts) > 0 {
				// One group per provider runs at a time; these come next.
				var labels []string
				for _, t := range store.LaneHeads(ts) {
					labels = append(labels, t.Label())
				}
				model = "next: " + strings.Join(labels, ", ")
			}
		}
		logs, _ := st.RunLogs(bg, run.ID, lastLog, 500)
		for _, l := range logs {
			lastLog = max(lastLog, l.ID)
			if l.Level == store.LogError {
				line := "✗ " + l.Message
				if l.Detail != "" {
					line += ": " + oneLine(l.Detail, 300)
				}
				prog.event(line)
			}
		}
		elapsed := time.Since(start)
		if cur.FinishedAt != nil && cur.StartedAt != nil {
			elapsed = cur.FinishedAt.Sub(*cur.StartedAt)
		}
		prog.update(snapshot{Status: cur.Status, Phase: cur.Phase, Progress: p, Current: work, Judged: judged, Model: model,
			Elapsed: elapsed, Finishing: !cur.Active()})
		if !cur.Active() {
			prog.finish()
			return nil
		}
	}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
