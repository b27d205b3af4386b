package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/store"
)

// ---- providers ----

func (h *Handler) apiListProviders(c echo.Context) error {
	ps, err := h.store.Providers(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ps)
}

func (h *Handler) apiGetProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	p, err := h.store.Provider(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (h *Handler) apiCreateProvider(c echo.Context) error {
	var in store.ProviderInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	p, err := h.store.CreateProvider(withoutCancel(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, p)
}

func (h *Handler) apiUpdateProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	var in store.ProviderInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	p, err := h.store.UpdateProvider(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	h.engine.Refresh() // running calls see the new settings now
	return c.JSON(http.StatusOK, p)
}

func (h *Handler) apiDeleteProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	if err := h.store.DeleteProvider(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *Handler) apiProviderModels(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	models, err := h.providerModels(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, models)
}

// ConnectionTest is the outcome of a provider's "Test connection".
type ConnectionTest struct {
	OK        bool     `json:"ok"`
	Message   string   `json:"message"`
	LatencyMs int64    `json:"latency_ms"`
	Models    []string `json:"models"`
	// ContextLengths are the context windows (tokens) the provider reports, by model.
	ContextLengths map[string]int64 `json:"context_lengths,omitempty"`
}

func (h *Handler) apiTestProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	res, err := h.testProvider(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// testProvider lists the provider's models: the cheapest call that proves
// the URL, the endpoint and the credentials all work.
func (h *Handler) testProvider(c echo.Context, id int64) (*ConnectionTest, error) {
	p, err := h.store.ProviderWithSecrets(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	models, err := h.engine.Client(p).Models(c.Request().Context())
	res := &ConnectionTest{LatencyMs: time.Since(start).Milliseconds(), Models: []string{}}
	if err != nil {
		res.Message = "GET " + p.BaseURL + p.ModelsEndpoint + " failed: " + err.Error()
		return res, nil
	}
	for _, m := range models {
		res.Models = append(res.Models, m.ID)
		if m.ContextLength > 0 {
			if res.ContextLengths == nil {
				res.ContextLengths = map[string]int64{}
			}
			res.ContextLengths[m.ID] = m.ContextLength
		}
	}
	res.OK = true
	res.Message = "Connected: " + plural(len(models), "model") + " available"
	return res, nil
}

// ---- tasks ----

func (h *Handler) taskFilter(c echo.Context) (store.TaskFilter, error) {
	page, err := queryInt(c, "page")
	if err != nil {
		return store.TaskFilter{}, err
	}
	perPage, err := queryInt(c, "per_page")
	if err != nil {
		return store.TaskFilter{}, err
	}
	return store.TaskFilter{Query: c.QueryParam("q"), Category: c.QueryParam("category"), UseCase: c.QueryParam("usecase"),
		Tag: c.QueryParam("tag"), Page: page, PerPage: perPage}, nil
}

func (h *Handler) apiUseCases(c echo.Context) error {
	ucs, err := h.store.UseCases(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ucs)
}

func (h *Handler) apiListTasks(c echo.Context) error {
	f, err := h.taskFilter(c)
	if err != nil {
		return err
	}
	page, err := h.store.Tasks(c.Request().Context(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (h *Handler) apiGetTask(c echo.Context) error {
	id, err := pathID(c, "task")
	if err != nil {
		return err
	}
	t, err := h.store.Task(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

func (h *Handler) apiCreateTask(c echo.Context) error {
	var in store.TaskInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	t, err := h.store.CreateTask(withoutCancel(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, t)
}

func (h *Handler) apiUpdateTask(c echo.Context) error {
	id, err := pathID(c, "task")
	if err != nil {
		return err
	}
	var in store.TaskInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	t, err := h.store.UpdateTask(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

func (h *Handler) apiDeleteTask(c echo.Context) error {
	id, err := pathID(c, "task")
	if err != nil {
		return err
	}
	if err := h.store.DeleteTask(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ---- collections ----

func (h *Handler) apiListCollections(c echo.Context) error {
	cs, err := h.store.CollectionsTagged(c.Request().Context(), c.QueryParam("tag"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cs)
}

func (h *Handler) apiGetCollection(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	col, err := h.store.Collection(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, col)
}

func (h *Handler) apiCreateCollection(c echo.Context) error {
	var in store.CollectionInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	col, err := h.store.CreateCollection(withoutCancel(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, col)
}

func (h *Handler) apiUpdateCollection(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	var in store.CollectionInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	col, err := h.store.UpdateCollection(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, col)
}

// CollectionTasksPatch adds tasks to a collection and removes others.
type CollectionTasksPatch struct {
	Add    []store.TaskRef `json:"add"`
	Remove []store.TaskRef `json:"remove"`
}

func (h *Handler) apiPatchCollectionTasks(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	var in CollectionTasksPatch
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	col, err := h.store.PatchCollectionTasks(withoutCancel(c), id, in.Add, in.Remove)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, col)
}

func (h *Handler) apiDeleteCollection(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	if err := h.store.DeleteCollection(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
