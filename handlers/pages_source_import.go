package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/runs"
	"tribunal/store"
	"tribunal/views"
)

// showSourceImport is the form importing a dataset run of a source; it
// starts with the newest run and exact match on.
func (h *Handler) showSourceImport(c echo.Context) error {
	f := views.SourceImportForm{Latest: true, Panel: map[int64]bool{}, Checks: map[string]bool{"exact_match": true}}
	return h.renderSourceImport(c, http.StatusOK, f)
}

// renderSourceImport fills the form's source, providers and saved judges.
func (h *Handler) renderSourceImport(c echo.Context, status int, f views.SourceImportForm) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	src, err := h.store.Source(ctx, id)
	if err != nil {
		return err
	}
	f.Source = *src
	if f.Providers, err = h.store.Providers(ctx); err != nil {
		return err
	}
	if f.Judges, err = h.store.Judges(ctx); err != nil {
		return err
	}
	return render(c, status, views.SourceImportPage(f))
}

// sourceImportInput reads the import form into the use case's input; the
// returned form holds what was typed, to show again on a refusal.
func sourceImportInput(c echo.Context) (runs.SourceImport, views.SourceImportForm, error) {
	form, err := c.FormParams()
	if err != nil {
		return runs.SourceImport{}, views.SourceImportForm{}, badRequest("unreadable form: %v", err)
	}
	f := views.SourceImportForm{Dataset: form.Get("dataset"), Run: form.Get("run"), Latest: form.Get("latest") != "",
		Collection: form.Get("collection"), Rejudge: form.Get("rejudge") != "", Panel: map[int64]bool{}, Checks: map[string]bool{}}
	in := runs.SourceImport{Dataset: f.Dataset, Run: f.Run, Collection: f.Collection, Rejudge: f.Rejudge, TriggeredBy: "MANUAL"}
	if f.Latest {
		in.Run = "latest"
	}
	var firstErr error
	parseID := func(field, v string) int64 {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil && firstErr == nil {
			firstErr = &store.ValidationError{Field: field, Message: "is not a valid id"}
		}
		return id
	}
	f.Judge = views.ModelChoice{Model: form.Get("judge_model")}
	if v := form.Get("judge_provider_id"); strings.TrimSpace(v) != "" {
		f.Judge.ProviderID = parseID("judge", v)
	}
	for _, v := range form["judge_ids"] {
		if id := parseID("judge_ids", v); id > 0 {
			f.Panel[id] = true
			in.JudgeIDs = append(in.JudgeIDs, id)
		}
	}
	// A judge model applies unless a panel was picked; neither means checks alone.
	if len(in.JudgeIDs) == 0 && (f.Judge.ProviderID != 0 || strings.TrimSpace(f.Judge.Model) != "") {
		in.Judge = &store.ModelRef{ProviderID: f.Judge.ProviderID, Model: f.Judge.Model}
	}
	for _, t := range form["checks"] {
		f.Checks[t] = true
		in.Checks = append(in.Checks, runs.CheckSpec{Type: t})
	}
	return in, f, firstErr
}

// importSourcePage imports a dataset run through the same use case as the
// API, then opens the run; a refusal shows the form again, a dataset run
// imported before linking the run that holds it.
func (h *Handler) importSourcePage(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	in, f, err := sourceImportInput(c)
	var out *runs.SourceImported
	if err == nil {
		out, err = h.runs.ImportSource(c.Request().Context(), id, in)
	}
	if err != nil {
		status, msg, ok := formProblem(err)
		if !ok {
			return err
		}
		f.Error = msg
		if held := (*store.AlreadyImportedError)(nil); errors.As(err, &held) {
			// The API's hint ("send rejudge") reads as the checkbox here, beside the link.
			f.HeldBy = held.RunID
			f.Error = fmt.Sprintf("dataset run %q of %q is already imported.", held.Source.Run, held.Source.Dataset)
		}
		return h.renderSourceImport(c, status, f)
	}
	msg := fmt.Sprintf("Imported %s: %s.", plural(out.Items, "item"), importedCounts(out))
	if out.Rejudged {
		msg = "This dataset run was imported before: its answers are being judged again."
	}
	return redirectFlash(c, msg, fmt.Sprintf("/runs/%d", out.RunID))
}

// importedCounts says what an import did to the tasks and how many items failed.
func importedCounts(out *runs.SourceImported) string {
	s := fmt.Sprintf("%d tasks created, %d updated", out.TasksCreated, out.TasksUpdated)
	if out.Failed > 0 {
		s += fmt.Sprintf(", %s without an answer", plural(out.Failed, "item"))
	}
	return s
}

// rejudgePage judges every answer of an ended run again (an imported run's
// stand-in for Re-run) and reloads the run page.
func (h *Handler) rejudgePage(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	n, err := h.runs.Rejudge(withoutCancel(c), id)
	if err != nil {
		return err
	}
	return redirectFlash(c, fmt.Sprintf("%s sent back to the judges.", plural(int(n), "answer")), fmt.Sprintf("/runs/%d", id))
}
