package handlers

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/rubric"
	"tribunal/store"
	"tribunal/views"
)

// judgeMetrics lists the metrics of the judges f picks (the panel's styles
// in the order the form lists the judges, else the default style), which
// the form offers to leave out of the overall. A style's lone "score" is
// not listed: it is the judge's verdict and always counts.
func (h *Handler) judgeMetrics(ctx context.Context, f views.NewRunForm) ([]store.Metric, error) {
	if f.ChecksOnly {
		return nil, nil
	}
	var styles []*store.JudgementStyle
	for _, j := range f.Judges {
		if !f.Panel[j.ID] {
			continue
		}
		st, err := h.store.Style(ctx, j.StyleID)
		if err != nil {
			return nil, err
		}
		styles = append(styles, st)
	}
	if len(styles) == 0 {
		st, err := h.store.DefaultStyle(ctx)
		if err != nil {
			return nil, err
		}
		styles = append(styles, st)
	}
	var out []store.Metric
	seen := map[string]bool{rubric.Overall: true}
	for _, st := range styles {
		for _, m := range st.Metrics {
			if !seen[m.Name] {
				seen[m.Name] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// newRunMetrics re-lists the judge metrics when the form's judges change,
// keeping the ones the user untick unticked.
func (h *Handler) newRunMetrics(c echo.Context) error {
	ctx := c.Request().Context()
	f := views.NewRunForm{Panel: map[int64]bool{}, JudgeMetricsOff: map[string]bool{}, ChecksOnly: c.QueryParam("checks_only") != ""}
	params := c.QueryParams()
	for _, v := range params["judge_ids"] {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			f.Panel[id] = true
		}
	}
	on := map[string]bool{}
	for _, m := range params["judge_metrics"] {
		on[m] = true
	}
	for _, m := range params["judge_metrics_shown"] {
		f.JudgeMetricsOff[m] = !on[m]
	}
	var err error
	if f.Judges, err = h.store.Judges(ctx); err != nil {
		return err
	}
	if f.JudgeMetrics, err = h.judgeMetrics(ctx, f); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.JudgeMetricPicker(f))
}

// newRunEstimate is the new-run form's live estimate: the form read as
// Start would read it, estimated by runs.Service.Estimate. A form not yet
// complete answers 200 with what is missing, so the panel says it.
// estimateMissing says in the form's words what a half-filled form still
// lacks: the estimate panel asks for it at every change, so the API's field
// paths ("judge.provider_id: is required") would greet every new user.
func estimateMissing(err error) string {
	var v *store.ValidationError
	if !errors.As(err, &v) {
		return ""
	}
	switch v.Field {
	case "judge.provider_id", "judge.model":
		return "choose the judge's provider and model (or No judge) to see the cost."
	case "targets":
		return "add a model or agent to benchmark to see the cost."
	case "collection_ids":
		return "pick a collection, use case or category to see the cost."
	}
	if strings.HasPrefix(v.Field, "targets[") && (strings.HasSuffix(v.Field, "].model") || strings.HasSuffix(v.Field, "].provider_id")) {
		return "choose the provider and model of each model to benchmark to see the cost."
	}
	return ""
}

func (h *Handler) newRunEstimate(c echo.Context) error {
	in, _, err := runFormInput(c)
	v := views.RunEstimateView{Budget: in.MaxCostUSD}
	if err == nil {
		v.Estimate, err = h.runs.Estimate(c.Request().Context(), in)
	}
	if err != nil {
		_, msg, ok := formProblem(err)
		if !ok {
			return err
		}
		v.Problem = cmp.Or(estimateMissing(err), msg)
	}
	return render(c, http.StatusOK, views.RunEstimatePanel(v))
}
