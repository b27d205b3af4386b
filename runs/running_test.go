package runs

import (
	"fmt"
	"testing"

	"tribunal/store"
)

func TestRunningOf(t *testing.T) {
	p1, p2 := int64(1), int64(2)
	targets := []store.RunTarget{
		{ID: 10, ProviderID: &p1, ProviderName: "OpenAI", Model: "gpt", WarmupStatus: store.WarmupOK},
		{ID: 11, ProviderID: &p1, ProviderName: "OpenAI", Model: "gpt-mini", WarmupStatus: store.WarmupPending},
		{ID: 12, ProviderID: &p2, ProviderName: "Ollama", Model: "llama", WarmupStatus: store.WarmupPending},
		{ID: 13, ProviderID: &p2, ProviderName: "Ollama", Model: "broken", WarmupStatus: store.WarmupFailed},
	}
	counts := map[int64]store.TargetCount{
		10: {RunTargetID: 10, Answered: 120, Judged: 30, Total: 200},
		11: {RunTargetID: 11, Total: 200},
		12: {RunTargetID: 12, Total: 200},
		13: {RunTargetID: 13, Answered: 200, Judged: 200, Total: 200},
	}
	judges := []store.RunJudge{{ProviderName: "OpenAI", Model: "judge"}}
	tests := []struct {
		name     string
		phase    store.Phase
		pipeline bool
		counts   map[int64]store.TargetCount
		want     []RunningGroup
	}{
		{"one group per provider, in order", store.PhaseBenchmarking, false, counts, []RunningGroup{
			{"OpenAI", "gpt", GroupAnswering, 120, 200}, {"Ollama", "llama", GroupWarmingUp, 0, 200}}},
		{"pipelined judges beside them", store.PhaseBenchmarking, true, counts, []RunningGroup{
			{"OpenAI", "gpt", GroupAnswering, 120, 200}, {"Ollama", "llama", GroupWarmingUp, 0, 200},
			{"OpenAI", "judge", GroupJudging, 230, 800}}},
		{"judging phase", store.PhaseJudging, false, map[int64]store.TargetCount{
			10: {Answered: 200, Judged: 50, Total: 200}}, []RunningGroup{{"OpenAI", "judge", GroupJudging, 50, 200}}},
		{"nothing left to judge", store.PhaseJudging, false, map[int64]store.TargetCount{
			10: {Answered: 200, Judged: 200, Total: 200}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := &store.Run{Status: store.RunRunning, Phase: tt.phase, Targets: targets, Judges: judges,
				Options: store.RunOptions{Pipeline: tt.pipeline}}
			got := runningOf(run, tt.counts, nil)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	g := RunningGroup{Provider: "OpenAI", Model: "gpt", Phase: GroupAnswering, Done: 120, Total: 200}
	if g.Label() != "OpenAI · gpt" || g.State() != "answering, 120/200" {
		t.Errorf("label %q, state %q", g.Label(), g.State())
	}
}
