package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/schedule"
	"tribunal/store"
	"tribunal/views"
	"tribunal/watch"
)

// ---- schedules ----

var scheduleFields = []string{"name", "trigger", "cron", "event", "event_source_id", "timezone", "max_consecutive_failures"}

// scheduleField places a schedule error on its field; the run template's
// problems go above the template.
func scheduleField(field, _ string) string {
	if slices.Contains(scheduleFields, field) {
		return field
	}
	if strings.HasPrefix(field, "template") {
		return "template"
	}
	return ""
}

// runChoices fills what the schedule's run template lets the user pick.
func (h *Handler) runChoices(ctx context.Context, f *views.NewRunForm) error {
	var err error
	if f.Providers, err = h.store.Providers(ctx); err != nil {
		return err
	}
	if f.Collections, err = h.store.Collections(ctx); err != nil {
		return err
	}
	if f.UseCases, err = h.store.UseCases(ctx); err != nil {
		return err
	}
	if f.Judges, err = h.store.Judges(ctx); err != nil {
		return err
	}
	if len(f.Targets) == 0 {
		f.Targets = []views.ModelChoice{{}}
	}
	return nil
}

// templateForm shows a stored run template in the new-run form's shape.
func templateForm(in store.RunInput) views.NewRunForm {
	f := views.NewRunForm{Name: in.Name, Selected: map[int64]bool{}, Panel: map[int64]bool{}, Checks: map[string]bool{},
		SystemPrompt: in.SystemPrompt, Pairwise: in.Pairwise, Pipeline: in.Pipeline}
	if in.Repeats > 1 {
		f.Repeats = strconv.Itoa(in.Repeats)
	}
	if in.Judge != nil {
		f.Judge = views.ModelChoice{ProviderID: in.Judge.ProviderID, Model: in.Judge.Model}
	}
	for _, id := range in.JudgeIDs {
		f.Panel[id] = true
	}
	f.ChecksOnly = in.Judge == nil && len(in.JudgeIDs) == 0 && len(in.Metrics) > 0
	for _, m := range in.Metrics {
		f.Checks[m] = true
	}
	for _, t := range in.Targets {
		mc := views.ModelChoice{ProviderID: t.ProviderID, Model: t.Model, ReasoningEffort: t.Settings.ReasoningEffort,
			SystemPrompt: t.Settings.SystemPrompt, Version: t.Version}
		if t.Settings.Temperature != nil {
			mc.Temperature = strconv.FormatFloat(*t.Settings.Temperature, 'f', -1, 64)
		}
		if t.Settings.MaxTokens != nil {
			mc.MaxTokens = strconv.FormatInt(*t.Settings.MaxTokens, 10)
		}
		f.Targets = append(f.Targets, mc)
	}
	for _, id := range in.CollectionIDs {
		f.Selected[id] = true
	}
	f.UseCasePicked, f.CategoryPicked = map[string]bool{}, map[store.CategoryRef]bool{}
	for _, u := range in.UseCases {
		f.UseCasePicked[u] = true
	}
	for _, ref := range in.Categories {
		f.CategoryPicked[ref] = true
	}
	return f
}

// scheduleForm reads the schedule form; the run template comes from the
// same fields as the new-run form. prev is the stored template, whose
// settings the form does not show (weights, the judge's settings) stay.
func scheduleForm(c echo.Context, prev *store.RunInput) (store.ScheduleInput, views.ScheduleForm, error) {
	f := views.ScheduleForm{Name: c.FormValue("schedule_name"), Trigger: c.FormValue("trigger"), Event: c.FormValue("event"),
		EventSourceID: strings.TrimSpace(c.FormValue("event_source_id")), Cron: c.FormValue("cron"), Timezone: c.FormValue("timezone"),
		Enabled: c.FormValue("enabled") != "", AutoDisable: c.FormValue("auto_disable_on_failure") != "",
		MaxFailures: strings.TrimSpace(c.FormValue("max_consecutive_failures"))}
	tmpl, run, err := runFormInput(c)
	f.Run = run
	in := store.ScheduleInput{Name: f.Name, Trigger: f.Trigger, Cron: f.Cron, Event: f.Event, Timezone: f.Timezone,
		Enabled: f.Enabled, AutoDisableOnFailure: f.AutoDisable}
	// The source filter belongs to import.finished only; elsewhere the hidden field is ignored.
	if f.EventSourceID != "" && f.Trigger == store.TriggerEvent && f.Event == store.EventImportFinished {
		id, err := strconv.ParseInt(f.EventSourceID, 10, 64)
		if err != nil || id < 1 {
			return in, f, &store.ValidationError{Field: "event_source_id", Message: fmt.Sprintf("must be a source's id, got %q", f.EventSourceID)}
		}
		in.EventSourceID = &id
	}
	if err != nil {
		if ve, ok := err.(*store.ValidationError); ok {
			err = &store.ValidationError{Field: "template." + ve.Field, Message: ve.Message}
		}
		return in, f, err
	}
	if prev != nil {
		tmpl.Weights = prev.Weights
		if prev.Judge != nil && tmpl.Judge != nil && prev.Judge.ProviderID == tmpl.Judge.ProviderID && prev.Judge.Model == tmpl.Judge.Model {
			tmpl.Judge.Settings = prev.Judge.Settings
		}
	}
	in.Template = tmpl
	if f.MaxFailures != "" {
		n, err := strconv.Atoi(f.MaxFailures)
		if err != nil {
			return in, f, &store.ValidationError{Field: "max_consecutive_failures", Message: fmt.Sprintf("must be a whole number, got %q", f.MaxFailures)}
		}
		in.MaxConsecutiveFailures = n
	}
	return in, f, nil
}

func (h *Handler) showSchedules(c echo.Context) error {
	f := views.ScheduleForm{Trigger: store.TriggerCron, Enabled: true, AutoDisable: true, Timezone: "UTC", Cron: "0 0 3 * * *", MaxFailures: "3"}
	return h.renderSchedules(c, http.StatusOK, f)
}

func (h *Handler) renderSchedules(c echo.Context, status int, f views.ScheduleForm) error {
	ctx := c.Request().Context()
	if err := h.runChoices(ctx, &f.Run); err != nil {
		return err
	}
	list, err := h.store.Schedules(ctx)
	if err != nil {
		return err
	}
	v := views.SchedulesView{Form: f, Unread: h.unread(ctx)}
	for _, s := range list {
		row := views.ScheduleRow{Schedule: s}
		if s.LastRunID != nil {
			if r, err := h.store.Run(ctx, *s.LastRunID); err == nil {
				row.LastRun = r
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return render(c, status, views.SchedulesPage(v))
}

func (h *Handler) createSchedulePage(c echo.Context) error {
	in, f, err := scheduleForm(c, nil)
	var s *store.Schedule
	if err == nil {
		s, err = h.store.CreateSchedule(withoutCancel(c), in, time.Now())
	}
	if err != nil {
		status, errs, ok := formErrors(err, scheduleField)
		if !ok {
			return err
		}
		f.Errors = errs
		return h.renderSchedules(c, status, f)
	}
	if s.Token != "" {
		// The token exists in clear only in this reply: show the page with it
		// rather than redirect, which would lose it.
		return h.renderSchedule(c, http.StatusCreated, s, scheduleFormOf(s))
	}
	return redirectFlash(c, "Schedule created.", fmt.Sprintf("/schedules/%d", s.ID))
}

// scheduleFormOf fills the edit form from a stored schedule.
func scheduleFormOf(s *store.Schedule) views.ScheduleForm {
	f := views.ScheduleForm{ID: s.ID, Name: s.Name, Trigger: s.Trigger, Event: s.Event, Cron: s.Cron, Timezone: s.Timezone,
		Enabled: s.Enabled, AutoDisable: s.AutoDisableOnFailure, MaxFailures: strconv.Itoa(s.MaxConsecutiveFailures), Run: templateForm(s.Template)}
	if s.EventSourceID != nil {
		f.EventSourceID = strconv.FormatInt(*s.EventSourceID, 10)
	}
	return f
}

// webhookURL is the absolute URL of a schedule's webhook, as this request reached the server.
func webhookURL(c echo.Context, id int64) string {
	return fmt.Sprintf("%s://%s/api/schedules/%d/trigger", c.Scheme(), c.Request().Host, id)
}

// rotateScheduleTokenPage makes a new token and swaps the webhook panel for
// one that shows it, once.
func (h *Handler) rotateScheduleTokenPage(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	s, err := h.store.RotateScheduleToken(withoutCancel(c), id, time.Now())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.WebhookPanel(s.ID, webhookURL(c, s.ID), s.Token))
}

func (h *Handler) showSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	s, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return h.renderSchedule(c, http.StatusOK, s, scheduleFormOf(s))
}

func (h *Handler) renderSchedule(c echo.Context, status int, s *store.Schedule, f views.ScheduleForm) error {
	ctx := c.Request().Context()
	if err := h.runChoices(ctx, &f.Run); err != nil {
		return err
	}
	v := views.ScheduleView{Schedule: *s, WebhookURL: webhookURL(c, s.ID), Token: s.Token, Form: f, Upcoming: upcoming(s, 5), Unread: h.unread(ctx)}
	var err error
	if v.Firings, err = h.store.ScheduleFirings(ctx, s.ID, 100); err != nil {
		return err
	}
	kpis, err := h.store.KPIs(ctx)
	if err != nil {
		return err
	}
	for _, k := range kpis {
		if k.ScheduleID != nil && *k.ScheduleID == s.ID {
			v.KPIs = append(v.KPIs, k)
		}
	}
	return render(c, status, views.SchedulePage(v))
}

func (h *Handler) updateSchedulePage(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	cur, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in, f, err := scheduleForm(c, &cur.Template)
	f.ID = id
	var saved *store.Schedule
	if err == nil {
		saved, err = h.store.UpdateSchedule(withoutCancel(c), id, in, time.Now())
	}
	if err != nil {
		status, errs, ok := formErrors(err, scheduleField)
		if !ok {
			return err
		}
		f.Errors = errs
		return h.renderSchedule(c, status, cur, f)
	}
	if saved.Token != "" { // switched to WEBHOOK: its new token shows once, here
		return h.renderSchedule(c, http.StatusOK, saved, scheduleFormOf(saved))
	}
	return redirectFlash(c, "Schedule saved.", fmt.Sprintf("/schedules/%d", id))
}

func (h *Handler) toggleSchedulePage(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	s, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in, err := scheduleBodyOf(s).input()
	if err != nil {
		return err
	}
	in.Enabled = !s.Enabled
	if _, err := h.store.UpdateSchedule(withoutCancel(c), id, in, time.Now()); err != nil {
		return err
	}
	back := c.Request().Header.Get("HX-Current-URL")
	if !strings.Contains(back, fmt.Sprintf("/schedules/%d", id)) {
		back = "/schedules"
	} else {
		back = fmt.Sprintf("/schedules/%d", id)
	}
	msg := "Schedule enabled."
	if s.Enabled {
		msg = "Schedule disabled."
	}
	return redirectFlash(c, msg, back)
}

func (h *Handler) runSchedulePage(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	run, err := watch.RunNow(withoutCancel(c), h.store, h.runs, id, "MANUAL", time.Now())
	if err != nil {
		return err
	}
	return redirectFlash(c, "Run started from the schedule.", fmt.Sprintf("/runs/%d", run.ID))
}

func (h *Handler) deleteSchedulePage(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	if err := h.store.DeleteSchedule(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Schedule deleted.", "/schedules")
}

// cronPreview shows the next occurrences of the expression being typed.
func (h *Handler) cronPreview(c echo.Context) error {
	expr := strings.TrimSpace(c.FormValue("cron"))
	if expr == "" {
		return render(c, http.StatusOK, views.CronPreview(nil, ""))
	}
	spec, err := schedule.Parse(expr, c.FormValue("timezone"))
	if err != nil {
		return render(c, http.StatusOK, views.CronPreview(nil, err.Error()))
	}
	var next []time.Time
	t := time.Now()
	for range 3 {
		if t = spec.Next(t); t.IsZero() {
			break
		}
		next = append(next, t.In(spec.Location()))
	}
	return render(c, http.StatusOK, views.CronPreview(next, ""))
}
