package handlers_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// The fake's answers have 10 words (10 completion tokens); each question has
// 4-character words, so chars ÷ 4 matches the fake's prompt tokens (words).
const costAnswer = "one two six ten a b c d e f"

type costRunReply struct {
	ID     int64           `json:"id"`
	Status store.RunStatus `json:"status"`
	Budget *runs.Budget    `json:"budget"`
}

func TestEstimateAndBudget(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				return llmtest.Reply{Content: `{"score": 7, "reasoning": "ok"}`}
			}
			return llmtest.Reply{Content: costAnswer}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(
			`{"name":"Fake","base_url":%q,"prices":[{"model":"fake-small","input_per_mtok":1000,"output_per_mtok":1000}]}`, a.fake.URL)}, 201, &p)
		var keys []string
		for i := range 6 {
			q := strings.TrimSpace(strings.Repeat(fmt.Sprintf("w%02d ", i), 20+i*5))
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"c-%d","category":"c","question":%q}`, i, q)}, 201, nil)
			keys = append(keys, fmt.Sprintf("%q", fmt.Sprintf("c-%d", i)))
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"C","task_ids":[` + strings.Join(keys, ",") + `]}`}, 201, &col)
		body := func(extra string) string {
			return fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%d,"model":"fake-small"}],"collection_ids":[%d]%s}`,
				p.ID, p.ID, col.ID, extra)
		}

		// Negative or absurd budgets are refused everywhere.
		for _, path := range []string{"/api/runs", "/api/runs/estimate"} {
			if got := a.do(t, call{method: "POST", path: path, body: body(`,"max_cost_usd":-1`)}, 422, nil); !strings.Contains(got, "max_cost_usd") {
				t.Errorf("%s: %s", path, got)
			}
		}

		// A first run gives the model a history of answer sizes.
		var first costRunReply
		a.do(t, call{method: "POST", path: "/api/runs", body: body("")}, 201, &first)
		if r := a.waitRunDone(t, first.ID); r.Status != store.RunFinished {
			t.Fatalf("first run: %+v", r)
		}

		var est runs.Estimate
		a.do(t, call{method: "POST", path: "/api/runs/estimate", body: body("")}, 200, &est)
		if len(est.Targets) != 1 || len(est.Judges) != 1 || est.Targets[0].Calls != 6 || est.Judges[0].Calls != 6 {
			t.Fatalf("estimate: %+v", est)
		}
		tg := est.Targets[0]
		if tg.USD == nil || est.Judges[0].USD != nil || !est.Partial || est.Judges[0].Note == "" {
			t.Errorf("prices: target %+v judge %+v partial %v", tg.USD, est.Judges[0], est.Partial)
		}
		if tg.USD != nil && !(tg.USD.Low < tg.USD.Expected && tg.USD.Expected < tg.USD.High && est.TotalUSD.Expected == tg.USD.Expected) {
			t.Errorf("band: %+v total %+v", tg.USD, est.TotalUSD)
		}
		before := len(a.fake.Calls())

		// The second run has a budget of about two answers: it pauses.
		perCall := (float64(tg.InputTokens) + float64(tg.OutputTokens)) / 6 * 1000 / 1e6
		budget := 2 * perCall
		var run costRunReply
		a.do(t, call{method: "POST", path: "/api/runs", body: body(fmt.Sprintf(`,"max_cost_usd":%g`, budget))}, 201, &run)
		eventually(t, "the run to pause at its budget", func() bool {
			a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
			return run.Status == store.RunPaused
		})
		// Concurrency 1: at most one call was in flight when the spend reached the budget.
		if run.Budget == nil || !run.Budget.Reached || run.Budget.SpentUSD > budget+2*perCall {
			t.Errorf("paused with %+v, budget %g, a call costs about %g", run.Budget, budget, perCall)
		}
		// The log is written in batches: the reason shows up shortly.
		eventually(t, `"budget reached" in the run's log`, func() bool {
			logs, _ := st.RunLogs(t.Context(), run.ID, 0, 1000)
			for _, l := range logs {
				if strings.Contains(l.Message, "budget reached") {
					return true
				}
			}
			return false
		})
		a.do(t, call{method: "PATCH", path: fmt.Sprintf("/api/runs/%d", run.ID), body: `{"max_cost_usd":-5}`}, 422, nil)
		a.do(t, call{method: "PATCH", path: fmt.Sprintf("/api/runs/%d", run.ID), body: `{"max_cost_usd":100}`}, 200, &run)
		if run.Status != store.RunPaused || run.Budget == nil || run.Budget.Reached {
			t.Errorf("raised: %+v", run)
		}
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/runs/%d/resume", run.ID)}, 200, nil)
		if r := a.waitRunDone(t, run.ID); r.Status != store.RunFinished {
			t.Fatalf("resumed run: %+v", r)
		}

		// The estimate is within 10 % of what the second run called.
		var calls, in, out int64
		for _, c := range a.fake.Calls()[before:] {
			if c.IsJudge() || c.IsWarmup() {
				continue
			}
			calls++
			in += int64(len(strings.Fields(c.Last())))
			out += int64(len(strings.Fields(costAnswer)))
		}
		within := func(what string, est, got int64) {
			if got == 0 || math.Abs(float64(est-got))/float64(got) > 0.10 {
				t.Errorf("%s: estimated %d, actual %d", what, est, got)
			}
		}
		within("calls", tg.Calls, calls)
		within("input tokens", tg.InputTokens, in)
		within("output tokens", tg.OutputTokens, out)
	})
}

// The estimate measures the prompt the model is sent (package prompt: the
// input data, output format, constraints, examples and the use case's goal),
// not the question alone.
func TestEstimateMeasuresSentPrompt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		input := strings.Repeat("transcript line ", 500) // 8,000 characters
		a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"big","category":"c","usecase":"notes","question":"Chunk it.","input":%q}`, input)}, 201, nil)
		a.do(t, call{method: "POST", path: "/api/usecases", body: fmt.Sprintf(`{"name":"notes","goal":%q}`, strings.Repeat("goal ", 400))}, 201, nil)
		var est runs.Estimate
		a.do(t, call{method: "POST", path: "/api/runs/estimate", body: fmt.Sprintf(
			`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%d,"model":"fake-small"}],"usecases":["notes"]}`, p.ID, p.ID)}, 200, &est)
		if len(est.Targets) != 1 {
			t.Fatalf("estimate %+v", est)
		}
		// A use case no task has is refused, as POST /api/runs refuses it.
		for _, path := range []string{"/api/runs", "/api/runs/estimate"} {
			if got := a.do(t, call{method: "POST", path: path, body: fmt.Sprintf(
				`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%d,"model":"fake-small"}],"usecases":["nobody"]}`, p.ID, p.ID)}, 422, nil); !strings.Contains(got, "usecases[0]") {
				t.Errorf("%s: %s", path, got)
			}
		}
		if want := int64(len(input)+2000) / runs.CharsPerToken; est.Targets[0].InputTokens < want {
			t.Errorf("input tokens %d, want at least %d (the input data and the use case's goal are sent)", est.Targets[0].InputTokens, want)
		}
	})
}
