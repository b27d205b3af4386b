package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/runs"
	"tribunal/store"
	"tribunal/views"
)

// Server-Sent Events for a run. The stream is driven by the database, not
// by the events themselves: a broker signal (or a heartbeat tick) makes the
// handler read log entries after its cursor (see logCursor) and the current
// progress. So a burst of changes costs one read, a reconnect with
// Last-Event-ID replays what was missed, and work done by another process
// shows up too.

const (
	sseMinInterval = 250 * time.Millisecond // coalesce updates: at most 4 frames a second
	sseHeartbeat   = 15 * time.Second
	sseLogBatch    = 500
	// sseWriteTimeout bounds each write, instead of the server's WriteTimeout
	// bounding the whole stream; a client that stops reading frees its stream.
	sseWriteTimeout = 30 * time.Second
)

// runFrame is one coalesced update: new log entries and the run's state.
type runFrame struct {
	run      *store.Run
	progress runs.Progress
	current  *store.CurrentWork
	running  []runs.RunningGroup
	budget   runs.Budget
	logs     []store.RunLog
}

// frameWriter turns a frame into SSE events.
type frameWriter func(w *sseWriter, f *runFrame, progressChanged bool) error

type sseWriter struct {
	c  echo.Context
	rc *http.ResponseController
}

// event writes one event, the only way either stream writes one.
func (s *sseWriter) event(id, name, data string) error {
	var b bytes.Buffer
	sseFrame(&b, id, name, data)
	s.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	if _, err := s.c.Response().Write(b.Bytes()); err != nil {
		return err
	}
	s.c.Response().Flush()
	return nil
}

// sseFrame frames one event. An EventSource ends a line at CRLF, CR or LF,
// so data is split at all three: splitting at LF alone would let a bare CR
// in a model's answer start a line of its own ("event: end", "id: 999").
// The id and name are ours; a line break in them is dropped all the same.
func sseFrame(b *bytes.Buffer, id, name, data string) {
	if id = sseLineBreaks.Replace(id); id != "" {
		fmt.Fprintf(b, "id: %s\n", id)
	}
	fmt.Fprintf(b, "event: %s\n", sseLineBreaks.Replace(name))
	for _, line := range strings.Split(sseNewlines.Replace(data), "\n") {
		fmt.Fprintf(b, "data: %s\n", line)
	}
	b.WriteString("\n")
}

var (
	sseNewlines   = strings.NewReplacer("\r\n", "\n", "\r", "\n")
	sseLineBreaks = strings.NewReplacer("\r", "", "\n", "")
)

func (s *sseWriter) comment(text string) error {
	s.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	if _, err := fmt.Fprintf(s.c.Response(), ": %s\n\n", text); err != nil {
		return err
	}
	s.c.Response().Flush()
	return nil
}

// lastEventID is where a client resumes: the Last-Event-ID header of a
// reconnect, else the ?after= the page was rendered with.
func lastEventID(c echo.Context) int64 {
	for _, v := range []string{c.Request().Header.Get("Last-Event-ID"), c.QueryParam("after")} {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil && id >= 0 {
			return id
		}
	}
	return 0
}

// endSettle is how long a stream that sees its run end reads on before it
// ends: several of the engines' log flushes (every 100 ms), which bring the
// entries of the run's last calls. The wait is here, not in the engine that
// ends the run: those entries may sit in another process's log buffer.
const endSettle = 500 * time.Millisecond

// endedLongAgo reports whether the run ended more than endSettle ago: its
// stream then has every entry already.
func endedLongAgo(run *store.Run) bool {
	return run.FinishedAt != nil && time.Since(*run.FinishedAt) > endSettle
}

func (h *Handler) streamRun(c echo.Context, write frameWriter) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := h.store.Run(ctx, id); err != nil {
		return err
	}
	sig, unsub := h.engine.Broker().Subscribe(id)
	defer unsub()
	defer h.metrics.StreamOpened()()

	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "text/event-stream")
	res.Header().Set(echo.HeaderCacheControl, "no-cache")
	res.Header().Set("X-Accel-Buffering", "no")
	res.WriteHeader(http.StatusOK)
	// A stream outlives the server's WriteTimeout: each write sets its own
	// deadline (net/http already lifts the read deadline once the request is read).
	w := &sseWriter{c: c, rc: http.NewResponseController(res)}
	if err := w.comment("connected"); err != nil {
		return nil
	}

	cursor := newLogCursor(h.store, lastEventID(c))
	var lastProgress string
	var endedAt time.Time // when this stream first saw the run over
	heartbeat := time.NewTicker(sseHeartbeat)
	defer heartbeat.Stop()
	for {
		f, more, err := h.readFrame(ctx, id, cursor)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			w.event("", "error", "run unavailable")
			return nil
		}
		key := progressKey(f)
		if len(f.logs) > 0 || key != lastProgress {
			if err := write(w, f, key != lastProgress); err != nil {
				return nil // client went away
			}
			lastProgress = key
		}
		if more {
			continue // more backlog to replay
		}
		if !f.run.Active() {
			if endedAt.IsZero() {
				endedAt = time.Now()
			}
			if wait := endSettle - time.Since(endedAt); wait > 0 && !endedLongAgo(f.run) {
				// The entries of a run's last calls are logged as their results
				// are stored, and land with a log flush after the run ends:
				// one more read, once they have, before the stream ends.
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(wait):
				}
				continue
			}
			w.event("", "end", string(f.run.Status))
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-heartbeat.C:
			if err := w.comment("ping"); err != nil {
				return nil
			}
		case <-sig:
			// Coalesce: wait a little so a burst becomes one frame.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(sseMinInterval):
			}
		}
	}
}

func (h *Handler) readFrame(ctx context.Context, runID int64, cursor *logCursor) (f *runFrame, more bool, err error) {
	run, err := h.store.Run(ctx, runID)
	if err != nil {
		return nil, false, err
	}
	f = &runFrame{run: run}
	if f.logs, more, err = cursor.next(ctx, runID); err != nil {
		return nil, false, err
	}
	if f.progress, err = h.runs.Progress(ctx, run); err != nil {
		return nil, false, err
	}
	if f.current, err = h.store.RunCurrent(ctx, runID); err != nil {
		return nil, false, err
	}
	if f.running, err = h.runs.Running(ctx, run); err != nil {
		return nil, false, err
	}
	if f.budget, err = h.budgetOf(ctx, run); err != nil {
		return nil, false, err
	}
	return f, more, nil
}

func progressKey(f *runFrame) string {
	cur := ""
	if f.current != nil {
		cur = f.current.TaskID + "|" + f.current.Model + "|" + string(f.current.Status)
	}
	// The spend moves the panel too: its cost line follows the run.
	return fmt.Sprintf("%s|%s|%v|%s|%g|%v", f.run.Status, f.run.Phase, f.progress.ByStatus, cur, f.budget.SpentUSD, f.running)
}

// ProgressEventJSON is the data of a "progress" event.
type ProgressEventJSON struct {
	Status   store.RunStatus    `json:"status"`
	Phase    store.Phase        `json:"phase"`
	Progress runs.Progress      `json:"progress"`
	Current  *store.CurrentWork `json:"current"`
	// RunningGroups are the groups working now (GET /api/runs/{id}'s running_groups).
	RunningGroups []runs.RunningGroup `json:"running_groups"`
}

// apiRunEvents streams JSON events: "log" (one per entry, id = entry id),
// "progress" (the run's status and counts) and "end" when the run is over.
func (h *Handler) apiRunEvents(c echo.Context) error {
	return h.streamRun(c, func(w *sseWriter, f *runFrame, progressChanged bool) error {
		for _, l := range f.logs {
			b, _ := json.Marshal(l)
			if err := w.event(strconv.FormatInt(l.ID, 10), "log", string(b)); err != nil {
				return err
			}
		}
		if !progressChanged {
			return nil
		}
		b, _ := json.Marshal(ProgressEventJSON{Status: f.run.Status, Phase: f.run.Phase, Progress: f.progress, Current: f.current,
			RunningGroups: f.running})
		return w.event("", "progress", string(b))
	})
}

// pageRunEvents streams HTML fragments for the run page: "log" appends the
// new entries in one swap, "progress" replaces the progress panel.
func (h *Handler) pageRunEvents(c echo.Context) error {
	return h.streamRun(c, func(w *sseWriter, f *runFrame, progressChanged bool) error {
		if len(f.logs) > 0 {
			var b bytes.Buffer
			if err := views.LogEntries(f.logs).Render(c.Request().Context(), &b); err != nil {
				return err
			}
			if err := w.event(strconv.FormatInt(maxLogID(f.logs), 10), "log", b.String()); err != nil {
				return err
			}
		}
		if !progressChanged {
			return nil
		}
		var b bytes.Buffer
		if err := views.RunProgress(progressView(f.run, f.progress, f.current, f.running, f.budget)).Render(c.Request().Context(), &b); err != nil {
			return err
		}
		return w.event("", "progress", b.String())
	})
}

func maxLogID(logs []store.RunLog) int64 {
	var m int64
	for _, l := range logs {
		m = max(m, l.ID)
	}
	return m
}
