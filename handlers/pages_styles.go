package handlers

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/rubric"
	"tribunal/store"
	"tribunal/views"
)

// ---- judgement styles ----

var metricIndex = regexp.MustCompile(`^metrics\[(\d+)\]`)

// styleField places a style error: the scale's under the scale, a metric's
// under the metrics.
func styleField(field, msg string) string {
	switch field {
	case "name", "prompt_template":
		return field
	case "scale_min", "scale_max":
		return "scale"
	case "metrics":
		if strings.HasPrefix(msg, "the scale") {
			return "scale"
		}
		return "metrics"
	}
	return ""
}

// styleFormErrors is formErrors for the style form, which also marks the
// metric row an error names.
func styleFormErrors(err error, f *views.StyleForm) (int, bool) {
	status, errs, ok := formErrors(err, styleField)
	if !ok {
		return 0, false
	}
	f.Errors = errs
	if m := metricIndex.FindStringSubmatch(errs["metrics"]); m != nil {
		if i, _ := strconv.Atoi(m[1]); i < len(f.Metrics) {
			f.Metrics[i].Invalid = true
		}
	}
	return status, true
}

func newStyleForm() views.StyleForm {
	return views.StyleForm{ScaleMin: "1", ScaleMax: "10", Metrics: []views.MetricRow{{}}, Template: rubric.DefaultTemplate}
}

func styleFormOf(s *store.JudgementStyle) views.StyleForm {
	f := views.StyleForm{ID: s.ID, Version: s.Version, Builtin: s.Builtin, Name: s.Name,
		ScaleMin: strconv.Itoa(s.ScaleMin), ScaleMax: strconv.Itoa(s.ScaleMax), Template: s.PromptTemplate,
		AsksViolations: s.AsksViolations}
	for _, m := range s.Metrics {
		f.Metrics = append(f.Metrics, views.MetricRow{Name: m.Name, Description: m.Description, Weight: strconv.FormatFloat(m.Weight, 'f', -1, 64)})
	}
	return f
}

// styleForm reads the style form. Rows left empty are dropped, so the
// metrics[i] of a store error is row i of the form shown again.
func styleForm(c echo.Context) (views.StyleForm, store.StyleInput, error) {
	f := views.StyleForm{Name: c.FormValue("name"), ScaleMin: strings.TrimSpace(c.FormValue("scale_min")),
		ScaleMax: strings.TrimSpace(c.FormValue("scale_max")), Template: c.FormValue("prompt_template"),
		AsksViolations: c.FormValue("asks_violations") != ""}
	in := store.StyleInput{Name: f.Name, PromptTemplate: f.Template, AsksViolations: f.AsksViolations}
	form, err := c.FormParams()
	if err != nil {
		return f, in, badRequest("unreadable form: %v", err)
	}
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	names, descs, weights := form["metric_name"], form["metric_description"], form["metric_weight"]
	at := func(list []string, i int) string {
		if i < len(list) {
			return strings.TrimSpace(list[i])
		}
		return ""
	}
	for i := range max(len(names), len(descs), len(weights)) {
		row := views.MetricRow{Name: at(names, i), Description: at(descs, i), Weight: at(weights, i)}
		if row.Name == "" && row.Description == "" && row.Weight == "" {
			continue
		}
		m := store.Metric{Name: row.Name, Description: row.Description}
		if row.Weight != "" {
			if m.Weight, err = strconv.ParseFloat(row.Weight, 64); err != nil {
				row.Invalid = true
				keep(&store.ValidationError{Field: "metrics", Message: fmt.Sprintf("metrics[%d]: weight must be a number, got %q", len(f.Metrics), row.Weight)})
			}
		}
		f.Metrics = append(f.Metrics, row)
		in.Metrics = append(in.Metrics, m)
	}
	scale := func(field, v string) int {
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			keep(&store.ValidationError{Field: field, Message: fmt.Sprintf("the scale must be whole numbers, got %q", v)})
		}
		return n
	}
	in.ScaleMin, in.ScaleMax = scale("scale_min", f.ScaleMin), scale("scale_max", f.ScaleMax)
	if len(f.Metrics) == 0 {
		f.Metrics = []views.MetricRow{{}}
	}
	return f, in, firstErr
}

func (h *Handler) showStyles(c echo.Context) error {
	return h.renderStyles(c, http.StatusOK, newStyleForm())
}

func (h *Handler) renderStyles(c echo.Context, status int, form views.StyleForm) error {
	styles, err := h.store.Styles(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, status, views.StylesPage(styles, form))
}

func (h *Handler) createStylePage(c echo.Context) error {
	f, in, err := styleForm(c)
	var st *store.JudgementStyle
	if err == nil {
		st, err = h.store.CreateStyle(withoutCancel(c), in)
	}
	if err != nil {
		status, ok := styleFormErrors(err, &f)
		if !ok {
			return err
		}
		return h.renderStyles(c, status, f)
	}
	return redirectFlash(c, "Judgement style created.", fmt.Sprintf("/styles/%d", st.ID))
}

func (h *Handler) showStyleHistory(c echo.Context) error {
	id, err := pathID(c, "style")
	if err != nil {
		return err
	}
	versions, err := h.store.StyleVersions(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if len(versions) == 0 {
		return &store.NotFoundError{What: "judgement style", ID: id}
	}
	return render(c, http.StatusOK, views.StyleHistoryPage(versions))
}

func (h *Handler) editStylePage(c echo.Context) error {
	id, err := pathID(c, "style")
	if err != nil {
		return err
	}
	st, err := h.store.Style(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.StyleEditPage(styleFormOf(st)))
}

// updateStylePage saves the form as the style's next version.
func (h *Handler) updateStylePage(c echo.Context) error {
	id, err := pathID(c, "style")
	if err != nil {
		return err
	}
	cur, err := h.store.Style(c.Request().Context(), id)
	if err != nil {
		return err
	}
	f, in, err := styleForm(c)
	f.ID, f.Version, f.Builtin = id, cur.Version, cur.Builtin
	if err == nil {
		_, err = h.store.UpdateStyle(withoutCancel(c), id, in)
	}
	if err != nil {
		status, ok := styleFormErrors(err, &f)
		if !ok {
			return err
		}
		return render(c, status, views.StyleEditPage(f))
	}
	return redirectFlash(c, "Judgement style saved as a new version.", fmt.Sprintf("/styles/%d", id))
}

// deleteStylePage deletes a style; a built-in or used one is a conflict the
// page shows.
func (h *Handler) deleteStylePage(c echo.Context) error {
	id, err := pathID(c, "style")
	if err != nil {
		return err
	}
	if err := h.store.DeleteStyle(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Judgement style deleted.", "/styles")
}

// styleMetricRow answers an empty metric row, or a built-in metric's row.
func (h *Handler) styleMetricRow(c echo.Context) error {
	row := views.MetricRow{}
	if name := c.QueryParam("builtin"); name != "" {
		i := slices.IndexFunc(rubric.BuiltinMetrics, func(m rubric.Metric) bool { return m.Name == name })
		if i < 0 {
			return badRequest("no built-in metric %q", name)
		}
		m := rubric.BuiltinMetrics[i]
		row = views.MetricRow{Name: m.Name, Description: m.Description, Weight: strconv.FormatFloat(m.Weight, 'f', -1, 64)}
	}
	return render(c, http.StatusOK, views.MetricRowView(row))
}
