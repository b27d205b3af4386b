package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/schedule"
	"tribunal/store"
	"tribunal/watch"
)

// scheduleBody is a schedule as the API reads it.
type scheduleBody struct {
	Name string `json:"name"`
	// Trigger is CRON (the default), WEBHOOK or EVENT.
	Trigger string `json:"trigger"`
	// Cron is required for CRON only.
	Cron string `json:"cron"`
	// Event (import.finished or run.finished) and EventSourceID (import.finished only) are EVENT's.
	Event                  string          `json:"event"`
	EventSourceID          *int64          `json:"event_source_id"`
	Timezone               string          `json:"timezone"`
	Enabled                bool            `json:"enabled"`
	MaxConsecutiveFailures int             `json:"max_consecutive_failures"`
	AutoDisableOnFailure   bool            `json:"auto_disable_on_failure"`
	Template               *store.RunInput `json:"template"`
}

func (b scheduleBody) input() (store.ScheduleInput, error) {
	if b.Template == nil {
		return store.ScheduleInput{}, &store.ValidationError{Field: "template", Message: "is required: the body of POST /api/runs (judge, targets, collection_ids, …)"}
	}
	return store.ScheduleInput{Name: b.Name, Trigger: b.Trigger, Cron: b.Cron, Event: b.Event, EventSourceID: b.EventSourceID,
		Timezone: b.Timezone, Enabled: b.Enabled,
		MaxConsecutiveFailures: b.MaxConsecutiveFailures, AutoDisableOnFailure: b.AutoDisableOnFailure, Template: *b.Template}, nil
}

func scheduleBodyOf(s *store.Schedule) scheduleBody {
	t := s.Template
	return scheduleBody{Name: s.Name, Trigger: s.Trigger, Cron: s.Cron, Event: s.Event, EventSourceID: s.EventSourceID,
		Timezone: s.Timezone, Enabled: s.Enabled,
		MaxConsecutiveFailures: s.MaxConsecutiveFailures, AutoDisableOnFailure: s.AutoDisableOnFailure, Template: &t}
}

// ScheduleJSON is a schedule as the API shows it, with its next occurrences.
type ScheduleJSON struct {
	*store.Schedule
	Upcoming []time.Time `json:"upcoming"`
}

func scheduleJSON(s *store.Schedule) ScheduleJSON {
	return ScheduleJSON{Schedule: s, Upcoming: upcoming(s, 3)}
}

// upcoming lists an enabled schedule's next n occurrences in its time zone.
func upcoming(s *store.Schedule, n int) []time.Time {
	out := []time.Time{}
	spec, err := schedule.Parse(s.Cron, s.Timezone)
	if err != nil || !s.Enabled || s.NextRunAt == nil {
		return out
	}
	t := s.NextRunAt.Add(-time.Nanosecond)
	if s.WaitingSince != nil {
		t = time.Now()
	}
	for range n {
		if t = spec.Next(t); t.IsZero() {
			break
		}
		out = append(out, t.In(spec.Location()))
	}
	return out
}

func (h *Handler) apiListSchedules(c echo.Context) error {
	list, err := h.store.Schedules(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]ScheduleJSON, len(list))
	for i := range list {
		out[i] = scheduleJSON(&list[i])
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) apiGetSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	s, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, scheduleJSON(s))
}

func (h *Handler) apiCreateSchedule(c echo.Context) error {
	var b scheduleBody
	if _, err := bindMerge(c, scheduleBody{Enabled: true, Timezone: "UTC", MaxConsecutiveFailures: 3, AutoDisableOnFailure: true}, &b); err != nil {
		return err
	}
	in, err := b.input()
	if err != nil {
		return err
	}
	s, err := h.store.CreateSchedule(withoutCancel(c), in, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, scheduleJSON(s))
}

func (h *Handler) apiUpdateSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	cur, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	var b scheduleBody
	if _, err := bindMerge(c, scheduleBodyOf(cur), &b); err != nil {
		return err
	}
	in, err := b.input()
	if err != nil {
		return err
	}
	s, err := h.store.UpdateSchedule(withoutCancel(c), id, in, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, scheduleJSON(s))
}

func (h *Handler) apiDeleteSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	if err := h.store.DeleteSchedule(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *Handler) apiRunSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	run, err := watch.RunNow(withoutCancel(c), h.store, h.runs, id, "API", time.Now())
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

// scheduleTokenHeader carries a WEBHOOK schedule's token.
const scheduleTokenHeader = "X-Tribunal-Token"

// apiTriggerSchedule is a WEBHOOK schedule's webhook. Its token is its own
// credential: requireAuth lets this one route through without the server's.
func (h *Handler) apiTriggerSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	run, err := watch.Trigger(withoutCancel(c), h.store, h.runs, id, c.Request().Header.Get(scheduleTokenHeader), time.Now())
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (h *Handler) apiRotateScheduleToken(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	s, err := h.store.RotateScheduleToken(withoutCancel(c), id, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, scheduleJSON(s))
}

func (h *Handler) apiScheduleHistory(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	if _, err := h.store.Schedule(c.Request().Context(), id); err != nil {
		return err
	}
	limit, err := queryInt(c, "limit")
	if err != nil {
		return err
	}
	if limit == 0 {
		limit = 100
	}
	fs, err := h.store.ScheduleFirings(c.Request().Context(), id, min(limit, 1000))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, fs)
}
