package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"tribunal/analysis"
	"tribunal/assets"
	"tribunal/kpi"
	"tribunal/runs"
	"tribunal/store"
)

// routes lists every route of Tribunal in one place.
func (h *Handler) routes(e *echo.Echo) {
	apiRoutes := h.apiRoutes()
	gzipsItself := map[string]bool{}
	for _, r := range apiRoutes {
		if r.gzips {
			gzipsItself["/api"+r.path] = true
		}
	}
	e.Pre(securityHeaders, h.checkHost)
	e.Use(middleware.Recover())
	e.Use(h.requireAuth)
	e.Use(takeFlash)
	e.Use(h.sameOrigin)
	e.Use(limitBody)
	e.Use(refuseNUL)
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{
		// Streams flush as they go; compressing them would hold frames back.
		Skipper: func(c echo.Context) bool {
			return strings.HasSuffix(c.Request().URL.Path, "/events") || gzipsItself[c.Path()]
		},
	}))

	e.GET("/assets/*", echo.WrapHandler(http.StripPrefix("/assets/", cachedAssets(http.FileServerFS(assets.FS)))))
	// Probes may ask with HEAD.
	e.Match([]string{http.MethodGet, http.MethodHead}, "/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.Match([]string{http.MethodGet, http.MethodHead}, "/readyz", h.ready)
	e.GET("/metrics", echo.WrapHandler(h.metrics.Handler()))
	e.GET("/login", h.showLogin)
	e.POST("/login", h.login)
	e.Match([]string{http.MethodGet, http.MethodPost}, "/logout", h.logout)
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

	e.GET("/usecases", h.showUseCases)
	e.POST("/usecases", h.createUseCasePage)
	e.POST("/usecases/import", h.importUseCasePage)
	e.GET("/usecases/:usecase/edit", h.editUseCasePage)
	e.POST("/usecases/:usecase", h.updateUseCasePage)
	e.POST("/usecases/:usecase/delete", h.deleteUseCasePage)

	e.GET("/collections", h.showCollections)
	e.POST("/collections", h.createCollection)
	e.GET("/collections/:collection", h.showCollection)
	e.POST("/collections/:collection", h.renameCollection)
	e.GET("/collections/:collection/picker", h.collectionPicker)
	e.POST("/collections/:collection/tasks/:task", h.toggleCollectionTask)
	e.POST("/collections/:collection/add-matching", h.addMatchingTasks)
	e.POST("/collections/:collection/delete", h.deleteCollection)

	e.GET("/judges", h.showJudges)
	e.POST("/judges", h.createJudgePage)
	e.GET("/judges/:judge/edit", h.editJudgePage)
	e.POST("/judges/:judge", h.updateJudgePage)
	e.POST("/judges/:judge/delete", h.deleteJudgePage)

	e.GET("/agents", h.showAgents)
	e.POST("/agents", h.createAgentPage)
	e.POST("/agents/extract", h.extractAgentPage)
	e.GET("/agents/server-row", h.agentServerRow)
	e.GET("/agents/header-row", h.agentHeaderRow)
	e.GET("/agents/:agent/edit", h.editAgentPage)
	e.POST("/agents/:agent", h.updateAgentPage)
	e.POST("/agents/:agent/clone", h.cloneAgentPage)
	e.POST("/agents/:agent/test", h.testAgentPage)
	e.POST("/agents/:agent/delete", h.deleteAgentPage)

	e.GET("/sources", h.showSources)
	e.POST("/sources", h.createSourcePage)
	e.GET("/sources/:source/edit", h.editSourcePage)
	e.POST("/sources/:source", h.updateSourcePage)
	e.POST("/sources/:source/test", h.testSourcePage)
	e.POST("/sources/:source/delete", h.deleteSourcePage)
	e.GET("/sources/:source/import", h.showSourceImport)
	e.POST("/sources/:source/import", h.importSourcePage)

	e.GET("/styles", h.showStyles)
	e.POST("/styles", h.createStylePage)
	e.GET("/styles/metric-row", h.styleMetricRow)
	e.POST("/styles/preview", h.previewStylePage)
	e.GET("/styles/:style", h.showStyleHistory)
	e.GET("/styles/:style/edit", h.editStylePage)
	e.POST("/styles/:style", h.updateStylePage)
	e.POST("/styles/:style/delete", h.deleteStylePage)

	e.GET("/import", h.showImport)
	e.POST("/import/preview", h.previewImport)
	e.GET("/import/preview/:token", h.showImportPreview)
	e.POST("/import", h.confirmImport)
	e.POST("/import/outputs", h.importOutputsPage)

	e.GET("/watch", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/schedules") })
	e.GET("/watch/badge", h.unreadBadge)

	e.GET("/schedules", h.showSchedules)
	e.POST("/schedules", h.createSchedulePage)
	e.POST("/schedules/preview", h.cronPreview)
	e.GET("/schedules/:schedule", h.showSchedule)
	e.POST("/schedules/:schedule", h.updateSchedulePage)
	e.POST("/schedules/:schedule/toggle", h.toggleSchedulePage)
	e.POST("/schedules/:schedule/run", h.runSchedulePage)
	e.POST("/schedules/:schedule/token", h.rotateScheduleTokenPage)
	e.POST("/schedules/:schedule/delete", h.deleteSchedulePage)

	e.GET("/recommend", h.showRecommend)

	e.GET("/kpis", h.showKPIs)
	e.POST("/kpis", h.createKPIPage)
	e.POST("/kpis/check", h.checkFormulaPage)
	e.GET("/kpis/:kpi", h.showKPI)
	e.POST("/kpis/:kpi", h.updateKPIPage)
	e.POST("/kpis/:kpi/delete", h.deleteKPIPage)

	e.GET("/alerts", h.showAlerts)
	e.POST("/alerts", h.createAlertPage)
	e.GET("/alerts/:alert", h.showAlert)
	e.POST("/alerts/:alert", h.updateAlertPage)
	e.POST("/alerts/:alert/toggle", h.toggleAlertPage)
	e.POST("/alerts/:alert/test", h.testAlertPage)
	e.POST("/alerts/:alert/delete", h.deleteAlertPage)

	e.GET("/notifications", h.showNotifications)
	e.POST("/notifications/read", h.readNotificationsPage)
	e.POST("/notifications/:notification/read", h.readNotificationsPage)

	e.GET("/collections/:collection/trend", h.collectionTrend)
	e.GET("/compare", h.showCompare)
	e.GET("/compare/diff", h.showDiff)

	e.GET("/runs", h.showRuns)
	e.GET("/runs/new", h.newRun)
	e.GET("/runs/new/target", h.newRunTarget)
	e.GET("/runs/new/tasks", h.runTaskPicker)
	e.GET("/runs/new/metrics", h.newRunMetrics)
	e.POST("/runs/new/estimate", h.newRunEstimate)
	e.POST("/runs", h.createRunForm)
	e.GET("/runs/:run", h.showRun)
	e.GET("/runs/:run/items", h.runItemsPartial)
	e.GET("/runs/:run/results", h.runResultsPartial)
	e.GET("/runs/:run/failures", h.runFailuresPartial)
	e.GET("/runs/:run/targets", h.runTargetsPartial)
	e.GET("/runs/:run/row", h.showRunRow)
	e.GET("/runs/:run/events", h.pageRunEvents)
	e.POST("/runs/:run/delete", h.deleteRunPage)
	e.POST("/runs/:run/retry-judging", h.retryJudgingPage)
	e.POST("/runs/:run/retry-failed", h.retryFailedPage)
	e.POST("/runs/:run/rerun", h.rerunPage)
	e.POST("/runs/:run/rejudge", h.rejudgePage)
	e.POST("/runs/:run/budget", h.raiseBudgetPage)
	e.GET("/runs/:run/grade", h.showGrading)
	e.POST("/runs/:run/grade/:item", h.gradeItemPage)
	e.POST("/runs/:run/:action", h.runActionPage)
	e.GET("/items/:item", h.showItem)
	e.POST("/items/:item/grade", h.gradeItemDetail)

	// JSON API: apiRoutes registers and documents every route.
	api := e.Group("/api")
	for _, r := range apiRoutes {
		api.Add(r.method, r.path, r.handler)
	}
	api.Any("/*", func(c echo.Context) error {
		return echo.NewHTTPError(http.StatusNotFound, "no API route "+c.Request().Method+" "+c.Request().URL.Path)
	})
}

// apiRoutes lists the JSON API; GET /api/openapi.json describes it from
// these entries. Where paths overlap, the fixed segments come first
// (/runs/:run/rerun before /runs/:run/:action).
func (h *Handler) apiRoutes() []apiRoute {
	const get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
	conflict, provider := []int{http.StatusConflict}, []int{http.StatusBadGateway}
	return []apiRoute{
		{method: get, path: "/openapi.json", handler: h.apiOpenAPI, summary: "This document (OpenAPI 3.1)", out: map[string]any{}},

		{method: get, path: "/providers", handler: h.apiListProviders, summary: "List providers", out: []store.Provider{}},
		{method: post, path: "/providers", handler: h.apiCreateProvider, summary: "Create a provider", in: store.ProviderInput{}, out: store.Provider{}, status: http.StatusCreated, errs: conflict},
		{method: get, path: "/providers/:provider", handler: h.apiGetProvider, summary: "Show a provider", out: store.Provider{}},
		{method: put, path: "/providers/:provider", handler: h.apiUpdateProvider, summary: "Update a provider", in: store.ProviderInput{}, out: store.Provider{}, errs: conflict},
		{method: del, path: "/providers/:provider", handler: h.apiDeleteProvider, summary: "Delete a provider", errs: conflict},
		{method: get, path: "/providers/:provider/models", handler: h.apiProviderModels, summary: "List the provider's models with their prices", out: []modelJSON{}, errs: provider},
		{method: post, path: "/providers/:provider/test", handler: h.apiTestProvider, summary: "Test the connection to a provider", out: ConnectionTest{}},

		{method: get, path: "/agents", handler: h.apiListAgents, summary: "List agent configs", out: []store.Agent{}},
		{method: post, path: "/agents", handler: h.apiCreateAgent, summary: "Create an agent config", in: store.AgentInput{}, out: store.Agent{}, status: http.StatusCreated, errs: conflict},
		{method: post, path: "/agents/extract", handler: h.apiExtractAgent, summary: "Read an agent config out of OpenAI Agents SDK Python source (as text, never run); unsaved", in: ExtractJSON{}, out: store.AgentInput{}},
		{method: get, path: "/agents/:agent", handler: h.apiGetAgent, summary: "Show an agent config", out: store.Agent{}},
		{method: put, path: "/agents/:agent", handler: h.apiUpdateAgent, summary: "Save an agent config as its next version", in: store.AgentInput{}, out: store.Agent{}, errs: conflict},
		{method: del, path: "/agents/:agent", handler: h.apiDeleteAgent, summary: "Delete an agent config and its versions"},
		{method: post, path: "/agents/:agent/test", handler: h.apiTestAgent, summary: "Connect to every MCP server of an agent and list the tools each offers it", out: AgentTestJSON{}},
		{method: get, path: "/agents/:agent/versions", handler: h.apiAgentVersions, summary: "List an agent config's versions, newest first", out: []store.AgentVersion{}},

		{method: get, path: "/sources", handler: h.apiListSources, summary: "List trace sources (Langfuse), secret keys masked", out: []store.Source{}},
		{method: post, path: "/sources", handler: h.apiCreateSource, summary: "Create a trace source", in: store.SourceInput{}, out: store.Source{}, status: http.StatusCreated, errs: conflict},
		{method: get, path: "/sources/:source", handler: h.apiGetSource, summary: "Show a trace source", out: store.Source{}},
		{method: put, path: "/sources/:source", handler: h.apiUpdateSource, summary: "Update a trace source; the masked secret key sent back keeps it", in: store.SourceInput{}, out: store.Source{}, errs: conflict},
		{method: del, path: "/sources/:source", handler: h.apiDeleteSource, summary: "Delete a trace source (409 while a run imported from it is active)", errs: conflict},
		{method: post, path: "/sources/:source/test", handler: h.apiTestSource, summary: "Check a trace source's keys against its Langfuse", out: SourceTest{}},
		{method: post, path: "/sources/:source/import", handler: h.apiImportSource, summary: "Import a dataset run of the source as an IMPORTED run, judged and checked like any run (409 when already imported, unless rejudge)",
			in: runs.SourceImport{}, out: runs.SourceImported{}, status: http.StatusCreated, errs: []int{http.StatusConflict, http.StatusBadGateway}},

		{method: get, path: "/tasks", handler: h.apiListTasks, summary: "List tasks", query: "q category usecase tag page per_page", out: store.Page[store.Task]{}},
		{method: get, path: "/recommend", handler: h.apiRecommend, summary: "Which model to use for a use case or category: the models of your finished runs on its tasks, best first by its cost priority (overall with 95 % CI, cost per 1,000 tasks, median latency, tokens/s, n, Pareto front, reason), then those left out and why; candidates from the providers' model lists when none qualifies",
			query: "usecase category budget_usd_per_1k min_overall max_latency_ms min_items cost_priority", out: runs.Recommendation{}, errs: []int{http.StatusNotFound}},
		{method: get, path: "/usecases", handler: h.apiUseCases, summary: "The use case → category hierarchy with task counts", out: []store.UseCase{}},
		{method: post, path: "/usecases", handler: h.apiCreateUseCase, summary: "Save a use case (goal, constraints, defaults)", in: store.UseCaseInput{}, out: store.UseCase{}, status: http.StatusCreated, errs: conflict},
		{method: post, path: "/usecases/import", handler: h.apiImportUseCase, summary: "Import a use-case file (YAML; ${VAR:-default} takes its default: the server's environment is not read), saved by its name: 201 created, 200 updated",
			upload: true, out: UseCaseImported{}, also: map[int]any{http.StatusCreated: UseCaseImported{}}, invalid: ImportErrorJSON{}},
		{method: get, path: "/usecases/:usecase", handler: h.apiGetUseCase, summary: "Show a saved use case with its categories", out: store.UseCase{}},
		{method: put, path: "/usecases/:usecase", handler: h.apiUpdateUseCase, summary: "Update a use case (a new name carries to its tasks)", in: store.UseCaseInput{}, out: store.UseCase{}, errs: conflict},
		{method: del, path: "/usecases/:usecase", handler: h.apiDeleteUseCase, summary: "Forget a use case's saved fields (its tasks keep naming it)"},
		{method: post, path: "/tasks", handler: h.apiCreateTask, summary: "Create a task", in: store.TaskInput{}, out: store.Task{}, status: http.StatusCreated, errs: conflict},
		{method: get, path: "/tasks/export", handler: h.apiExportTasks, summary: "Export tasks as a file that imports back to the same tasks (every field): TaskBench/Tribunal YAML, JSONL or CSV; all tasks, or a collection's, category's or use case's",
			query: "format collection_id category usecase", media: []string{"application/yaml", "application/x-ndjson", "text/csv"}},
		{method: get, path: "/tasks/:task", handler: h.apiGetTask, summary: "Show a task", out: store.Task{}},
		{method: put, path: "/tasks/:task", handler: h.apiUpdateTask, summary: "Update a task", in: store.TaskInput{}, out: store.Task{}, errs: conflict},
		{method: del, path: "/tasks/:task", handler: h.apiDeleteTask, summary: "Delete a task"},

		{method: get, path: "/collections", handler: h.apiListCollections, summary: "List collections", query: "tag", out: []store.Collection{}},
		{method: post, path: "/collections", handler: h.apiCreateCollection, summary: "Create a collection", in: store.CollectionInput{}, out: store.CollectionDetail{}, status: http.StatusCreated, errs: conflict},
		{method: get, path: "/collections/:collection", handler: h.apiGetCollection, summary: "Show a collection with its tasks", out: store.CollectionDetail{}},
		{method: put, path: "/collections/:collection", handler: h.apiUpdateCollection, summary: "Update a collection", in: store.CollectionInput{}, out: store.CollectionDetail{}, errs: conflict},
		{method: patch, path: "/collections/:collection/tasks", handler: h.apiPatchCollectionTasks, summary: "Add and remove a collection's tasks, all or nothing", in: CollectionTasksPatch{}, out: store.CollectionDetail{}},
		{method: del, path: "/collections/:collection", handler: h.apiDeleteCollection, summary: "Delete a collection"},
		{method: get, path: "/collections/:collection/trend", handler: h.apiCollectionTrend, summary: "Each model's mean score in the collection's latest finished runs", out: []store.TrendPoint{}},

		{method: get, path: "/judgement-styles", handler: h.apiListStyles, summary: "List judgement styles", out: []store.JudgementStyle{}},
		{method: post, path: "/judgement-styles", handler: h.apiCreateStyle, summary: "Create a judgement style", in: store.StyleInput{}, out: store.JudgementStyle{}, status: http.StatusCreated, errs: conflict},
		{method: get, path: "/judgement-styles/:style", handler: h.apiGetStyle, summary: "Show a judgement style", out: store.JudgementStyle{}},
		{method: put, path: "/judgement-styles/:style", handler: h.apiUpdateStyle, summary: "Make a new version of a judgement style", in: store.StyleInput{}, out: store.JudgementStyle{}, errs: conflict},
		{method: del, path: "/judgement-styles/:style", handler: h.apiDeleteStyle, summary: "Delete a judgement style", errs: conflict},
		{method: get, path: "/judgement-styles/:style/versions", handler: h.apiStyleVersions, summary: "List a judgement style's versions", out: []store.JudgementStyle{}},

		{method: get, path: "/judges", handler: h.apiListJudges, summary: "List saved judges", out: []store.Judge{}},
		{method: post, path: "/judges", handler: h.apiCreateJudge, summary: "Create a judge", in: store.JudgeInput{}, out: store.Judge{}, status: http.StatusCreated, errs: conflict},
		{method: get, path: "/judges/:judge", handler: h.apiGetJudge, summary: "Show a judge", out: store.Judge{}},
		{method: put, path: "/judges/:judge", handler: h.apiUpdateJudge, summary: "Update a judge", in: store.JudgeInput{}, out: store.Judge{}, errs: conflict},
		{method: del, path: "/judges/:judge", handler: h.apiDeleteJudge, summary: "Delete a judge"},

		{method: get, path: "/runs", handler: h.apiListRuns, summary: "List runs, newest first", query: "status tag collection_id agent_id from to page per_page", out: store.Page[*RunJSON]{}},
		{method: post, path: "/runs", handler: h.apiCreateRun, summary: "Create a run and start it", in: store.RunInput{}, out: RunJSON{}, status: http.StatusCreated, errs: conflict},
		{method: post, path: "/runs/estimate", handler: h.apiEstimateRun, summary: "Estimate a run's calls, tokens and cost (the body of POST /runs) without starting it", in: store.RunInput{}, out: runs.Estimate{}},
		{method: patch, path: "/runs/:run", handler: h.apiPatchRun, summary: "Change a run's budget (max_cost_usd)", in: RunPatch{}, out: RunJSON{}},
		{method: get, path: "/runs/:run", handler: h.apiGetRun, summary: "Show a run: setup, progress, current work, summary and KPI values", out: RunJSON{}},
		{method: del, path: "/runs/:run", handler: h.apiDeleteRun, summary: "Delete a run"},
		{method: get, path: "/runs/:run/items", handler: h.apiRunItems, summary: "List a run's items (an agent's with its tool calls, model calls and reasoning)", query: "status model phase reason violation page per_page after before", out: store.Page[runs.ItemRow]{}},
		{method: get, path: "/runs/:run/scores", handler: h.apiRunScores, summary: "List a run's scores", query: "model judge metric page per_page", out: store.Page[store.ScoreView]{}},
		{method: get, path: "/runs/:run/agreement", handler: h.apiRunAgreement, summary: "Judge–human and judge–judge agreement (kappa)", out: analysis.Report{}},
		{method: get, path: "/runs/:run/analysis", handler: h.apiRunAnalysis, summary: "Per-model means with CIs, paired tests, consistency, judge reliability", out: analysis.RunReport{}},
		{method: get, path: "/runs/:run/pairwise", handler: h.apiRunPairwise, summary: "A pairwise run's leaderboard and flip rates", out: store.PairwiseReport{}},
		{method: get, path: "/runs/:run/export", handler: h.apiExportRun, summary: "Export a run as CSV (one row per item), JSON or an HTML report", query: "format",
			media: []string{"text/csv", "application/json", "text/html"}, gzips: true},
		{method: get, path: "/runs/:run/events", handler: h.apiRunEvents, summary: "Server-sent events: log (RunLog), progress (ProgressEventJSON), end",
			media: []string{"text/event-stream"}},
		{method: post, path: "/runs/:run/retry-judging", handler: h.apiRetryJudging, summary: "Send the items whose judging failed back to the judge", out: RequeuedJSON{}, errs: conflict},
		{method: post, path: "/runs/:run/retry-failed", handler: h.apiRetryFailed, summary: "Send an ended run's failed items back to the phase each failed in", out: RequeuedJSON{}, errs: conflict},
		{method: post, path: "/runs/:run/rerun", handler: h.apiRerun, summary: "A new run from this run's frozen setup", out: RunJSON{}, status: http.StatusCreated, errs: conflict},
		{method: post, path: "/runs/:run/rejudge", handler: h.apiRejudgeRun, summary: "Judge every answer of an ended run again, its verdicts forgotten (an imported run cannot be re-run)", out: RejudgedJSON{}, errs: conflict},
		{method: post, path: "/runs/:run/:action", handler: h.apiRunAction, summary: "Pause, resume or cancel a run", out: RunJSON{}, errs: conflict},
		{method: get, path: "/items/:item", handler: h.apiGetItem, summary: "Show an item: task, answer (an agent's with its tool calls, model calls and reasoning), each judge's prompt, reply and scores, checks, cost, attempts, grade, and its neighbours among the run's items matching the items filter",
			query: "status model phase reason", out: runs.ItemDetail{}},
		{method: put, path: "/items/:item/grade", handler: h.apiGradeItem, summary: "Grade an item by hand", in: store.GradeInput{}, out: store.Grade{}},

		{method: get, path: "/compare", handler: h.apiCompare, summary: "Compare runs side by side", query: "run_ids baseline only category page per_page", out: runs.Comparison{}},
		{method: get, path: "/compare/report", handler: h.apiCompareReport, summary: "Download a comparison: a self-contained HTML report, CSV (a row per task and model) or JSON", query: "run_ids baseline format",
			media: []string{"text/html", "text/csv", "application/json"}},
		{method: get, path: "/compare/diff", handler: h.apiDiff, summary: "Word diff of two items' answers", query: "a b", out: runs.AnswerDiff{}},

		{method: post, path: "/import", handler: h.apiImport, summary: "Import a task file, all or nothing; with kind=outputs, a CSV or JSONL file of answers " +
			"(task_id or question, model, response, latency_ms, input_tokens, output_tokens, cost_usd, reference) as an IMPORTED run scored by " +
			"judge_provider_id and judge_model, or judge_ids, and/or checks (201 with runs.OutputsImport)",
			query:  "kind format collection tags name dry_run filename judge_provider_id judge_model judge_ids checks",
			upload: true, out: ImportedJSON{}, also: map[int]any{http.StatusCreated: runs.OutputsImport{}}, errs: conflict, invalid: ImportErrorJSON{}},
		{method: get, path: "/export", handler: h.apiExportRuns, summary: "Export several runs as one JSON document or HTML comparison", query: "run_ids format",
			media: []string{"application/json", "text/html"}, gzips: true},

		{method: get, path: "/schedules", handler: h.apiListSchedules, summary: "List schedules", out: []ScheduleJSON{}},
		{method: post, path: "/schedules", handler: h.apiCreateSchedule, summary: "Create a schedule", in: scheduleBody{}, out: ScheduleJSON{}, status: http.StatusCreated, errs: conflict},
		{method: get, path: "/schedules/:schedule", handler: h.apiGetSchedule, summary: "Show a schedule", out: ScheduleJSON{}},
		{method: put, path: "/schedules/:schedule", handler: h.apiUpdateSchedule, summary: "Update a schedule (fields left out keep their value)", in: scheduleBody{}, out: ScheduleJSON{}, errs: conflict},
		{method: patch, path: "/schedules/:schedule", handler: h.apiUpdateSchedule, summary: "Update some fields of a schedule", in: scheduleBody{}, out: ScheduleJSON{}, errs: conflict},
		{method: del, path: "/schedules/:schedule", handler: h.apiDeleteSchedule, summary: "Delete a schedule"},
		{method: post, path: "/schedules/:schedule/run", handler: h.apiRunSchedule, summary: "Run a schedule now", out: RunJSON{}, status: http.StatusCreated, errs: conflict},
		{method: post, path: "/schedules/:schedule/trigger", handler: h.apiTriggerSchedule, summary: "Start a WEBHOOK schedule's run (header X-Tribunal-Token: its token; needs no --auth-token)", out: RunJSON{}, status: http.StatusCreated, errs: []int{http.StatusUnauthorized, http.StatusConflict}},
		{method: post, path: "/schedules/:schedule/token", handler: h.apiRotateScheduleToken, summary: "Give a WEBHOOK schedule a new token (shown once; the old one stops working)", out: ScheduleJSON{}, errs: conflict},
		{method: get, path: "/schedules/:schedule/runs", handler: h.apiScheduleHistory, summary: "A schedule's firings", query: "limit", out: []store.ScheduleFiring{}},

		{method: get, path: "/kpis", handler: h.apiListKPIs, summary: "List KPIs", out: []KPIJSON{}},
		{method: post, path: "/kpis", handler: h.apiCreateKPI, summary: "Create a KPI", in: store.KPIInput{}, out: KPIJSON{}, status: http.StatusCreated, errs: conflict},
		{method: post, path: "/kpis/validate", handler: h.apiValidateFormula, summary: "Validate a KPI formula", in: FormulaJSON{}, out: kpi.Validation{}},
		{method: get, path: "/kpis/metrics", handler: h.apiKPIMetrics, summary: "The metrics a KPI formula may read: name, aliases (the seed's names), description, scale", out: []kpi.MetricInfo{}},
		{method: get, path: "/kpis/:kpi", handler: h.apiGetKPI, summary: "Show a KPI with its latest values", out: KPIJSON{}},
		{method: put, path: "/kpis/:kpi", handler: h.apiUpdateKPI, summary: "Update a KPI (fields left out keep their value)", in: store.KPIInput{}, out: KPIJSON{}, errs: conflict},
		{method: patch, path: "/kpis/:kpi", handler: h.apiUpdateKPI, summary: "Update some fields of a KPI", in: store.KPIInput{}, out: KPIJSON{}, errs: conflict},
		{method: del, path: "/kpis/:kpi", handler: h.apiDeleteKPI, summary: "Delete a KPI"},
		{method: get, path: "/kpis/:kpi/values", handler: h.apiKPIValues, summary: "A KPI's values, oldest first", query: "limit", out: []store.KPIPoint{}},

		{method: get, path: "/alerts", handler: h.apiListAlerts, summary: "List alerts", out: []store.Alert{}},
		{method: post, path: "/alerts", handler: h.apiCreateAlert, summary: "Create an alert", in: store.AlertInput{}, out: store.Alert{}, status: http.StatusCreated, errs: conflict},
		{method: get, path: "/alerts/:alert", handler: h.apiGetAlert, summary: "Show an alert", out: store.Alert{}},
		{method: put, path: "/alerts/:alert", handler: h.apiUpdateAlert, summary: "Update an alert (fields left out keep their value)", in: store.AlertInput{}, out: store.Alert{}, errs: conflict},
		{method: patch, path: "/alerts/:alert", handler: h.apiUpdateAlert, summary: "Update some fields of an alert", in: store.AlertInput{}, out: store.Alert{}, errs: conflict},
		{method: del, path: "/alerts/:alert", handler: h.apiDeleteAlert, summary: "Delete an alert"},
		{method: post, path: "/alerts/:alert/test", handler: h.apiTestAlert, summary: "Send a test notification on the alert's channels", out: NotificationJSON{}, status: http.StatusCreated},

		{method: get, path: "/notifications", handler: h.apiListNotifications, summary: "List notifications with their deliveries", query: "alert_id schedule_id run_id unread page per_page", out: NotificationPage{}},
		{method: post, path: "/notifications/read", handler: h.apiReadNotifications, summary: "Mark the notifications named (or, without a body, all) read", in: NotificationIDs{}, maybe: true, out: NotificationsRead{}},
		{method: post, path: "/notifications/:notification/read", handler: h.apiReadNotifications, summary: "Mark a notification read", out: NotificationsRead{}},
	}
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
