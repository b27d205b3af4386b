package handlers

import (
	"cmp"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"tribunal/importer"
	"tribunal/store"
	"tribunal/views"
)

// previewRows is a page of the preview; previewProblems bounds the listed
// problems (a file of 100k bad rows is fixed from the first ones).
const (
	previewRows     = 50
	previewProblems = 500
)

func importFormats() []string {
	out := make([]string, len(importer.Formats))
	for i, f := range importer.Formats {
		out[i] = string(f)
	}
	return out
}

func (h *Handler) showImport(c echo.Context) error {
	if c.QueryParam("mode") == "outputs" {
		return h.showImportOutputs(c)
	}
	f := views.ImportForm{Formats: importFormats(), Collection: c.QueryParam("collection")}
	return render(c, http.StatusOK, views.ImportPage(f, nil))
}

// renderImport answers HTMX with the preview partial and others with the whole page.
func (h *Handler) renderImport(c echo.Context, status int, f views.ImportForm, part templ.Component) error {
	if isHTMX(c) {
		return render(c, status, part)
	}
	f.Formats = importFormats()
	return render(c, status, views.ImportPage(f, part))
}

// importFormError shows an upload's problem above the form.
func (h *Handler) importFormError(c echo.Context, f views.ImportForm, err error) error {
	status, msg := statusOf(err)
	if errors.Is(err, errNoUpload) {
		status, msg = http.StatusUnprocessableEntity, "Choose a file or paste tasks."
	}
	f.Error = msg
	return h.renderImport(c, status, f, views.FormError(msg))
}

// previewImport parses an uploaded task file and shows what importing it
// would do: the counts, every problem and the first page of tasks. Nothing
// is written; the parsed file is kept (see importPreviews) for paging and
// for Import.
func (h *Handler) previewImport(c echo.Context) error {
	f := views.ImportForm{Format: c.FormValue("format"), Collection: c.FormValue("collection"), Tags: c.FormValue("tags"),
		Text: c.FormValue("text")}
	u, err := readUpload(c)
	if err != nil {
		return h.importFormError(c, f, err)
	}
	u.name = cmp.Or(u.name, "pasted")
	p := &importPreview{name: u.name, collection: u.collection, tags: u.tags, res: readTasks(u), size: len(u.data)}
	if len(p.res.Tasks) > 0 {
		p.dry, err = h.store.UpsertTasks(c.Request().Context(), store.ImportInput{Tasks: p.res.Tasks, Collection: u.collection,
			CollectionTags: u.tags, DryRun: true})
		if err != nil {
			if _, _, ok := formProblem(err); ok {
				return h.importFormError(c, f, err)
			}
			return err
		}
	}
	status := http.StatusOK
	if len(p.res.Errors) > 0 {
		status = http.StatusUnprocessableEntity
	}
	return h.renderImport(c, status, f, views.ImportPreviewView(previewView(h.imports.put(p), p, 1)))
}

// errPreviewGone answers a token whose preview is no longer kept.
var errPreviewGone = echo.NewHTTPError(http.StatusGone,
	"This preview is no longer kept (previews last 30 minutes, and only the latest few): choose the file and preview it again.")

// showImportPreview pages through a kept preview's tasks: the rows partial
// for HTMX, the whole page otherwise.
func (h *Handler) showImportPreview(c echo.Context) error {
	token := c.Param("token")
	p := h.imports.get(token)
	if p == nil {
		return errPreviewGone
	}
	page, err := queryInt(c, "page")
	if err != nil {
		return err
	}
	v := previewView(token, p, page)
	if isHTMX(c) {
		return render(c, http.StatusOK, views.ImportRowsView(v.Rows))
	}
	f := views.ImportForm{Formats: importFormats(), Collection: p.collection, Tags: strings.Join(p.tags, ", ")}
	return render(c, http.StatusOK, views.ImportPage(f, views.ImportPreviewView(v)))
}

// previewView is what the page shows of a preview, with page (1-based,
// clamped) of its tasks.
func previewView(token string, p *importPreview, page int) views.ImportPreview {
	r := p.res
	v := views.ImportPreview{Token: token, FileName: p.name, Format: string(r.Format), Collection: p.collection,
		Total: len(r.Tasks), Skipped: r.Skipped, Problems: len(r.Errors), BadRows: r.BadRows(), WithChecks: r.WithChecks(),
		DefaultCategory: r.DefaultCategory, Defaulted: r.Defaulted, DefaultFromCollection: p.collection != "", GSM8K: r.GSM8K}
	for _, cat := range r.Categories() {
		v.Categories = append(v.Categories, views.ImportCategory{Name: cat.Name, Tasks: cat.Tasks})
	}
	for i, e := range r.Errors {
		if i == previewProblems {
			break
		}
		v.ProblemRows = append(v.ProblemRows, importProblem(e))
	}
	for i, e := range r.Warnings {
		if i == previewProblems {
			break
		}
		v.Warnings = append(v.Warnings, importProblem(e))
	}
	updates := map[string]bool{}
	if p.dry != nil {
		v.Create, v.Update, v.CollectionNew = p.dry.Created, p.dry.Updated, p.dry.CollectionCreated
		for _, id := range p.dry.UpdatedIDs {
			updates[id] = true
		}
	}
	pages := max((len(r.Tasks)+previewRows-1)/previewRows, 1)
	page = min(max(page, 1), pages)
	v.Rows = views.ImportRows{Token: token, Page: page, Pages: pages, Total: len(r.Tasks)}
	from := (page - 1) * previewRows
	for i := from; i < min(from+previewRows, len(r.Tasks)); i++ {
		t := r.Tasks[i]
		checks := make([]string, len(t.Checks))
		for j, ch := range t.Checks {
			checks[j] = ch.Type
		}
		v.Rows.Rows = append(v.Rows.Rows, views.ImportRow{Row: r.RowNums[i], TaskID: t.TaskKey, Category: t.Category,
			Question: clip(t.Question, 200), Reference: clip(t.Reference, 80), Checks: strings.Join(checks, ", "),
			Tags: strings.Join(t.Tags, ", "), Update: updates[t.TaskKey]})
	}
	return v
}

func importProblem(e importer.RowError) views.ImportProblem {
	return views.ImportProblem{Row: e.Row, Line: e.Line, Column: e.Column, Field: e.Field, Message: e.Message}
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// confirmImport imports a kept preview's tasks, all or nothing.
func (h *Handler) confirmImport(c echo.Context) error {
	token := c.FormValue("token")
	p := h.imports.get(token)
	f := views.ImportForm{}
	if p == nil {
		return h.importFormError(c, f, errPreviewGone)
	}
	f.Collection, f.Tags = p.collection, strings.Join(p.tags, ", ")
	if len(p.res.Errors) > 0 {
		return h.importFormError(c, f, &importProblems{name: p.name, errs: p.res.Errors})
	}
	res, err := h.store.UpsertTasks(withoutCancel(c), store.ImportInput{Tasks: p.res.Tasks, Collection: p.collection, CollectionTags: p.tags})
	if err != nil {
		if _, _, ok := formProblem(err); ok {
			return h.importFormError(c, f, err)
		}
		return err
	}
	h.imports.remove(token)
	d := views.ImportDone{FileName: p.name, Created: res.Created, Updated: res.Updated, UpdatedIDs: res.UpdatedIDs,
		CollectionCreated: res.CollectionCreated}
	if len(d.UpdatedIDs) > 50 {
		d.UpdatedIDs = append(d.UpdatedIDs[:50:50], "and "+strconv.Itoa(res.Updated-50)+" more")
	}
	if res.Collection != nil {
		d.CollectionID, d.CollectionName, d.CollectionTasks = res.Collection.ID, res.Collection.Name, res.Collection.TaskCount
	}
	return h.renderImport(c, http.StatusOK, f, views.ImportDoneView(d))
}

// runTaskPicker lists the chosen collections' tasks to hand-pick from.
func (h *Handler) runTaskPicker(c echo.Context) error {
	params, err := c.FormParams()
	if err != nil {
		params = c.QueryParams()
	}
	var ids []int64
	for _, v := range params["collection_ids"] {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	picked := map[string]bool{}
	for _, k := range params["task_ids"] {
		picked[k] = true
	}
	tasks, total, err := h.store.CollectionsTasks(c.Request().Context(), ids, 1000)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunTaskList(tasks, total, picked))
}

// runPickInput reads the new-run form's query picker and run tags.
func runPickInput(form url.Values) (views.RunPick, *store.TaskSelection, []store.TaskRef, []string, error) {
	p := views.RunPick{Mode: form.Get("task_mode"), N: form.Get("task_n"), Seed: form.Get("task_seed"),
		Picked: map[string]bool{}, Tags: form.Get("tags")}
	tags := store.ParseTags(p.Tags)
	var refs []store.TaskRef
	switch p.Mode {
	case "", store.SelectAll:
		return p, nil, nil, tags, nil
	case "pick":
		for _, k := range form["task_ids"] {
			if k = strings.TrimSpace(k); k != "" && !p.Picked[k] {
				p.Picked[k] = true
				refs = append(refs, store.TaskRef{Key: k})
			}
		}
		if len(refs) == 0 {
			return p, nil, nil, tags, &store.ValidationError{Field: "task_ids", Message: "hand-pick at least one task (Load the chosen collections' tasks)"}
		}
		return p, nil, refs, tags, nil
	}
	sel := &store.TaskSelection{Mode: p.Mode}
	n, err := strconv.Atoi(strings.TrimSpace(p.N))
	if err != nil || n < 1 {
		return p, sel, nil, tags, &store.ValidationError{Field: "task_selection.n", Message: "how many tasks? (a whole number, at least 1)"}
	}
	sel.N = n
	if s := strings.TrimSpace(p.Seed); s != "" {
		seed, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return p, sel, nil, tags, &store.ValidationError{Field: "task_selection.seed", Message: "is not a whole number"}
		}
		sel.Seed = seed
	}
	return p, sel, nil, tags, nil
}
