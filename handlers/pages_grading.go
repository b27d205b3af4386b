package handlers

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/engine"
	"tribunal/rubric"
	"tribunal/store"
	"tribunal/views"
)

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

// gradingSession is the store's grading queue of the query q.
func gradingSession(q views.GradingQuery) store.GradingSession {
	return store.GradingSession{Filter: store.ItemFilter{Status: store.ItemStatus(q.Status), Model: q.Model},
		UngradedOnly: q.Ungraded, Since: time.UnixMilli(q.Since)}
}

// gradingView builds the grading panel at item id (0 or an item not in the
// queue: the head of the queue).
func (h *Handler) gradingView(ctx context.Context, run *store.Run, q views.GradingQuery, id int64) (views.GradingView, error) {
	v := views.GradingView{RunID: run.ID, Query: q}
	p, err := h.runs.GradingPlace(ctx, run, gradingSession(q), id)
	if err != nil {
		return v, err
	}
	v.Total, v.Graded, v.Queue = int(p.Total), int(p.Graded), int(p.Queue)
	if p.ItemID == 0 {
		return v, nil
	}
	v.Position, v.PrevID, v.NextID = int(p.Position), p.PrevID, p.NextID
	v.Item, err = h.gradingItem(ctx, run, p.ItemID, p.Spread)
	return v, err
}

// gradingItem gathers what a person needs to grade an item: the task and
// its references, the answers, and each judge's scores.
func (h *Handler) gradingItem(ctx context.Context, run *store.Run, id int64, spread float64) (*views.GradingItem, error) {
	w, err := h.store.GradingItem(ctx, run.ID, id)
	if err != nil {
		return nil, err
	}
	it := &views.GradingItem{ID: w.ID, Task: w.Task, Target: w.Target, Status: string(w.Status), Repeat: w.RepeatIndex,
		Repeats: run.Repeats, Error: w.Error, Spread: spread}
	if it.Grade, err = h.store.ItemGrade(ctx, w.ID); err != nil {
		return nil, err
	}
	// The answers as the judges were shown them; a lone answer to a
	// conversation answers its last turn, the turns before it none.
	var answers []string
	if w.Response != nil || w.Answers != nil {
		answers = engine.Answers(w)
	}
	lone := w.Answers == nil
	for i, t := range w.Task.AllTurns() {
		gt := views.GradingTurn{Question: t}
		if i < len(answers) && (!lone || i == len(answers)-1) {
			gt.Answer, gt.Answered = answers[i], true
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
				Untrusted: untrusted[j.ID], AsksViolations: j.AsksViolations}
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
	return it, h.addViolations(ctx, run, w.ID, it)
}

// addViolations gives each verdict of the item the violations its judge
// named, so the grader sees what the judge held against the answer (what
// of its list could not be kept is its overall score's note).
func (h *Handler) addViolations(ctx context.Context, run *store.Run, itemID int64, it *views.GradingItem) error {
	vs, err := h.store.ItemViolations(ctx, itemID)
	if err != nil {
		return err
	}
	for _, v := range vs {
		j := slices.IndexFunc(run.Judges, func(j store.RunJudge) bool { return j.ID == v.RunJudgeID })
		if j < 0 {
			continue
		}
		i := slices.IndexFunc(it.Verdicts, func(jv views.JudgeVerdict) bool { return jv.Judge == run.Judges[j].Name })
		if i >= 0 {
			it.Verdicts[i].Violations = append(it.Verdicts[i].Violations, rubric.Violation{Category: v.Category, Detail: v.Detail})
		}
	}
	return nil
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
	place, err := h.runs.GradingPlace(ctx, run, gradingSession(q), itemID)
	if err != nil {
		return err
	}
	next := cmp.Or(place.NextToGrade, itemID)
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
