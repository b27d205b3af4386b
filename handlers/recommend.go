package handlers

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/runs"
	"tribunal/store"
	"tribunal/views"
)

// recommendForm reads the Recommend query as sent.
func recommendForm(c echo.Context) views.RecommendForm {
	return views.RecommendForm{UseCase: c.QueryParam("usecase"), Category: c.QueryParam("category"),
		Budget: c.QueryParam("budget_usd_per_1k"), MinOverall: c.QueryParam("min_overall"),
		MaxLatencyMs: c.QueryParam("max_latency_ms"), MinItems: c.QueryParam("min_items"),
		CostPriority: c.QueryParam("cost_priority")}
}

// recommendQuery parses the form; a value that is not a number is a 400
// naming the parameter.
func recommendQuery(f views.RecommendForm) (runs.RecommendQuery, error) {
	q := runs.RecommendQuery{UseCase: f.UseCase, Category: f.Category, CostPriority: strings.ToLower(strings.TrimSpace(f.CostPriority))}
	num := func(name, v string) (*float64, error) {
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, badRequest("query parameter %s must be a number, 0 or more, got %q", name, v)
		}
		return &x, nil
	}
	var err error
	if q.BudgetPer1K, err = num("budget_usd_per_1k", f.Budget); err != nil {
		return q, err
	}
	if q.MinOverall, err = num("min_overall", f.MinOverall); err != nil {
		return q, err
	}
	if q.MaxLatencyMs, err = num("max_latency_ms", f.MaxLatencyMs); err != nil {
		return q, err
	}
	if v := strings.TrimSpace(f.MinItems); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return q, badRequest("query parameter min_items must be a whole number, 1 or more, got %q", v)
		}
		q.MinItems = n
	}
	return q, nil
}

// recommend answers the query; a query the use case layer refuses (no use
// case named, both named, an unknown cost priority) is a 400 too.
func (h *Handler) recommend(c echo.Context, f views.RecommendForm) (*runs.Recommendation, error) {
	q, err := recommendQuery(f)
	if err != nil {
		return nil, err
	}
	rec, err := h.runs.Recommend(c.Request().Context(), q)
	var ve *store.ValidationError
	if errors.As(err, &ve) {
		return nil, badRequest("query parameter %s", ve.Error())
	}
	return rec, err
}

func (h *Handler) apiRecommend(c echo.Context) error {
	rec, err := h.recommend(c, recommendForm(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}

// showRecommend is the Recommend page; asked through HTMX, its answer
// alone. A question it cannot answer shows why beside the form.
func (h *Handler) showRecommend(c echo.Context) error {
	v := views.RecommendView{Form: recommendForm(c)}
	asked := v.Form.UseCase != "" || v.Form.Category != ""
	status := http.StatusOK
	if asked {
		rec, err := h.recommend(c, v.Form)
		if err != nil {
			code, msg := statusOf(err)
			if code >= http.StatusInternalServerError {
				return err
			}
			status, v.Error = code, msg
		}
		v.Result = rec
	}
	if isHTMX(c) {
		return render(c, status, views.RecommendResult(v))
	}
	ucs, err := h.store.UseCases(c.Request().Context())
	if err != nil {
		return err
	}
	v.UseCases = ucs
	return render(c, status, views.RecommendPage(v))
}
