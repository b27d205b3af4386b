package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"tribunal/kpi"
	"tribunal/store"
	"tribunal/watch"
)

// KPIJSON is a KPI as the API shows it.
type KPIJSON struct {
	*store.KPI
	// Metrics are the metric names the formula reads.
	Metrics []string `json:"metrics"`
	// Latest is the whole-run value of the latest evaluated run.
	Latest *store.KPIPoint `json:"latest"`
	// Values are the latest runs' values, oldest first (GET /api/kpis/{id} only).
	Values []store.KPIPoint `json:"values,omitempty"`
}

func kpiJSON(k *store.KPI, latest map[int64]store.KPIPoint) KPIJSON {
	out := KPIJSON{KPI: k, Metrics: []string{}}
	if f, errs := kpi.Compile(k.Formula, nil); errs == nil {
		out.Metrics = f.Metrics()
	}
	if p, ok := latest[k.ID]; ok {
		out.Latest = &p
	}
	return out
}

func kpiInputOf(k *store.KPI) store.KPIInput {
	return store.KPIInput{Name: k.Name, Formula: k.Formula, Description: k.Description, CollectionID: k.CollectionID, ScheduleID: k.ScheduleID}
}

func (h *Handler) apiListKPIs(c echo.Context) error {
	ctx := c.Request().Context()
	list, err := h.store.KPIs(ctx)
	if err != nil {
		return err
	}
	latest, err := h.store.LatestKPIValues(ctx)
	if err != nil {
		return err
	}
	out := make([]KPIJSON, len(list))
	for i := range list {
		out[i] = kpiJSON(&list[i], latest)
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) apiGetKPI(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	k, err := h.store.KPI(ctx, id)
	if err != nil {
		return err
	}
	latest, err := h.store.LatestKPIValues(ctx)
	if err != nil {
		return err
	}
	out := kpiJSON(k, latest)
	if out.Values, err = h.store.KPITrend(ctx, id, 100); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) apiKPIValues(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit")
	if err != nil {
		return err
	}
	if limit == 0 {
		limit = 100
	}
	if _, err := h.store.KPI(c.Request().Context(), id); err != nil {
		return err
	}
	vals, err := h.store.KPITrend(c.Request().Context(), id, min(limit, 5000))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, vals)
}

// saveKPI creates (id 0) or replaces a KPI and computes it for the runs it
// applies to that were evaluated before.
func (h *Handler) saveKPI(ctx context.Context, id int64, in store.KPIInput) (*store.KPI, error) {
	var k *store.KPI
	var err error
	recompute := true
	if id == 0 {
		k, err = h.store.CreateKPI(ctx, in)
	} else {
		k, recompute, err = h.store.UpdateKPI(ctx, id, in)
	}
	if err != nil {
		return nil, err
	}
	if recompute {
		if _, err := watch.BackfillKPI(ctx, h.store, k); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (h *Handler) apiCreateKPI(c echo.Context) error {
	var in store.KPIInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	k, err := h.saveKPI(withoutCancel(c), 0, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, kpiJSON(k, nil))
}

func (h *Handler) apiUpdateKPI(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	cur, err := h.store.KPI(c.Request().Context(), id)
	if err != nil {
		return err
	}
	var in store.KPIInput
	named, err := bindMerge(c, kpiInputOf(cur), &in)
	if err != nil {
		return err
	}
	exclusive(named, "collection_id", &in.CollectionID, in.CollectionID != nil, "schedule_id", &in.ScheduleID, in.ScheduleID != nil)
	k, err := h.saveKPI(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	latest, err := h.store.LatestKPIValues(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, kpiJSON(k, latest))
}

func (h *Handler) apiDeleteKPI(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	if err := h.store.DeleteKPI(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// FormulaJSON is a KPI formula to validate.
type FormulaJSON struct {
	Formula string `json:"formula"`
}

// apiValidateFormula answers {ok, errors: [{message, position}]} for {formula}.
func (h *Handler) apiValidateFormula(c echo.Context) error {
	var in FormulaJSON
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	v, err := h.store.ValidateFormula(c.Request().Context(), in.Formula)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// apiKPIMetrics lists every metric a formula may read, with the seed's names for it.
func (h *Handler) apiKPIMetrics(c echo.Context) error {
	list, err := h.store.MetricList(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}
