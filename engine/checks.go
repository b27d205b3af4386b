package engine

import (
	"fmt"

	"tribunal/checks"
	"tribunal/store"
)

// runChecks scores the answer with the task's reference checks that the run
// switched on. A check that cannot run (say, a numeric check whose reference
// holds no number) scores nothing and says why in the live log.
func (e *Engine) runChecks(w *store.WorkItem, opts store.RunOptions, response string) []store.Score {
	var out []store.Score
	for _, c := range w.Task.Checks {
		metric := "check_" + c.Type
		if !opts.MetricOn(metric) {
			continue
		}
		ref := c.Value
		if ref == "" {
			ref = w.Task.Reference
		}
		res, err := checks.Run(c.Type, response, ref)
		if err != nil {
			e.logs.add(itemLog(w, store.LogWarn, "check", fmt.Sprintf("%s · %s: check %s could not run: %v",
				w.Target.Label(), w.Task.TaskKey, c.Type, err), ""))
			continue
		}
		out = append(out, store.Score{Source: "check:" + c.Type, Metric: metric, Score: res.Score, Reasoning: res.Detail})
	}
	return out
}
