package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tribunal/llm/llmtest"
	"tribunal/store"
)

// BenchmarkProvidersInParallel: 3 providers (each its own fake) × 200 tasks
// at 200 ms a call, at concurrencies 4, 8 and 16, in one run. Groups of
// different providers run at once, so the run should take about as long as
// its slowest provider alone: x-slowest is the run's time ÷ that provider's
// share, warm-up + ⌈200/4⌉·200 ms = 10.2 s (target ≤ 1.15).
//
//	checks:        scored by reference checks only, no judge
//	judged/serial: a judge on a 4th provider (concurrency 32) after all answers
//	judged/pipeline: the same judge with pipeline on, judging as answers come
//
// The judged runs' share is the slowest of the target providers' and the
// judge's (600 verdicts at 32 at once: 19·200 ms = 3.8 s); a serial run
// cannot do better than the two phases' sum, so only the pipelined one
// approaches 1. Run:
//
//	go test -run '^$' -bench ProvidersInParallel -benchtime 1x ./engine/
func BenchmarkProvidersInParallel(b *testing.B) {
	const tasks, lat, judgeConc = 200, 200 * time.Millisecond, 32
	concs := []int{4, 8, 16}
	share := func(conc, calls int) time.Duration { return time.Duration((calls+conc-1)/conc) * lat }
	slowest := lat + share(concs[0], tasks)
	for _, variant := range []string{"checks", "judged/serial", "judged/pipeline"} {
		b.Run(variant, func(b *testing.B) {
			eachDB(b, func(b *testing.B, st *store.Store) {
				latent := func(r llmtest.ChatRequest) llmtest.Reply {
					rep := llmtest.DefaultReply(r)
					rep.Delay = lat
					return rep
				}
				// env.provider is the judge's; the targets get providers of their own.
				env := newBenchEnvScript(b, st, tasks, judgeConc, 1, 64, latent)
				env.pipeline = variant == "judged/pipeline"
				var targets []store.ModelRef
				for i, conc := range concs {
					fake := llmtest.New(b, latent)
					fake.Forget()
					p, err := st.CreateProvider(context.Background(), store.ProviderInput{Name: fmt.Sprintf("p%d", i), BaseURL: fake.URL, Concurrency: conc})
					if err != nil {
						b.Fatal(err)
					}
					targets = append(targets, store.ModelRef{ProviderID: p.ID, Model: fmt.Sprintf("m%d", i)})
				}
				var metrics []string
				ideal := slowest
				if variant == "checks" {
					metrics = []string{"check_contains"}
				} else {
					ideal = max(slowest, share(judgeConc, tasks*len(concs)))
				}
				var took time.Duration
				for b.Loop() {
					_, took = env.runTargets(b, targets, metrics)
				}
				b.ReportMetric(took.Seconds()/ideal.Seconds(), "x-slowest")
				b.ReportMetric(took.Seconds(), "s/run")
			})
		})
	}
}

// BenchmarkPipelineFewSlots: a pipelined run whose process has fewer slots
// than its target and judge could use together (MaxInFlight 4, both at
// concurrency 4): 200 tasks answered at 50 ms, judged at 5 ms. The judge
// has nothing to judge most of the time; were it to hold its share
// regardless, the target would answer two at a time instead of four.
// x-ideal is the run's time ÷ the target's alone at four at once, warm-up
// + ⌈200/4⌉·50 ms = 2.55 s. Run:
//
//	go test -run '^$' -bench PipelineFewSlots -benchtime 1x ./engine/
func BenchmarkPipelineFewSlots(b *testing.B) {
	const tasks, conc, answer, verdict = 200, 4, 50 * time.Millisecond, 5 * time.Millisecond
	ideal := answer + time.Duration((tasks+conc-1)/conc)*answer
	eachDB(b, func(b *testing.B, st *store.Store) {
		// env.provider is the judge's; the target gets a provider of its own.
		env := newBenchEnvScript(b, st, tasks, conc, 1, conc, func(r llmtest.ChatRequest) llmtest.Reply {
			rep := llmtest.DefaultReply(r)
			rep.Delay = verdict
			return rep
		})
		env.pipeline = true
		fake := llmtest.New(b, func(r llmtest.ChatRequest) llmtest.Reply {
			rep := llmtest.DefaultReply(r)
			rep.Delay = answer
			return rep
		})
		fake.Forget()
		p, err := st.CreateProvider(context.Background(), store.ProviderInput{Name: "target", BaseURL: fake.URL, Concurrency: conc})
		if err != nil {
			b.Fatal(err)
		}
		var took time.Duration
		for b.Loop() {
			_, took = env.runTargets(b, []store.ModelRef{{ProviderID: p.ID, Model: "t"}}, nil)
		}
		b.ReportMetric(took.Seconds()/ideal.Seconds(), "x-ideal")
		b.ReportMetric(took.Seconds(), "s/run")
	})
}
