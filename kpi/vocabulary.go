package kpi

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"tribunal/checks"
)

// MetricInfo is one metric a formula may read by name: a run metric, with
// the seed's names for it (seed 002 §6) and what it measures.
type MetricInfo struct {
	Name        string   `json:"name"`        // the run metric, lower case
	Aliases     []string `json:"aliases"`     // other names a formula may use, case-insensitive
	Description string   `json:"description"` // what it measures, for the KPI form and the API
	Scale       string   `json:"scale"`       // "0–1" for every score, else its unit
	// Fallback is read when a run lacks the metric itself (ACCURACY on a
	// judge without an accuracy metric reads the judge's score).
	Fallback string `json:"fallback,omitempty"`
}

// Scales of the metrics: scores are normalised, measures keep their unit.
const (
	ScaleUnit = "0–1"
	scaleMS   = "ms"
	scaleUSD  = "USD"
	scaleTPS  = "tokens/s"
)

// checkAliases are the seed's names for reference checks (§6.2, §12.1).
var checkAliases = map[string][]string{
	checks.F1:        {"F1_SCORE"},
	checks.Precision: {"PRECISION"},
	checks.Recall:    {"RECALL"},
	checks.BLEU:      {"BLEU"},
	checks.RougeL:    {"ROUGE"},
}

var checkDescriptions = map[string]string{
	checks.F1:        "token F1 of the answer with the reference (SQuAD's tokens)",
	checks.Precision: "share of the answer's tokens found in the reference",
	checks.Recall:    "share of the reference's tokens found in the answer",
	checks.BLEU:      "sentence BLEU against the reference (sacrebleu's defaults)",
	checks.RougeL:    "ROUGE-L F-measure against the reference",
}

// Vocabulary is every metric a formula knows without looking at judges:
// the run's own metrics and one check_<type> per reference check. Judge
// metrics (coherence, …) come from the judgement styles on top of these.
// It is the one table the formula compiler, the evaluator, the KPI form's
// help and GET /api/kpis/metrics read.
var Vocabulary = vocabulary()

func vocabulary() []MetricInfo {
	v := []MetricInfo{
		{Name: "overall", Scale: ScaleUnit,
			Description: "mean item overall: judge metrics and checks weighted as in the run's summary"},
		{Name: "score", Scale: ScaleUnit,
			Description: "mean judge score (each judge's overall verdict), mapped to 0–1 by the judge's scale"},
		{Name: "accuracy", Aliases: []string{"ACCURACY"}, Scale: ScaleUnit, Fallback: "score",
			Description: "the judges' accuracy metric, mapped to 0–1 by their scale; the judge score where the judges have no accuracy metric"},
		{Name: "pass_rate", Aliases: []string{"PASS_RATE"}, Scale: ScaleUnit,
			Description: "share of judged items that pass (a score in the upper half of the scale)"},
		{Name: "error_rate", Scale: ScaleUnit, Description: "failed items ÷ items"},
		{Name: "latency_ms", Aliases: []string{"LATENCY_MS"}, Scale: scaleMS, Description: "mean time to answer an item"},
		{Name: "tokens_per_s", Scale: scaleTPS, Description: "mean output tokens per second"},
		{Name: "cost_usd", Aliases: []string{"COST_USD"}, Scale: scaleUSD, Description: "total cost of the run, models and judges"},
	}
	for _, typ := range checks.Types {
		d := cmp.Or(checkDescriptions[typ], fmt.Sprintf("the %s reference check", typ))
		v = append(v, MetricInfo{Name: "check_" + typ, Aliases: checkAliases[typ], Scale: ScaleUnit,
			Description: "mean of " + d + " over the scored items"})
	}
	for i := range v {
		if v[i].Aliases == nil {
			v[i].Aliases = []string{} // [] in JSON
		}
	}
	return v
}

var (
	byName  = map[string]*MetricInfo{} // lower-case name or alias -> entry
	aliasOf = map[string]string{}      // lower-case alias -> metric name
)

func init() {
	for i := range Vocabulary {
		m := &Vocabulary[i]
		byName[m.Name] = m
		for _, a := range m.Aliases {
			byName[strings.ToLower(a)] = m
			aliasOf[strings.ToLower(a)] = m.Name
		}
	}
}

// Canonical is the run metric a name in a formula stands for: an alias's
// metric (ROUGE → check_rouge_l), else the name itself, lower-cased.
func Canonical(name string) string {
	name = strings.ToLower(name)
	if m, ok := aliasOf[name]; ok {
		return m
	}
	return name
}

// builtin is the Vocabulary's entry for a canonical name, nil for others.
func builtin(name string) *MetricInfo {
	if m := byName[name]; m != nil && m.Name == name {
		return m
	}
	return nil
}

// closeNames are up to three names (metrics, aliases, known names) that a
// mistyped one was probably meant to be, closest first.
func closeNames(typed string, known map[string]bool) []string {
	typed = strings.ToLower(typed)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	seen := map[string]bool{}
	consider := func(name string) {
		low := strings.ToLower(name)
		if seen[low] {
			return
		}
		seen[low] = true
		d := distance(typed, low)
		if d <= max(1, len(typed)/3) || len(typed) >= 3 && strings.Contains(low, typed) {
			cs = append(cs, cand{name, d})
		}
	}
	for _, m := range Vocabulary {
		consider(m.Name)
		for _, a := range m.Aliases {
			consider(a)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(known)) {
		consider(name)
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.d, b.d) })
	var out []string
	for _, c := range cs[:min(3, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// distance is the Levenshtein distance between two short names.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := range ra {
		cur := make([]int, len(rb)+1)
		cur[0] = i + 1
		for j := range rb {
			cost := 1
			if ra[i] == rb[j] {
				cost = 0
			}
			cur[j+1] = min(prev[j+1]+1, cur[j]+1, prev[j]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}
