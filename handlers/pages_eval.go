package handlers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/rubric"
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
		ScaleMin: strconv.Itoa(s.ScaleMin), ScaleMax: strconv.Itoa(s.ScaleMax), Template: s.PromptTemplate}
	for _, m := range s.Metrics {
		f.Metrics = append(f.Metrics, views.MetricRow{Name: m.Name, Description: m.Description, Weight: strconv.FormatFloat(m.Weight, 'f', -1, 64)})
	}
	return f
}

// styleForm reads the style form. Rows left empty are dropped, so the
// metrics[i] of a store error is row i of the form shown again.
func styleForm(c echo.Context) (views.StyleForm, store.StyleInput, error) {
	f := views.StyleForm{Name: c.FormValue("name"), ScaleMin: strings.TrimSpace(c.FormValue("scale_min")),
		ScaleMax: strings.TrimSpace(c.FormValue("scale_max")), Template: c.FormValue("prompt_template")}
	in := store.StyleInput{Name: f.Name, PromptTemplate: f.Template}
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

// ---- grading ----

// gradingQuery reads the grading queue's filters and session from the URL
// (a grade's POST carries them in its URL too) and the item asked for.
func gradingQuery(c echo.Context) (views.GradingQuery, int64, error) {
	q := views.GradingQuery{Model: c.QueryParam("model"), Status: c.QueryParam("status")}
	if q.Status != "" && !slices.Contains(store.ItemStatuses, store.ItemStatus(q.Status)) {
		return q, 0, badRequest("status must be one of %s", oneOf(store.ItemStatuses))
	}
	switch c.QueryParam("ungraded") {
	case "", "0", "false", "off":
	default:
		q.Ungraded = true
	}
	var err error
	if v := c.QueryParam("since"); v != "" {
		if q.Since, err = strconv.ParseInt(v, 10, 64); err != nil || q.Since < 0 {
			return q, 0, badRequest("query parameter since must be a time in Unix milliseconds, got %q", v)
		}
	}
	if q.Since == 0 {
		q.Since = time.Now().UnixMilli()
	}
	var item int64
	if v := c.QueryParam("item"); v != "" {
		if item, err = strconv.ParseInt(v, 10, 64); err != nil || item <= 0 {
			return q, 0, badRequest("query parameter item must be an item id, got %q", v)
		}
	}
	return q, item, nil
}

// gradingOrder filters and orders the grading queue: first the items that
// were ungraded when the session began, those the judges disagree on most
// first, then the ones graded before, by id. Grading an item during the
// session leaves it in its place, so going back finds it.
func gradingOrder(entries []store.GradingEntry, q views.GradingQuery) []store.GradingEntry {
	since := time.UnixMilli(q.Since)
	before := func(e store.GradingEntry) bool { return e.GradedAt != nil && e.GradedAt.Before(since) }
	out := make([]store.GradingEntry, 0, len(entries))
	for _, e := range entries {
		if !q.Ungraded || !before(e) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b store.GradingEntry) int {
		ba, bb := before(a), before(b)
		switch {
		case ba != bb && ba:
			return 1
		case ba != bb:
			return -1
		case !ba && a.Spread != b.Spread:
			return cmp.Compare(b.Spread, a.Spread)
		}
		return cmp.Compare(a.ItemID, b.ItemID)
	})
	return out
}

// nextToGrade picks where to go after grading item id: the next ungraded
// item after it in the queue, else the first ungraded one, else the next.
func nextToGrade(order []store.GradingEntry, id int64) int64 {
	pos := slices.IndexFunc(order, func(e store.GradingEntry) bool { return e.ItemID == id })
	ungraded := func(e store.GradingEntry) bool { return e.GradedAt == nil && e.ItemID != id }
	if i := slices.IndexFunc(order[pos+1:], ungraded); i >= 0 {
		return order[pos+1+i].ItemID
	}
	if i := slices.IndexFunc(order, ungraded); i >= 0 {
		return order[i].ItemID
	}
	if pos >= 0 && pos+1 < len(order) {
		return order[pos+1].ItemID
	}
	return id
}

// gradingView builds the grading panel at item id (0 or an item not in the
// queue: the head of the queue).
func (h *Handler) gradingView(ctx context.Context, run *store.Run, q views.GradingQuery, id int64) (views.GradingView, error) {
	v := views.GradingView{RunID: run.ID, Query: q}
	entries, err := h.store.GradingQueue(ctx, run.ID, store.ItemFilter{Status: store.ItemStatus(q.Status), Model: q.Model})
	if err != nil {
		return v, err
	}
	v.Total = len(entries)
	for _, e := range entries {
		if e.GradedAt != nil {
			v.Graded++
		}
	}
	order := gradingOrder(entries, q)
	v.Queue = len(order)
	if len(order) == 0 {
		return v, nil
	}
	pos := max(slices.IndexFunc(order, func(e store.GradingEntry) bool { return e.ItemID == id }), 0)
	v.Position = pos + 1
	if pos > 0 {
		v.PrevID = order[pos-1].ItemID
	}
	if pos+1 < len(order) {
		v.NextID = order[pos+1].ItemID
	}
	v.Item, err = h.gradingItem(ctx, run, order[pos])
	return v, err
}

// gradingItem gathers what a person needs to grade an item: the task and
// its references, the answers, and each judge's scores.
func (h *Handler) gradingItem(ctx context.Context, run *store.Run, e store.GradingEntry) (*views.GradingItem, error) {
	w, err := h.store.GradingItem(ctx, run.ID, e.ItemID)
	if err != nil {
		return nil, err
	}
	it := &views.GradingItem{ID: w.ID, Task: w.Task, Target: w.Target, Status: string(w.Status), Repeat: w.RepeatIndex,
		Repeats: run.Repeats, Error: w.Error, Spread: e.Spread}
	if it.Grade, err = h.store.ItemGrade(ctx, w.ID); err != nil {
		return nil, err
	}
	turns := w.Task.AllTurns()
	var answers []string
	if w.Answers != nil && json.Unmarshal([]byte(*w.Answers), &answers) != nil {
		answers = nil
	}
	for i, t := range turns {
		gt := views.GradingTurn{Question: t}
		switch {
		case answers != nil && i < len(answers):
			gt.Answer, gt.Answered = answers[i], true
		case answers == nil && w.Response != nil && i == len(turns)-1:
			gt.Answer, gt.Answered = *w.Response, true // a single answer belongs to the last turn
		}
		it.Turns = append(it.Turns, gt)
	}
	scores, err := h.store.ItemScores(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	judges := map[string]store.RunJudge{}
	for _, j := range run.Judges {
		judges[j.Name] = j
	}
	untrusted, err := h.runs.UntrustedJudges(ctx, run)
	if err != nil {
		return nil, err
	}
	for _, s := range scores {
		if strings.HasPrefix(s.Judge, "check:") {
			it.Checks = append(it.Checks, s)
			continue
		}
		i := slices.IndexFunc(it.Verdicts, func(v views.JudgeVerdict) bool { return v.Judge == s.Judge })
		if i < 0 {
			j := judges[s.Judge]
			jv := views.JudgeVerdict{Judge: s.Judge, Personality: j.PersonalityName, ScaleMin: j.ScaleMin, ScaleMax: j.ScaleMax,
				Untrusted: untrusted[j.ID]}
			if jv.ScaleMax <= jv.ScaleMin {
				jv.ScaleMin, jv.ScaleMax = 1, 10
			}
			it.Verdicts = append(it.Verdicts, jv)
			i = len(it.Verdicts) - 1
		}
		if s.Metric == rubric.Overall {
			it.Verdicts[i].Overall = &s
		} else {
			it.Verdicts[i].Metrics = append(it.Verdicts[i].Metrics, s)
		}
	}
	return it, nil
}

func runModels(run *store.Run) []string {
	var models []string
	for _, t := range run.Targets {
		if !slices.Contains(models, t.Model) {
			models = append(models, t.Model)
		}
	}
	return models
}

// isHistoryRestore tells HTMX's reload of a page missing from its history
// cache, which needs the whole page.
func isHistoryRestore(c echo.Context) bool {
	return c.Request().Header.Get("HX-History-Restore-Request") == "true"
}

// renderGrading answers the grading panel to HTMX and the page otherwise.
func renderGrading(c echo.Context, status int, run *store.Run, v views.GradingView) error {
	if isHTMX(c) && !isHistoryRestore(c) {
		return render(c, status, views.GradingPanel(v))
	}
	return render(c, status, views.GradingPage(run, runModels(run), v))
}

func (h *Handler) showGrading(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	run, err := h.store.Run(ctx, id)
	if err != nil {
		return err
	}
	q, item, err := gradingQuery(c)
	if err != nil {
		return err
	}
	v, err := h.gradingView(ctx, run, q, item)
	if err != nil {
		return err
	}
	return renderGrading(c, http.StatusOK, run, v)
}

// gradeItemPage stores a grade (the last write wins) and answers the next
// item to grade, so grading goes on at the speed of the keyboard.
func (h *Handler) gradeItemPage(c echo.Context) error {
	runID, err := pathID(c, "run")
	if err != nil {
		return err
	}
	itemID, err := pathID(c, "item")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	run, err := h.store.Run(ctx, runID)
	if err != nil {
		return err
	}
	q, _, err := gradingQuery(c)
	if err != nil {
		return err
	}
	w, err := h.store.GradingItem(ctx, runID, itemID)
	if err != nil {
		return err
	}
	// Where to go next is decided on the queue as it was before this grade.
	entries, err := h.store.GradingQueue(ctx, runID, store.ItemFilter{Status: store.ItemStatus(q.Status), Model: q.Model})
	if err != nil {
		return err
	}
	next := nextToGrade(gradingOrder(entries, q), itemID)
	in := store.GradeInput{Grade: c.FormValue("grade"), Notes: c.FormValue("notes")}
	g, err := h.store.SetGrade(withoutCancel(c), itemID, in)
	if err != nil {
		status, msg, ok := formProblem(err)
		if !ok {
			return err
		}
		v, verr := h.gradingView(ctx, run, q, itemID)
		if verr != nil {
			return verr
		}
		v.Error, v.Notes = msg, in.Notes
		return renderGrading(c, status, run, v)
	}
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, q.URL(runID, next))
	}
	v, err := h.gradingView(ctx, run, q, next)
	if err != nil {
		return err
	}
	v.Saved = fmt.Sprintf("%s · %s graded %s", w.Task.TaskKey, w.Target.Model, g.Grade)
	var at int64
	if v.Item != nil {
		at = v.Item.ID
	}
	c.Response().Header().Set("HX-Push-Url", q.URL(runID, at))
	return render(c, http.StatusOK, views.GradingPanel(v))
}
