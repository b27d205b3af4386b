package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"tribunal/assets"
)

// routes lists every route of Tribunal in one place.
func (h *Handler) routes(e *echo.Echo) {
	e.Use(middleware.Recover())
	e.Use(sameOrigin)
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{
		// Streams flush as they go; compressing them would hold frames back.
		Skipper: func(c echo.Context) bool { return strings.HasSuffix(c.Request().URL.Path, "/events") },
	}))

	e.GET("/assets/*", echo.WrapHandler(http.StripPrefix("/assets/", cachedAssets(http.FileServerFS(assets.FS)))))
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/runs") })

	// Pages (templ + HTMX).
	e.GET("/providers", h.showProviders)
	e.POST("/providers", h.createProvider)
	e.GET("/providers/header-row", h.providerHeaderRow)
	e.GET("/providers/models", h.modelOptions)
	e.GET("/providers/:provider/edit", h.editProvider)
	e.POST("/providers/:provider", h.updateProvider)
	e.POST("/providers/:provider/delete", h.deleteProvider)
	e.POST("/providers/:provider/test", h.testProviderPage)

	e.GET("/tasks", h.showTasks)
	e.POST("/tasks", h.createTask)
	e.GET("/tasks/:task/edit", h.editTask)
	e.POST("/tasks/:task", h.updateTask)
	e.POST("/tasks/:task/delete", h.deleteTask)

	e.GET("/collections", h.showCollections)
	e.POST("/collections", h.createCollection)
	e.GET("/collections/:collection", h.showCollection)
	e.POST("/collections/:collection", h.renameCollection)
	e.GET("/collections/:collection/picker", h.collectionPicker)
	e.POST("/collections/:collection/tasks/:task", h.toggleCollectionTask)
	e.POST("/collections/:collection/delete", h.deleteCollection)

	h.evalPages(e)
	h.importRoutes(e)
	h.watchRoutes(e)

	e.GET("/collections/:collection/trend", h.collectionTrend)
	e.GET("/compare", h.showCompare)
	e.GET("/compare/diff", h.showDiff)

	e.GET("/runs", h.showRuns)
	e.GET("/runs/new", h.newRun)
	e.GET("/runs/new/target", h.newRunTarget)
	e.POST("/runs", h.createRunForm)
	e.GET("/runs/:run", h.showRun)
	e.GET("/runs/:run/items", h.runItemsPartial)
	e.GET("/runs/:run/results", h.runResultsPartial)
	e.GET("/runs/:run/failures", h.runFailuresPartial)
	e.GET("/runs/:run/events", h.pageRunEvents)
	e.POST("/runs/:run/delete", h.deleteRunPage)
	e.POST("/runs/:run/retry-judging", h.retryJudgingPage)
	e.POST("/runs/:run/retry-failed", h.retryFailedPage)
	e.POST("/runs/:run/rerun", h.rerunPage)
	e.POST("/runs/:run/:action", h.runActionPage)

	// JSON API.
	api := e.Group("/api")
	api.GET("/providers", h.apiListProviders)
	api.POST("/providers", h.apiCreateProvider)
	api.GET("/providers/:provider", h.apiGetProvider)
	api.PUT("/providers/:provider", h.apiUpdateProvider)
	api.DELETE("/providers/:provider", h.apiDeleteProvider)
	api.GET("/providers/:provider/models", h.apiProviderModels)
	api.POST("/providers/:provider/test", h.apiTestProvider)

	api.GET("/tasks", h.apiListTasks)
	api.GET("/usecases", h.apiUseCases)
	api.POST("/tasks", h.apiCreateTask)
	api.GET("/tasks/:task", h.apiGetTask)
	api.PUT("/tasks/:task", h.apiUpdateTask)
	api.DELETE("/tasks/:task", h.apiDeleteTask)

	api.GET("/collections", h.apiListCollections)
	api.POST("/collections", h.apiCreateCollection)
	api.GET("/collections/:collection", h.apiGetCollection)
	api.PUT("/collections/:collection", h.apiUpdateCollection)
	api.PATCH("/collections/:collection/tasks", h.apiPatchCollectionTasks)
	api.DELETE("/collections/:collection", h.apiDeleteCollection)

	api.GET("/judgement-styles", h.apiListStyles)
	api.POST("/judgement-styles", h.apiCreateStyle)
	api.GET("/judgement-styles/:style", h.apiGetStyle)
	api.PUT("/judgement-styles/:style", h.apiUpdateStyle)
	api.DELETE("/judgement-styles/:style", h.apiDeleteStyle)
	api.GET("/judgement-styles/:style/versions", h.apiStyleVersions)

	api.GET("/judges", h.apiListJudges)
	api.POST("/judges", h.apiCreateJudge)
	api.GET("/judges/:judge", h.apiGetJudge)
	api.PUT("/judges/:judge", h.apiUpdateJudge)
	api.DELETE("/judges/:judge", h.apiDeleteJudge)

	api.PUT("/items/:item/grade", h.apiGradeItem)

	api.GET("/collections/:collection/trend", h.apiCollectionTrend)
	api.GET("/compare", h.apiCompare)
	api.GET("/compare/diff", h.apiDiff)

	api.GET("/runs", h.apiListRuns)
	api.POST("/runs", h.apiCreateRun)
	api.GET("/runs/:run", h.apiGetRun)
	api.DELETE("/runs/:run", h.apiDeleteRun)
	api.GET("/runs/:run/items", h.apiRunItems)
	api.GET("/runs/:run/export", h.apiExportRun)
	api.GET("/runs/:run/events", h.apiRunEvents)
	api.POST("/runs/:run/retry-judging", h.apiRetryJudging)
	api.POST("/runs/:run/retry-failed", h.apiRetryFailed)
	api.POST("/runs/:run/rerun", h.apiRerun)
	api.GET("/runs/:run/scores", h.apiRunScores)
	api.GET("/runs/:run/agreement", h.apiRunAgreement)
	api.GET("/runs/:run/pairwise", h.apiRunPairwise)
	api.GET("/runs/:run/analysis", h.apiRunAnalysis)
	api.POST("/runs/:run/:action", h.apiRunAction)

	api.Any("/*", func(c echo.Context) error {
		return echo.NewHTTPError(http.StatusNotFound, "no API route "+c.Request().Method+" "+c.Request().URL.Path)
	})
}

// cachedAssets lets browsers keep versioned asset URLs for a year.
func cachedAssets(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("v") != "" {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		next.ServeHTTP(w, r)
	})
}
