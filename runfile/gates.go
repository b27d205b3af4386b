package runfile

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"tribunal/store"
)

// Gates are the run file's pass conditions: CI fails the build when one does not hold.
type Gates struct {
	// Overall gates hold for the whole run.
	Overall []Gate
	// PerModel gates hold for each named target.
	PerModel []ModelGates
}

// ModelGates are the gates of one target, named by model or "provider / model".
type ModelGates struct {
	Model string
	Line  int
	Gates []Gate
}

// Gate is min_<metric> or max_<metric> with its threshold.
type Gate struct {
	// Key is as written, e.g. min_score.
	Key string
	// Metric is a store.RunMetrics name: score, pass_rate, latency_ms,
	// tokens_per_s, cost_usd, error_rate, a judge metric or check_<type>.
	Metric string
	// Max is true for max_ gates (the value must not exceed Value).
	Max   bool
	Value float64
	Line  int
}

func (g Gate) String() string {
	op := "≥"
	if g.Max {
		op = "≤"
	}
	return fmt.Sprintf("%s %s %s", g.Metric, op, strconv.FormatFloat(g.Value, 'f', -1, 64))
}

// BuiltinMetrics are the metric names every run has (when measured).
var BuiltinMetrics = []string{"score", "pass_rate", "latency_ms", "tokens_per_s", "cost_usd", "error_rate"}

// metricAliases are friendlier spellings of metric names.
var metricAliases = map[string]string{
	"tps": "tokens_per_s", "tokens_per_second": "tokens_per_s", "cost": "cost_usd", "latency": "latency_ms",
	"errors": "error_rate", "mean_score": "score", "avg_score": "score",
}

var gateKey = regexp.MustCompile(`^(min|max)_([a-z][a-z0-9_]*)$`)

// Empty reports whether there are no gates at all.
func (g Gates) Empty() bool { return len(g.Overall) == 0 && len(g.PerModel) == 0 }

// Metrics lists every metric the gates read.
func (g Gates) Metrics() []Gate {
	out := append([]Gate(nil), g.Overall...)
	for _, m := range g.PerModel {
		out = append(out, m.Gates...)
	}
	return out
}

func (p *reader) gates(n *node) {
	if n.isNull() || !p.mapping(n, "gates") {
		return
	}
	for i, k := range n.keys {
		v := n.vals[i]
		if k == "per_model" {
			if !p.mapping(v, "gates.per_model") {
				continue
			}
			for j, model := range v.keys {
				field := "gates.per_model." + model
				if !p.targetNamed(model) {
					labels := make([]string, len(p.f.Targets))
					for t := range p.f.Targets {
						labels[t] = cmp.Or(p.f.Targets[t].Model, p.f.Targets[t].Agent)
					}
					msg := fmt.Sprintf("no target %q (name a target's model, \"provider / model\" or an agent)", model)
					if s := suggest(model, labels); s != "" {
						msg += fmt.Sprintf("; did you mean %q?", s)
					}
					p.errf(v.klns[j], field, "%s", msg)
					continue
				}
				mg := ModelGates{Model: model, Line: v.klns[j]}
				if p.mapping(v.vals[j], field) {
					gv := v.vals[j]
					for x, gk := range gv.keys {
						if g, ok := p.gate(gk, gv.vals[x], gv.klns[x], field+"."+gk); ok {
							mg.Gates = append(mg.Gates, g)
						}
					}
				}
				p.f.Gates.PerModel = append(p.f.Gates.PerModel, mg)
			}
			continue
		}
		if g, ok := p.gate(k, v, n.klns[i], "gates."+k); ok {
			p.f.Gates.Overall = append(p.f.Gates.Overall, g)
		}
	}
}

func (p *reader) targetNamed(name string) bool {
	return slices.ContainsFunc(p.f.Targets, func(t Target) bool {
		return t.Model == name || strings.EqualFold(t.Label(), name) || (t.Agent != "" && strings.EqualFold(t.Agent, name))
	})
}

func (p *reader) gate(key string, v *node, line int, field string) (Gate, bool) {
	m := gateKey.FindStringSubmatch(key)
	if m == nil {
		known := []string{"per_model"}
		for _, b := range BuiltinMetrics {
			known = append(known, "min_"+b, "max_"+b)
		}
		msg := fmt.Sprintf("unknown gate %q: gates are min_<metric> or max_<metric> (metrics: %s, check_<type>, or a judge metric), or per_model",
			key, strings.Join(BuiltinMetrics, ", "))
		if s := suggest(key, known); s != "" {
			msg = fmt.Sprintf("unknown gate %q (did you mean %q?)", key, s)
		}
		p.errf(line, field, "%s", msg)
		return Gate{}, false
	}
	metric := m[2]
	if a, ok := metricAliases[metric]; ok {
		metric = a
	}
	if t, ok := strings.CutPrefix(metric, "check_"); ok && !slices.Contains(store.CheckTypes, t) {
		p.errf(line, field, "unknown check %q (checks: %s)", t, strings.Join(store.CheckTypes, ", "))
		return Gate{}, false
	}
	if s := suggest(metric, BuiltinMetrics); s != "" && s != metric && !slices.Contains(BuiltinMetrics, metric) && len(metric) > 3 {
		p.errf(line, field, "unknown metric %q (did you mean %q?)", metric, s)
		return Gate{}, false
	}
	val, ok := p.num(v, field)
	if !ok {
		if v.isNull() {
			p.errf(line, field, "needs a number")
		}
		return Gate{}, false
	}
	switch {
	case (metric == "pass_rate" || metric == "error_rate" || strings.HasPrefix(metric, "check_")) && (val < 0 || val > 1):
		p.errf(v.line, field, "%s is a fraction from 0 to 1 (write 0.8 for 80%%), not %s", metric, v.text)
		return Gate{}, false
	case val < 0:
		p.errf(v.line, field, "must not be negative")
		return Gate{}, false
	}
	return Gate{Key: key, Metric: metric, Max: m[1] == "max", Value: val, Line: line}, true
}

// GateResult is how one gate fared.
type GateResult struct {
	// Scope is "overall" or the target's label.
	Scope string
	Gate  Gate
	// Value is the measured value; nil when the run has none.
	Value *float64
	Pass  bool
}

func (r GateResult) String() string {
	mark := "PASS"
	if !r.Pass {
		mark = "FAIL"
	}
	got := "no value (not measured in this run)"
	if r.Value != nil {
		got = strconv.FormatFloat(round(*r.Value), 'f', -1, 64)
	}
	return fmt.Sprintf("%s  %-28s %s = %s (gate %s, line %d)", mark, r.Scope, r.Gate.Metric, got, r.Gate.String(), r.Gate.Line)
}

func round(v float64) float64 { return math.Round(v*10000) / 10000 }

// Evaluate checks every gate against a run's metrics. A gate whose metric
// the run did not measure fails: an unverifiable gate must not pass CI.
func (g Gates) Evaluate(m *store.RunMetrics) []GateResult {
	var out []GateResult
	check := func(scope string, gates []Gate, values map[string]float64) {
		for _, gt := range gates {
			r := GateResult{Scope: scope, Gate: gt}
			if v, ok := values[gt.Metric]; ok {
				r.Value = &v
				if gt.Max {
					r.Pass = v <= gt.Value
				} else {
					r.Pass = v >= gt.Value
				}
			}
			out = append(out, r)
		}
	}
	check("overall", g.Overall, m.Overall)
	for _, mg := range g.PerModel {
		matched := false
		labels := make([]string, 0, len(m.PerModel))
		for label := range m.PerModel {
			labels = append(labels, label)
		}
		slices.Sort(labels)
		for _, label := range labels {
			_, model, _ := strings.Cut(label, " / ")
			// An agent's label is "name (agent vN)": a gate names the agent.
			agent, _, isAgent := strings.Cut(label, " (agent v")
			if strings.EqualFold(label, mg.Model) || model == mg.Model || (isAgent && strings.EqualFold(agent, mg.Model)) {
				matched = true
				check(label, mg.Gates, m.PerModel[label])
			}
		}
		if !matched {
			check(mg.Model, mg.Gates, nil)
		}
	}
	return out
}

// Passed reports whether every gate passed.
func Passed(rs []GateResult) bool {
	for _, r := range rs {
		if !r.Pass {
			return false
		}
	}
	return true
}
