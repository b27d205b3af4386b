package runs

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// Runs judged on different scales read the same to KPIs and alerts when
// their judges thought the same of the answers: a 2 of 0–4 and a 5 of 0–10
// are both 0.5, though gates still see 2 and 5.
func TestNormalizedMetricsAcrossScales(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBenchWith(t, st, 6, nil, func(r llmtest.ChatRequest) llmtest.Reply {
			if !r.IsJudge() {
				return llmtest.Reply{Content: "an answer"}
			}
			prompt := ""
			for _, m := range r.Messages {
				prompt += m.Content
			}
			score := 5
			if strings.Contains(prompt, "0-4") {
				score = 2
			}
			return llmtest.Reply{Content: fmt.Sprintf(`{"score": %d, "reasoning": "half right"}`, score)}
		})
		metricsOf := func(scaleMax int) (raw, norm float64) {
			style, err := st.CreateStyle(ctx, store.StyleInput{Name: fmt.Sprintf("0–%d", scaleMax), ScaleMin: 0, ScaleMax: scaleMax,
				Metrics: []store.Metric{{Name: "score", Weight: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			j, err := st.CreateJudge(ctx, store.JudgeInput{Name: fmt.Sprintf("judge 0–%d", scaleMax), ProviderID: b.provider, Model: "fake-judge", StyleID: style.ID})
			if err != nil {
				t.Fatal(err)
			}
			run := b.run(t, store.RunInput{JudgeIDs: []int64{j.ID}}, "m")
			sum, err := Snapshot(ctx, st, run)
			if err != nil {
				t.Fatal(err)
			}
			m, n := MetricsOf(run, sum), NormalizedMetricsOf(run, sum)
			if !near(n.Overall["overall"], 0.5) {
				t.Errorf("0–%d: overall %v, want 0.5", scaleMax, n.Overall["overall"])
			}
			return m.Overall["score"], n.Overall["score"]
		}
		raw4, norm4 := metricsOf(4)
		raw10, norm10 := metricsOf(10)
		if raw4 != 2 || raw10 != 5 || !near(norm4, 0.5) || !near(norm10, 0.5) {
			t.Errorf("scores 0–4: %g → %g; 0–10: %g → %g; want 2 and 5, both 0.5", raw4, norm4, raw10, norm10)
		}
	})
}
