package handlers

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/importer"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/views"
)

// outputsParams reads how a file of outputs is scored, from the query or
// the form: judge_provider_id and judge_model, or judge_ids (comma
// separated or repeated), checks likewise, collection, name and tags.
func outputsParams(c echo.Context) (runs.OutputsOptions, error) {
	param := func(name string) string {
		return strings.TrimSpace(cmp.Or(c.QueryParam(name), c.FormValue(name)))
	}
	list := func(name string) []string {
		var out []string
		vals := c.QueryParams()[name]
		if form, err := c.FormParams(); err == nil && len(vals) == 0 {
			vals = form[name]
		}
		for _, v := range vals {
			for _, part := range strings.Split(v, ",") {
				if part = strings.TrimSpace(part); part != "" {
					out = append(out, part)
				}
			}
		}
		return out
	}
	o := runs.OutputsOptions{Checks: list("checks"), Collection: param("collection"), Name: param("name"), Tags: store.ParseTags(param("tags"))}
	for _, v := range list("judge_ids") {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return o, &store.ValidationError{Field: "judge_ids", Message: fmt.Sprintf("%q is not a judge's id", v)}
		}
		o.JudgeIDs = append(o.JudgeIDs, id)
	}
	provider, model := param("judge_provider_id"), param("judge_model")
	switch {
	case provider == "" && model == "":
	case provider == "":
		return o, &store.ValidationError{Field: "judge_provider_id", Message: "is required with judge_model"}
	case model == "":
		return o, &store.ValidationError{Field: "judge_model", Message: "is required with judge_provider_id"}
	default:
		id, err := strconv.ParseInt(provider, 10, 64)
		if err != nil || id <= 0 {
			return o, &store.ValidationError{Field: "judge_provider_id", Message: fmt.Sprintf("%q is not a provider's id", provider)}
		}
		o.Judge = &store.ModelRef{ProviderID: id, Model: model}
	}
	return o, nil
}

// importOutputs reads an uploaded file of outputs and imports it as a run
// scored as the request asks; bad rows, read or found, are importProblems.
func (h *Handler) importOutputs(c echo.Context, triggeredBy string) (*runs.OutputsImport, error) {
	o, err := outputsParams(c)
	if err != nil {
		return nil, err
	}
	o.TriggeredBy = triggeredBy
	u, err := readUpload(c)
	if err != nil {
		return nil, err
	}
	read := importer.ReadOutputs(u.file, u.data, u.format)
	if len(read.Errors) > 0 {
		return nil, &importProblems{name: u.file, errs: read.Errors}
	}
	res, err := h.runs.ImportOutputs(withoutCancel(c), read.Rows, o)
	var es importer.Errors
	if errors.As(err, &es) {
		return nil, &importProblems{name: u.file, errs: es}
	}
	return res, err
}

// apiImportOutputs is POST /api/import?kind=outputs: a CSV or JSONL file of
// answers that exist already, scored by a judge (judge_provider_id and
// judge_model, or judge_ids) and/or checks. It answers 201 {run_id,
// collection_id, tasks_created, tasks_updated, items, models}, or 422 with
// every bad row.
func (h *Handler) apiImportOutputs(c echo.Context) error {
	res, err := h.importOutputs(c, "API")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, res)
}

// outputsForm is the Import page's outputs mode with its pickers filled.
func (h *Handler) outputsForm(c echo.Context, f views.ImportOutputsForm) (views.ImportOutputsForm, error) {
	ctx := c.Request().Context()
	f.CheckTypes = runs.TextChecks()
	var err error
	if f.Providers, err = h.store.Providers(ctx); err != nil {
		return f, err
	}
	if f.Judges, err = h.store.Judges(ctx); err != nil {
		return f, err
	}
	return f, nil
}

// importOutputsPage is the Import page's "Your own outputs" form posted:
// on success the browser goes to the new run's page; otherwise the form
// comes back with the problem, or with every bad row.
func (h *Handler) importOutputsPage(c echo.Context) error {
	f := views.ImportOutputsForm{Collection: c.FormValue("collection"), Name: c.FormValue("name"), Text: c.FormValue("text"),
		Judge: views.ModelChoice{Model: c.FormValue("judge_model")}, Panel: map[int64]bool{}, Checks: map[string]bool{}}
	f.Judge.ProviderID, _ = strconv.ParseInt(c.FormValue("judge_provider_id"), 10, 64)
	if form, err := c.FormParams(); err == nil {
		for _, v := range form["judge_ids"] {
			if id, err := strconv.ParseInt(v, 10, 64); err == nil {
				f.Panel[id] = true
			}
		}
		for _, v := range form["checks"] {
			f.Checks[v] = true
		}
	}
	res, err := h.importOutputs(c, "MANUAL")
	if err == nil {
		return redirect(c, fmt.Sprintf("/runs/%d", res.RunID))
	}
	var ip *importProblems
	status, msg, ok := formProblem(err)
	switch {
	case errors.As(err, &ip):
		f.Error = ip.Error()
		for i, e := range ip.errs {
			if i == previewProblems {
				f.MoreProblems = len(ip.errs) - i
				break
			}
			f.Problems = append(f.Problems, importProblem(e))
		}
	case errors.Is(err, errNoUpload):
		status, f.Error = http.StatusUnprocessableEntity, "Choose a file of outputs, or paste it."
	case ok:
		f.Error = msg
	default:
		return err
	}
	if f, err = h.outputsForm(c, f); err != nil {
		return err
	}
	return render(c, status, views.ImportOutputsPage(f))
}

// showImportOutputs is the Import page in its outputs mode.
func (h *Handler) showImportOutputs(c echo.Context) error {
	f, err := h.outputsForm(c, views.ImportOutputsForm{Collection: c.QueryParam("collection")})
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ImportOutputsPage(f))
}
