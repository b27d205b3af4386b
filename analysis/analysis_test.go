package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"tribunal/stats"
	"tribunal/store"
)

func f(v float64) *float64 { return &v }

// entry builds an entry whose task i scores scores[i] (one repeat each).
func entry(run int64, name string, pass float64, scores []float64) Entry {
	e := Entry{RunID: run, RunName: "run", TargetID: run, Model: name, PassThreshold: pass}
	for i, s := range scores {
		passed := int64(0)
		if s >= pass {
			passed = 1
		}
		e.Tasks = append(e.Tasks, store.TaskResult{TaskKey: fmt.Sprintf("t%03d", i), Category: []string{"a", "b"}[i%2],
			Items: 1, Scored: 1, Passed: passed, Score: f(s), MinScore: f(s), MaxScore: f(s), TimeMs: f(100), CostUSD: f(0.01)})
	}
	return e
}

func TestPairTestsAndSummary(t *testing.T) {
	var good, bad, same []float64
	for i := range 30 {
		good = append(good, float64(6+i%5))     // 6..10
		bad = append(bad, float64(3+i%5))       // 3..7: always 3 lower
		same = append(same, float64(6+(i+1)%5)) // a shuffle of good's values
	}
	es := []Entry{entry(1, "good", 5.5, good), entry(2, "bad", 5.5, bad), entry(3, "same", 5.5, same)}
	tests := PairTests(es)
	if len(tests) != 3 {
		t.Fatalf("%d pair tests, want 3", len(tests))
	}
	// Computed independently from the vectors.
	_, pGB := stats.Wilcoxon(good, bad)
	_, pGS := stats.Wilcoxon(good, same)
	_, pBS := stats.Wilcoxon(bad, same)
	holm := stats.Holm([]float64{pGB, pGS, pBS})
	if math.Abs(tests[0].PScore-pGB) > 1e-12 || math.Abs(tests[0].PHolm-holm[0]) > 1e-12 || tests[0].N != 30 || tests[0].Diff.Mean != 3 {
		t.Errorf("good vs bad %+v", tests[0])
	}
	if !strings.HasPrefix(tests[0].Verdict, "good (run) beats bad (run)") || !strings.HasPrefix(tests[1].Verdict, "No significant difference") {
		t.Errorf("verdicts %q / %q", tests[0].Verdict, tests[1].Verdict)
	}
	if !strings.HasPrefix(tests[2].Verdict, "same (run) beats bad (run)") {
		t.Errorf("a negative difference names B the winner: %q", tests[2].Verdict)
	}
	// McNemar on pass/fail: good passes all 30; bad passes only its 6s and 7s (12 of 30).
	if want := stats.McNemar(18, 0); math.Abs(tests[0].PPass-want) > 1e-12 {
		t.Errorf("McNemar p %g, want %g", tests[0].PPass, want)
	}

	sum := Summarise(es, []int{1, -1, 1})
	if g := sum[0]; g.Score.N != 30 || math.Abs(g.Score.Mean-8) > 1e-12 || g.Score.Lo > 8 || g.Score.Hi < 8 || g.Score.Lo >= g.Score.Hi {
		t.Errorf("good's score estimate %+v", g.Score)
	}
	if d := sum[0].Delta; d == nil || d.Mean != 3 || sum[1].Delta != nil || sum[2].Delta == nil {
		t.Errorf("deltas against the baseline: %+v %+v", sum[0].Delta, sum[1].Delta)
	}
	if c := sum[0].CostUSD; c == nil || math.Abs(*c-0.3) > 1e-9 {
		t.Errorf("cost %v", c)
	}
}

func TestTaskRowsFilters(t *testing.T) {
	es := []Entry{entry(1, "base", 5, []float64{8, 8, 2, 6}), entry(2, "new", 5, []float64{8, 3, 2, 7})}
	base := Baselines(es, 1)
	if base[0] != -1 || base[1] != 0 {
		t.Fatalf("baselines %v", base)
	}
	all := TaskRows(es, base, TaskFilter{})
	if len(all) != 4 {
		t.Fatalf("%d rows", len(all))
	}
	dis := TaskRows(es, base, TaskFilter{Disagreement: true})
	if len(dis) != 1 || dis[0].TaskID != "t001" {
		t.Errorf("disagreements %+v", dis)
	}
	reg := TaskRows(es, base, TaskFilter{Regression: true})
	if len(reg) != 1 || reg[0].TaskID != "t001" {
		t.Errorf("regressions %+v", reg)
	}
	cat := TaskRows(es, base, TaskFilter{Category: "b"})
	if len(cat) != 2 || cat[0].TaskID != "t001" || cat[1].TaskID != "t003" {
		t.Errorf("category b %+v", cat)
	}
	cats, grid := CategoryGrid(es)
	if len(cats) != 2 || grid[0][0] != 5 || grid[1][1] != 5 { // base a: (8+2)/2; new b: (3+7)/2
		t.Errorf("grid %v %v", cats, grid)
	}
}

func TestConsistency(t *testing.T) {
	run := &store.Run{Repeats: 3, Targets: []store.RunTarget{{ID: 7, Model: "m"}}}
	results := []store.TaskResult{
		{RunTargetID: 7, TaskKey: "all", Scored: 3, Passed: 3, MinScore: f(8), MaxScore: f(9)},
		{RunTargetID: 7, TaskKey: "none", Scored: 3, Passed: 0, MinScore: f(1), MaxScore: f(2)},
		{RunTargetID: 7, TaskKey: "one", Scored: 3, Passed: 1, MinScore: f(2), MaxScore: f(9)},
		{RunTargetID: 7, TaskKey: "two", Scored: 3, Passed: 2, MinScore: f(4), MaxScore: f(8)},
	}
	c := Consistency(run, results)[0]
	if c.AllPass != 1 || c.AllFail != 1 || c.Inconsistent != 2 || c.Flaky[0].TaskID != "one" || c.Flaky[1].TaskID != "two" {
		t.Fatalf("consistency %+v", c)
	}
	// pass@3 with n=3: 1 if any passed → (1+0+1+1)/4; pass^3: only all-pass tasks → 1/4.
	if math.Abs(c.PassAtK-0.75) > 1e-12 || math.Abs(c.PassHatK-0.25) > 1e-12 || math.Abs(c.MeanSpread-(1+1+7+4)/4.0) > 1e-12 {
		t.Errorf("pass@k %g pass^k %g spread %g", c.PassAtK, c.PassHatK, c.MeanSpread)
	}
}

func TestReliabilityMarksBiasedJudge(t *testing.T) {
	judges := []store.RunJudge{{ID: 1, Name: "fair"}, {ID: 2, Name: "verbose-lover"}}
	probe := &store.JudgeProbe{}
	for i := range 40 {
		length := int64(100 + 37*i%400)
		probe.Lengths = append(probe.Lengths, store.JudgeLength{RunJudgeID: 1, Score: float64(1 + i%10), Length: int64(100 + i*13%50), N: 1})
		probe.Lengths = append(probe.Lengths, store.JudgeLength{RunJudgeID: 2, Score: float64(length) / 50, Length: length, N: 1})
	}
	for range 12 {
		probe.Repeats = append(probe.Repeats, store.JudgeRepeat{RunJudgeID: 1, N: 2, MinScore: 5, MaxScore: 5})
		probe.Repeats = append(probe.Repeats, store.JudgeRepeat{RunJudgeID: 2, N: 2, MinScore: 3, MaxScore: 6})
	}
	cards := Reliabilities(judges, probe, Report{}, map[int64]Flips{1: {Comparisons: 20, Flipped: 2}, 2: {Comparisons: 20, Flipped: 10}})
	if len(cards[0].Untrusted) != 0 || *cards[0].SelfConsistency != 1 || *cards[0].FlipRate != 0.1 {
		t.Errorf("fair judge %+v", cards[0])
	}
	if *cards[1].LengthBias < 0.99 || len(cards[1].Untrusted) != 3 {
		t.Errorf("biased judge %+v (want length, flips and self-consistency flagged)", cards[1])
	}
}

func TestWordDiff(t *testing.T) {
	ops, trunc := WordDiff("The capital is Paris.\nYes", "The capital city is Lyon.\nYes")
	var got []string
	for _, op := range ops {
		got = append(got, op.Kind+op.Text)
	}
	want := []string{"=The capital ", "+city ", "=is ", "-Paris.\n", "+Lyon.\n", "=Yes"}
	if strings.Join(got, "|") != strings.Join(want, "|") || trunc {
		t.Errorf("diff %q", got)
	}
}

// FuzzWordDiff: a diff always rebuilds both texts exactly.
func FuzzWordDiff(f *testing.F) {
	f.Add("a b c", "a c d")
	f.Add("", "x")
	f.Add("  lead\n\ttabs ", "lead tabs")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 2000 || len(b) > 2000 {
			return
		}
		ops, _ := WordDiff(a, b)
		if Joined(ops, "-") != a || Joined(ops, "+") != b {
			t.Fatalf("diff of %q and %q does not rebuild them: %+v", a, b, ops)
		}
	})
}

// TestLargeSampleInterval: above bootstrapMax the normal interval stands in
// for the bootstrap; both must agree on a large sample.
func TestLargeSampleInterval(t *testing.T) {
	xs := make([]float64, 5000)
	for i := range xs {
		xs[i] = float64((i * 7919) % 10)
	}
	normal := MeanCI(xs)
	boot := stats.MeanCI(xs, 1)
	width := boot.Hi - boot.Lo
	if normal.N != 5000 || math.Abs(normal.Mean-boot.Mean) > 1e-12 || math.Abs(normal.Lo-boot.Lo) > 0.1*width || math.Abs(normal.Hi-boot.Hi) > 0.1*width {
		t.Errorf("normal %+v vs bootstrap %+v", normal, boot)
	}
}

// TestSummariseIsTheSameEachTime: sums of floats depend on their order;
// the same tasks must give the same figures, to the last bit, however the
// results arrive (Entries puts them in task order).
func TestSummariseIsTheSameEachTime(t *testing.T) {
	run := &store.Run{ID: 1, Targets: []store.RunTarget{{ID: 1, Model: "m"}}}
	var results []store.TaskResult
	for i := range 64 {
		// Magnitudes far apart: adding them in another order rounds otherwise.
		x := math.Pow(10, float64(i%17)) * (1 + float64(i)/7)
		if i%3 == 0 {
			x = -x / 3
		}
		results = append(results, store.TaskResult{RunTargetID: 1, TaskKey: fmt.Sprintf("t%02d", i), Category: fmt.Sprintf("c%d", i%2),
			Items: 1, Scored: 1, Score: f(x), TimeMs: f(x), TPS: f(x), CostUSD: f(x)})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	e := Entries(run, 5, results)[0]
	first := Summarise([]Entry{e}, nil)[0]
	_, firstGrid := CategoryGrid([]Entry{e})
	for range 30 {
		rng.Shuffle(len(results), func(i, j int) { results[i], results[j] = results[j], results[i] })
		e := Entries(run, 5, results)[0]
		got := Summarise([]Entry{e}, nil)[0]
		if *got.TimeMs != *first.TimeMs || *got.TPS != *first.TPS || *got.CostUSD != *first.CostUSD {
			t.Fatalf("time, tps, cost %v %v %v, then %v %v %v", *first.TimeMs, *first.TPS, *first.CostUSD, *got.TimeMs, *got.TPS, *got.CostUSD)
		}
		if _, grid := CategoryGrid([]Entry{e}); grid[0][0] != firstGrid[0][0] || grid[0][1] != firstGrid[0][1] {
			t.Fatalf("category means %v, then %v", firstGrid[0], grid[0])
		}
	}
}

// MeanCIOfSums gives MeanCI's normal interval from the values' sums, and
// leaves the few values a bootstrap needs to MeanCI.
func TestMeanCIOfSums(t *testing.T) {
	for _, n := range []int{bootstrapMax, bootstrapMax + 1, 50_000} {
		xs := make([]float64, n)
		var sum, sq float64
		for i := range xs {
			xs[i] = float64(i*7919%101) / 1.7
			sum += xs[i]
			sq += xs[i] * xs[i]
		}
		got, ok := MeanCIOfSums(int64(n), sum, sq)
		if n <= bootstrapMax {
			if ok {
				t.Errorf("n=%d: an interval from sums, where the bootstrap needs the values", n)
			}
			continue
		}
		want := MeanCI(xs)
		if !ok || got.N != want.N || math.Abs(got.Mean-want.Mean) > 1e-9 || math.Abs(got.Lo-want.Lo) > 1e-9 || math.Abs(got.Hi-want.Hi) > 1e-9 {
			t.Errorf("n=%d: %+v (%v), want %+v", n, got, ok, want)
		}
	}
}
