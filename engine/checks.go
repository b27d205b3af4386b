package engine

import (
	"fmt"
	"slices"

	"tribunal/checks"
	"tribunal/store"
	"tribunal/trajectory"
)

// runChecks scores the answer with the task's reference checks that the run
// switched on; calls is the agent's trajectory (nil for a model target, which
// the trajectory checks read as no calls). A check that cannot run (say, a
// numeric check whose reference holds no number) scores nothing and says why
// in the live log.
func (e *Engine) runChecks(w *store.WorkItem, opts store.RunOptions, response string, calls trajectory.Calls) []store.Score {
	var out []store.Score
	for _, c := range w.Task.Checks {
		metric := "check_" + c.Type
		if !opts.MetricOn(metric) {
			continue
		}
		ref := checks.Ref(c.Type, c.Value, w.Task.Reference)
		res, err := checks.Run(c.Type, checks.Answer{Text: response, ToolCalls: calls}, ref)
		if err != nil {
			e.logs.add(itemLog(w, store.LogWarn, "check", fmt.Sprintf("%s · %s: check %s could not run: %v",
				w.Target.Label(), w.Task.TaskKey, c.Type, err), ""))
			continue
		}
		out = append(out, store.Score{Source: "check:" + c.Type, Metric: metric, Score: res.Score, Reasoning: res.Detail})
	}
	return out
}

// measures stores the answer's measured latency, tokens, speed and cost as
// scores, for the ones the run names explicitly in its metrics.
func measures(opts store.RunOptions, res store.BenchmarkResult) []store.Score {
	values := map[string]*float64{"latency_ms": ptr(float64(res.TimeMs)), "tokens": ptr(float64(res.CompletionTokens)),
		"tokens_per_s": ptr(res.TokensPerS), "cost_usd": res.CostUSD}
	var out []store.Score
	for _, name := range store.MeasuredMetrics {
		if v := values[name]; v != nil && slices.Contains(opts.Metrics, name) {
			out = append(out, store.Score{Source: "measure", Metric: name, Score: *v})
		}
	}
	return out
}

func ptr(v float64) *float64 { return &v }
