package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

// formErrors turns the error of a refused form into messages by field. A
// field the form does not show (fieldOf answers "") goes to the top of the
// form. ok is false when the error is not the user's to fix.
func formErrors(err error, fieldOf func(field, msg string) string) (status int, errs views.FieldErrors, ok bool) {
	status, msg, ok := formProblem(err)
	if !ok {
		return 0, nil, false
	}
	var ve *store.ValidationError
	if errors.As(err, &ve) && ve.Field != "" {
		if f := fieldOf(ve.Field, ve.Message); f != "" {
			return status, views.FieldErrors{f: ve.Message}, true
		}
	}
	return status, views.FieldErrors{"": msg}, true
}

// ---- judges ----

var judgeFields = []string{"name", "provider_id", "model", "personality_name", "personality_description",
	"style_id", "settings.temperature", "settings.max_tokens", "settings.reasoning_effort"}

func judgeField(field, _ string) string {
	if slices.Contains(judgeFields, field) {
		return field
	}
	return ""
}

func (h *Handler) showJudges(c echo.Context) error {
	var form views.JudgeForm
	st, err := h.store.DefaultStyle(c.Request().Context())
	if err != nil {
		return err
	}
	form.Input.StyleID = st.ID
	return h.renderJudges(c, http.StatusOK, form)
}

// judgeChoices fills what the judge form lets the user pick.
func (h *Handler) judgeChoices(ctx context.Context, f *views.JudgeForm) error {
	var err error
	if f.Providers, err = h.store.Providers(ctx); err != nil {
		return err
	}
	f.Styles, err = h.store.Styles(ctx)
	return err
}

func (h *Handler) renderJudges(c echo.Context, status int, form views.JudgeForm) error {
	ctx := c.Request().Context()
	if err := h.judgeChoices(ctx, &form); err != nil {
		return err
	}
	judges, err := h.store.Judges(ctx)
	if err != nil {
		return err
	}
	providers := map[int64]string{}
	for _, p := range form.Providers {
		providers[p.ID] = p.Name
	}
	styles := map[int64]*store.JudgementStyle{}
	for i := range form.Styles {
		styles[form.Styles[i].ID] = &form.Styles[i]
	}
	rows := make([]views.JudgeRow, len(judges))
	for i, j := range judges {
		rows[i] = views.JudgeRow{Judge: j, Style: styles[j.StyleID]}
		if j.ProviderID != nil {
			rows[i].Provider = providers[*j.ProviderID]
		}
	}
	return render(c, status, views.JudgesPage(rows, form.Styles, form))
}

// judgeForm reads the judge form; the returned form keeps what was typed.
func judgeForm(c echo.Context) (views.JudgeForm, error) {
	f := views.JudgeForm{
		Input: store.JudgeInput{Name: c.FormValue("name"), Model: c.FormValue("model"),
			PersonalityName: c.FormValue("personality_name"), PersonalityDescription: c.FormValue("personality_description"),
			Settings: store.TargetSettings{ReasoningEffort: c.FormValue("reasoning_effort")}},
		Temperature: strings.TrimSpace(c.FormValue("temperature")),
		MaxTokens:   strings.TrimSpace(c.FormValue("max_tokens")),
	}
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	id := func(field string) int64 {
		v := strings.TrimSpace(c.FormValue(field))
		if v == "" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			keep(&store.ValidationError{Field: field, Message: fmt.Sprintf("is not a valid choice: %q", v)})
		}
		return n
	}
	f.Input.ProviderID = id("provider_id")
	f.Input.StyleID = id("style_id")
	if f.Temperature != "" {
		t, err := strconv.ParseFloat(f.Temperature, 64)
		if err != nil {
			keep(&store.ValidationError{Field: "settings.temperature", Message: fmt.Sprintf("must be a number, got %q", f.Temperature)})
		}
		f.Input.Settings.Temperature = &t
	}
	if f.MaxTokens != "" {
		n, err := strconv.ParseInt(f.MaxTokens, 10, 64)
		if err != nil {
			keep(&store.ValidationError{Field: "settings.max_tokens", Message: fmt.Sprintf("must be a whole number, got %q", f.MaxTokens)})
		}
		f.Input.Settings.MaxTokens = &n
	}
	return f, firstErr
}

func (h *Handler) createJudgePage(c echo.Context) error {
	f, err := judgeForm(c)
	if err == nil {
		_, err = h.store.CreateJudge(withoutCancel(c), f.Input)
	}
	if err != nil {
		status, errs, ok := formErrors(err, judgeField)
		if !ok {
			return err
		}
		f.Errors = errs
		return h.renderJudges(c, status, f)
	}
	return redirectFlash(c, "Judge created.", "/judges")
}

func (h *Handler) editJudgePage(c echo.Context) error {
	id, err := pathID(c, "judge")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	j, err := h.store.Judge(ctx, id)
	if err != nil {
		return err
	}
	f := views.JudgeForm{ID: id, Version: j.Version, Input: store.JudgeInput{Name: j.Name, Model: j.Model,
		PersonalityName: j.PersonalityName, PersonalityDescription: j.PersonalityDescription, StyleID: j.StyleID, Settings: j.Settings}}
	if j.ProviderID != nil {
		f.Input.ProviderID = *j.ProviderID
	}
	if t := j.Settings.Temperature; t != nil {
		f.Temperature = strconv.FormatFloat(*t, 'f', -1, 64)
	}
	if n := j.Settings.MaxTokens; n != nil {
		f.MaxTokens = strconv.FormatInt(*n, 10)
	}
	if err := h.judgeChoices(ctx, &f); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.JudgeEditPage(f))
}

func (h *Handler) updateJudgePage(c echo.Context) error {
	id, err := pathID(c, "judge")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	j, err := h.store.Judge(ctx, id)
	if err != nil {
		return err
	}
	f, err := judgeForm(c)
	f.ID, f.Version = id, j.Version
	// The form has no system prompt field: keep one set through the API.
	f.Input.Settings.SystemPrompt = j.Settings.SystemPrompt
	if err == nil {
		_, err = h.store.UpdateJudge(withoutCancel(c), id, f.Input)
	}
	if err != nil {
		status, errs, ok := formErrors(err, judgeField)
		if !ok {
			return err
		}
		f.Errors = errs
		if err := h.judgeChoices(ctx, &f); err != nil {
			return err
		}
		return render(c, status, views.JudgeEditPage(f))
	}
	return redirectFlash(c, "Judge saved.", "/judges")
}

func (h *Handler) deleteJudgePage(c echo.Context) error {
	id, err := pathID(c, "judge")
	if err != nil {
		return err
	}
	if err := h.store.DeleteJudge(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Judge deleted.", "/judges")
}
