package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

func (h *Handler) newRunForm(c echo.Context, f views.NewRunForm) (views.NewRunForm, error) {
	ctx := c.Request().Context()
	var err error
	if f.Providers, err = h.store.Providers(ctx); err != nil {
		return f, err
	}
	if f.Collections, err = h.store.Collections(ctx); err != nil {
		return f, err
	}
	if f.UseCases, err = h.store.UseCases(ctx); err != nil {
		return f, err
	}
	if f.Active, err = h.store.FirstActiveRun(ctx); err != nil {
		return f, err
	}
	if f.Judges, err = h.store.Judges(ctx); err != nil {
		return f, err
	}
	if f.Agents, err = h.store.Agents(ctx); err != nil {
		return f, err
	}
	if f.JudgeMetrics, err = h.judgeMetrics(ctx, f); err != nil {
		return f, err
	}
	// An empty model picker to start from, unless agents alone were picked.
	if len(f.Targets) == 0 && len(f.AgentPicked) == 0 {
		f.Targets = []views.ModelChoice{{}}
	}
	return f, nil
}

// newRun is the new-run form; ?agent_id= (the Agents page's Benchmark)
// ticks that agent.
func (h *Handler) newRun(c echo.Context) error {
	f := views.NewRunForm{AgentPicked: map[int64]bool{}}
	if v := c.QueryParam("agent_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return badRequest("agent_id must be an agent id, got %q", v)
		}
		if _, err := h.store.Agent(c.Request().Context(), id); err != nil {
			return err
		}
		f.AgentPicked[id] = true
	}
	f, err := h.newRunForm(c, f)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.NewRunPage(f))
}

func (h *Handler) newRunTarget(c echo.Context) error {
	i, err := queryInt(c, "i")
	if err != nil {
		return err
	}
	ps, err := h.store.Providers(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ModelPicker("target", i, ps, views.ModelChoice{}))
}

// runFormInput reads the new-run form; picks that cannot be parsed stay in
// the returned form so the page can show them again.
func runFormInput(c echo.Context) (store.RunInput, views.NewRunForm, error) {
	form, err := c.FormParams()
	if err != nil {
		return store.RunInput{}, views.NewRunForm{}, badRequest("unreadable form: %v", err)
	}
	f := views.NewRunForm{Name: form.Get("name"), Selected: map[int64]bool{}, Panel: map[int64]bool{}, Checks: map[string]bool{}, AgentPicked: map[int64]bool{},
		Repeats: form.Get("repeats"), SystemPrompt: form.Get("system_prompt"), ChecksOnly: form.Get("checks_only") != ""}
	in := store.RunInput{Name: form.Get("name"), TriggeredBy: "MANUAL", SystemPrompt: form.Get("system_prompt"), Pairwise: form.Get("pairwise") != "",
		Pipeline: form.Get("pipeline") != ""}
	f.Pairwise, f.Pipeline = in.Pairwise, in.Pipeline
	f.Weights = form.Get("weights")
	parseID := func(field, v string) (int64, error) {
		if strings.TrimSpace(v) == "" {
			return 0, nil
		}
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, &store.ValidationError{Field: field, Message: "is not a valid id"}
		}
		return id, nil
	}
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	weights, err := parseWeights(f.Weights)
	keep(err)
	in.Weights = weights
	jid, err := parseID("judge", form.Get("judge_provider_id"))
	keep(err)
	f.Judge = views.ModelChoice{ProviderID: jid, Model: form.Get("judge_model")}
	for _, v := range form["judge_ids"] {
		id, err := parseID("judge_ids", v)
		keep(err)
		if id > 0 {
			f.Panel[id] = true
			in.JudgeIDs = append(in.JudgeIDs, id)
		}
	}
	// The single judge applies unless a panel or checks alone were chosen.
	if len(in.JudgeIDs) == 0 && !f.ChecksOnly {
		in.Judge = &store.ModelRef{ProviderID: jid, Model: form.Get("judge_model")}
	}
	for _, m := range form["metrics"] {
		f.Checks[m] = true
		in.Metrics = append(in.Metrics, m)
	}
	// The judge metrics the form showed (those of the picked judges), and
	// which of them stay ticked to count toward the overall.
	f.JudgeMetricsOff = map[string]bool{}
	on := map[string]bool{}
	for _, m := range form["judge_metrics"] {
		on[m] = true
	}
	allJudge := true
	for _, m := range form["judge_metrics_shown"] {
		if on[m] {
			in.Metrics = append(in.Metrics, m)
		} else {
			f.JudgeMetricsOff[m] = true
			allJudge = false
		}
	}
	if len(f.Checks) == len(store.CheckTypes) && allJudge && !f.ChecksOnly {
		in.Metrics = nil // everything on: the run scores everything
	}
	if f.ChecksOnly && len(in.Metrics) == 0 {
		keep(&store.ValidationError{Field: "metrics", Message: "a run without a judge needs at least one reference check"})
	}
	if v := strings.TrimSpace(form.Get("max_cost_usd")); v != "" {
		f.MaxCostUSD = v
		usd, err := strconv.ParseFloat(v, 64)
		if err != nil {
			keep(&store.ValidationError{Field: "max_cost_usd", Message: "is not a number"})
		}
		in.MaxCostUSD = &usd
	}
	if r := strings.TrimSpace(form.Get("repeats")); r != "" {
		n, err := strconv.Atoi(r)
		if err != nil {
			keep(&store.ValidationError{Field: "repeats", Message: "is not a whole number"})
		}
		in.Repeats = n
	}
	at := func(list []string, i int) string {
		if i < len(list) {
			return list[i]
		}
		return ""
	}
	providers, models := form["target_provider_id"], form["target_model"]
	for i := range max(len(providers), len(models)) {
		pv, mv := at(providers, i), at(models, i)
		if strings.TrimSpace(pv) == "" && strings.TrimSpace(mv) == "" {
			continue
		}
		pid, err := parseID(fmt.Sprintf("targets[%d]", i), pv)
		keep(err)
		choice := views.ModelChoice{ProviderID: pid, Model: mv, Temperature: at(form["target_temperature"], i),
			MaxTokens: at(form["target_max_tokens"], i), ReasoningEffort: at(form["target_reasoning_effort"], i),
			SystemPrompt: at(form["target_system_prompt"], i), Version: at(form["target_version"], i)}
		f.Targets = append(f.Targets, choice)
		set, err := targetSettings(fmt.Sprintf("targets[%d].settings", i), choice)
		keep(err)
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: pid, Model: mv, Settings: set, Version: choice.Version})
	}
	// Agents follow the models; each brings its own model and settings.
	for _, v := range form["agent_ids"] {
		id, err := parseID("agent_ids", v)
		keep(err)
		if id > 0 && !f.AgentPicked[id] {
			f.AgentPicked[id] = true
			in.Targets = append(in.Targets, store.ModelRef{AgentID: id})
		}
	}
	for _, v := range form["collection_ids"] {
		id, err := parseID("collection_ids", v)
		keep(err)
		if id > 0 {
			f.Selected[id] = true
			in.CollectionIDs = append(in.CollectionIDs, id)
		}
	}
	f.UseCasePicked, f.CategoryPicked = map[string]bool{}, map[store.CategoryRef]bool{}
	for _, u := range form["usecases"] {
		f.UseCasePicked[u] = true
		in.UseCases = append(in.UseCases, u)
	}
	for _, v := range form["categories"] {
		ref, err := categoryRef(v)
		if err != nil {
			keep(err)
			continue
		}
		f.CategoryPicked[ref] = true
		in.Categories = append(in.Categories, ref)
	}
	// The query picker and run tags (pages_import.go).
	f.Pick, in.TaskSelection, in.TaskIDs, in.Tags, err = runPickInput(form)
	keep(err)
	return in, f, firstErr
}

// categoryRef reads a category checkbox's value: the category within its
// use case, as JSON (views.categoryValue).
func categoryRef(v string) (store.CategoryRef, error) {
	var ref store.CategoryRef
	if err := json.Unmarshal([]byte(v), &ref); err != nil {
		return ref, &store.ValidationError{Field: "categories", Message: "is not a category of a use case"}
	}
	return ref, nil
}

// parseWeights reads "metric=weight, …".
func parseWeights(text string) (map[string]float64, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, part := range strings.Split(text, ",") {
		name, value, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		w, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !ok || name == "" || err != nil {
			return nil, &store.ValidationError{Field: "weights", Message: fmt.Sprintf("%q: write metric=weight, e.g. accuracy=2", strings.TrimSpace(part))}
		}
		out[name] = w
	}
	return out, nil
}

// targetSettings parses a target's settings as typed in the form; empty fields keep the model's defaults.
func targetSettings(field string, c views.ModelChoice) (store.TargetSettings, error) {
	set := store.TargetSettings{ReasoningEffort: c.ReasoningEffort, SystemPrompt: strings.TrimSpace(c.SystemPrompt)}
	if v := strings.TrimSpace(c.Temperature); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return set, &store.ValidationError{Field: field + ".temperature", Message: "is not a number"}
		}
		set.Temperature = &t
	}
	if v := strings.TrimSpace(c.MaxTokens); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return set, &store.ValidationError{Field: field + ".max_tokens", Message: "is not a whole number"}
		}
		set.MaxTokens = &n
	}
	return set, nil
}

func (h *Handler) createRunForm(c echo.Context) error {
	in, f, err := runFormInput(c)
	var run *store.Run
	if err == nil {
		run, err = h.engine.StartRun(withoutCancel(c), in)
	}
	if err != nil {
		status, msg, ok := formProblem(err)
		if !ok {
			return err
		}
		f.Error = msg
		if f, err = h.newRunForm(c, f); err != nil {
			return err
		}
		return render(c, status, views.NewRunPage(f))
	}
	return redirectFlash(c, "Run started.", fmt.Sprintf("/runs/%d", run.ID))
}
