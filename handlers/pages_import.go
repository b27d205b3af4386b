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

// previewRows and previewProblems bound what the preview lists.
const (
	previewRows     = 200
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

// previewImport parses an uploaded task file and shows what importing it
// would do, or every bad row; nothing is written.
func (h *Handler) previewImport(c echo.Context) error {
	f := views.ImportForm{Format: c.FormValue("format"), Collection: c.FormValue("collection"), Tags: c.FormValue("tags"),
		Text: c.FormValue("text")}
	u, err := readUpload(c)
	if err != nil {
		_, msg := statusOf(err)
		f.Error = msg
		return h.renderImport(c, http.StatusUnprocessableEntity, f, views.FormError(msg))
	}
	u.name = cmp.Or(u.name, "pasted")
	p := views.ImportPreview{FileName: u.name, Format: string(u.format), Content: string(u.data), Collection: u.collection,
		Tags: strings.Join(u.tags, ", ")}
	tasks, err := importer.Parse(u.name, u.data, u.format)
	if err != nil {
		var es importer.Errors
		if !errors.As(err, &es) {
			return err
		}
		for i, e := range es {
			if i == previewProblems {
				p.MoreProblems = len(es) - previewProblems
				break
			}
			p.Problems = append(p.Problems, views.ImportProblem{Row: e.Row, Line: e.Line, Field: e.Field, Message: e.Message})
		}
		return h.renderImport(c, http.StatusUnprocessableEntity, f, views.ImportPreviewView(p))
	}
	if p.Format == "" {
		det, _ := importer.Detect(u.name, u.data)
		p.Format = string(det)
	}
	res, err := h.store.UpsertTasks(c.Request().Context(), store.ImportInput{Tasks: tasks, Collection: u.collection,
		CollectionTags: u.tags, DryRun: true})
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			f.Error = msg
			return h.renderImport(c, status, f, views.FormError(msg))
		}
		return err
	}
	updates := map[string]bool{}
	for _, id := range res.UpdatedIDs {
		updates[id] = true
	}
	p.Total, p.New, p.Updates, p.CollectionNew = len(tasks), res.Created, res.Updated, res.CollectionCreated
	for i, t := range tasks {
		if i == previewRows {
			break
		}
		checks := make([]string, len(t.Checks))
		for j, ch := range t.Checks {
			checks[j] = ch.Type
		}
		p.Rows = append(p.Rows, views.ImportRow{TaskID: t.TaskKey, Category: t.Category, Question: clip(t.Question, 200),
			Reference: clip(t.Reference, 80), Checks: strings.Join(checks, ", "), Tags: strings.Join(t.Tags, ", "),
			Update: updates[t.TaskKey]})
	}
	return h.renderImport(c, http.StatusOK, f, views.ImportPreviewView(p))
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// confirmImport imports the previewed file.
func (h *Handler) confirmImport(c echo.Context) error {
	f := views.ImportForm{Collection: c.FormValue("collection"), Tags: c.FormValue("tags")}
	u, err := readUpload(c)
	if err != nil {
		_, msg := statusOf(err)
		f.Error = msg
		return h.renderImport(c, http.StatusUnprocessableEntity, f, views.FormError(msg))
	}
	u.name = cmp.Or(u.name, "pasted")
	tasks, err := importer.Parse(u.name, u.data, u.format)
	if err != nil {
		var es importer.Errors
		if !errors.As(err, &es) {
			return err
		}
		p := views.ImportPreview{FileName: u.name}
		for i, e := range es {
			if i == previewProblems {
				p.MoreProblems = len(es) - previewProblems
				break
			}
			p.Problems = append(p.Problems, views.ImportProblem{Row: e.Row, Line: e.Line, Field: e.Field, Message: e.Message})
		}
		return h.renderImport(c, http.StatusUnprocessableEntity, f, views.ImportPreviewView(p))
	}
	res, err := h.store.UpsertTasks(withoutCancel(c), store.ImportInput{Tasks: tasks, Collection: u.collection, CollectionTags: u.tags})
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderImport(c, status, f, views.FormError(msg))
		}
		return err
	}
	d := views.ImportDone{FileName: u.name, Created: res.Created, Updated: res.Updated, UpdatedIDs: res.UpdatedIDs,
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
