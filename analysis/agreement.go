// Package analysis turns a run's stored scores into the statistics people
// read: agreement between judges and with humans, and comparisons.
package analysis

import (
	"math"

	"tribunal/stats"
	"tribunal/store"
)

// Agreement is one kappa with its sample size.
type Agreement struct {
	Kappa float64 `json:"kappa"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	N     int     `json:"n"`
	// Exact is the share of items where both gave the same grade.
	Exact float64 `json:"exact"`
}

// JudgeAgreement is a judge's agreement with the human grades.
type JudgeAgreement struct {
	RunJudgeID int64      `json:"judge_id"`
	Judge      string     `json:"judge"`
	Human      *Agreement `json:"human"` // nil until some of its items are graded
}

// PairAgreement is how two judges of a panel agree.
type PairAgreement struct {
	JudgeA string     `json:"judge_a"`
	JudgeB string     `json:"judge_b"`
	Score  *Agreement `json:"agreement"`
}

// Report is the agreement card of a run.
type Report struct {
	Judges []JudgeAgreement `json:"judges"`
	Pairs  []PairAgreement  `json:"pairs"`
}

// gradeLevel orders human grades: wrong < partial < correct.
var gradeLevel = map[string]int{store.GradeWrong: 0, store.GradePartial: 1, store.GradeCorrect: 2}

// level maps a judge's score to a human grade by thirds of its scale, so
// agreement is measured on the humans' three ordered categories.
func level(score float64, j store.RunJudge) int {
	f := (score - float64(j.ScaleMin)) / float64(j.ScaleMax-j.ScaleMin)
	switch {
	case f < 1.0/3:
		return 0
	case f < 2.0/3:
		return 1
	}
	return 2
}

func agreement(r stats.KappaResult) *Agreement {
	if r.N == 0 {
		return nil
	}
	a := &Agreement{Kappa: r.Kappa, Lo: r.Lo, Hi: r.Hi, N: r.N, Exact: r.Agreement}
	for _, f := range []*float64{&a.Kappa, &a.Lo, &a.Hi} {
		if math.IsNaN(*f) {
			*f = 0 // undefined (one category throughout); Exact still tells the story
		}
	}
	return a
}

// Agreements computes each judge's linear-weighted kappa against the human
// grades (judge scores binned into thirds of the scale) and each pair of
// judges' quadratic-weighted kappa on their own scores (rounded to whole
// points of the scale).
func Agreements(judges []store.RunJudge, in *store.JudgeAgreement) Report {
	byJudge := map[int64]store.RunJudge{}
	for _, j := range judges {
		byJudge[j.ID] = j
	}
	human := map[int64][]float64{} // per judge, its 3×3 table against the grades
	for _, r := range in.Graded {
		j, ok := byJudge[r.RunJudgeID]
		if !ok {
			continue
		}
		if human[j.ID] == nil {
			human[j.ID] = make([]float64, 3*3)
		}
		human[j.ID][level(r.Score, j)*3+gradeLevel[r.Grade]]++
	}
	rep := Report{Judges: []JudgeAgreement{}, Pairs: []PairAgreement{}}
	for _, j := range judges {
		ja := JudgeAgreement{RunJudgeID: j.ID, Judge: j.Name}
		if t := human[j.ID]; t != nil {
			ja.Human = agreement(stats.KappaTable(t, 3, stats.Linear))
		}
		rep.Judges = append(rep.Judges, ja)
	}
	for x := 0; x < len(judges); x++ {
		for y := x + 1; y < len(judges); y++ {
			a, b := judges[x], judges[y]
			k := a.ScaleMax - a.ScaleMin + 1
			rep.Pairs = append(rep.Pairs, PairAgreement{JudgeA: a.Name, JudgeB: b.Name,
				Score: agreement(stats.KappaTable(pairTable(in.Pairs, a, b, k), k, stats.Quadratic))})
		}
	}
	return rep
}

// pairTable is judges a and b's k×k table of rounded scores (points above
// each one's scale minimum); scores off the table are left out.
func pairTable(pairs []store.JudgePairCount, a, b store.RunJudge, k int) []float64 {
	table := make([]float64, max(k, 0)*max(k, 0))
	for _, p := range pairs {
		sa, sb := p.ScoreA, p.ScoreB
		switch {
		case p.JudgeA == b.ID && p.JudgeB == a.ID:
			sa, sb = sb, sa
		case p.JudgeA != a.ID || p.JudgeB != b.ID:
			continue
		}
		i, j := int(math.Round(sa))-a.ScaleMin, int(math.Round(sb))-b.ScaleMin
		if i >= 0 && i < k && j >= 0 && j < k {
			table[i*k+j] += float64(p.N)
		}
	}
	return table
}
