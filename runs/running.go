package runs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"tribunal/store"
)

// What a running group is doing now.
const (
	GroupWarmingUp = "warming up"
	GroupAnswering = "answering"
	GroupJudging   = "judging"
)

// RunningGroup is one group a run works on now: a target's group answering
// (or warming up) in its provider's lane, or the judges. Groups of
// different providers run at once (see engine/doc.go), and with the run
// option pipeline the judges beside them.
type RunningGroup struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Phase    string `json:"phase"`
	// Done counts the group's items past this phase (answers, or verdicts
	// and comparisons), of Total.
	Done  int64 `json:"done"`
	Total int64 `json:"total"`
}

// Running lists the groups a RUNNING run works on now, in the user's
// order, judges last; none for a run that is not running.
func (s *Service) Running(ctx context.Context, run *store.Run) ([]RunningGroup, error) {
	if run.Status != store.RunRunning {
		return nil, nil
	}
	counts, err := s.store.TargetCounts(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	var cmp *store.ComparisonCounts
	if run.Options.Pairwise && len(run.Judges) > 0 {
		c, err := s.store.ComparisonProgress(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		cmp = &c
	}
	return runningOf(run, counts, cmp), nil
}

// runningOf picks the running groups from each target's counts: the first
// target of each lane with answers to give, and the judges while answers
// wait for them (cmp holds a pairwise run's comparisons).
func runningOf(run *store.Run, counts map[int64]store.TargetCount, cmp *store.ComparisonCounts) []RunningGroup {
	var out []RunningGroup
	var pending []store.RunTarget
	var answered, judged, total int64
	for _, t := range run.Targets {
		c := counts[t.ID]
		answered, judged, total = answered+c.Answered, judged+c.Judged, total+c.Total
		if c.Answered < c.Total && t.WarmupStatus != store.WarmupFailed {
			pending = append(pending, t)
		}
	}
	if run.Phase == store.PhaseBenchmarking {
		for _, t := range store.LaneHeads(pending) {
			g := RunningGroup{Provider: t.ProviderName, Model: t.Model, Phase: GroupAnswering,
				Done: counts[t.ID].Answered, Total: counts[t.ID].Total}
			if t.AgentName != "" {
				g.Model = t.Label()
			}
			if t.WarmupStatus != store.WarmupOK {
				g.Phase = GroupWarmingUp
			}
			out = append(out, g)
		}
	}
	judging := run.Phase == store.PhaseJudging || run.Options.Pipeline
	if len(run.Judges) == 0 || !judging {
		return out
	}
	g := RunningGroup{Provider: judgeProviders(run.Judges), Model: judgeModels(run.Judges), Phase: GroupJudging, Done: judged, Total: total}
	if cmp != nil {
		g.Done, g.Total = cmp.Done+cmp.Failed, cmp.Total
	}
	// Judges work while something answered waits for them.
	if (cmp == nil && judged < answered) || (cmp != nil && cmp.Pending() > 0) {
		out = append(out, g)
	}
	return out
}

func judgeProviders(js []store.RunJudge) string {
	names := make([]string, 0, len(js))
	for _, j := range js {
		if !slices.Contains(names, j.ProviderName) {
			names = append(names, j.ProviderName)
		}
	}
	return strings.Join(names, ", ")
}

func judgeModels(js []store.RunJudge) string {
	names := make([]string, len(js))
	for i, j := range js {
		names[i] = j.Model
	}
	return strings.Join(names, ", ")
}

// Label names the group: "OpenAI · gpt-4o-mini".
func (g RunningGroup) Label() string {
	if g.Provider == "" {
		return g.Model
	}
	return g.Provider + " · " + g.Model
}

// State says what the group does and how far it is: "answering, 120/200",
// "warming up".
func (g RunningGroup) State() string {
	if g.Phase == GroupWarmingUp {
		return g.Phase
	}
	return fmt.Sprintf("%s, %d/%d", g.Phase, g.Done, g.Total)
}
