package importer

import (
	"slices"
	"strings"

	"tribunal/prompt"
)

// TaskBench's task schema (seed 004: llm-taskbench's TaskDefinition and its
// tasks/template.yaml) lists these values.
var (
	InputTypes    = []string{"transcript", "text", "csv", "json"}
	OutputFormats = []string{"csv", "json", "markdown"}
)

// taskBenchKeys are the keys only TaskBench's shape has: a task with any of
// them is held to TaskBench's schema. A plain task (task_id, question, …)
// is not, so Tribunal's own YAML files keep importing as they did.
var taskBenchKeys = []string{"inputtype", "outputformat", "evaluationcriteria"}

func isTaskBench(obj *value) bool {
	for _, k := range obj.keys {
		if slices.Contains(taskBenchKeys, looseKey(k)) {
			return true
		}
	}
	return false
}

// checkTaskBench holds a TaskBench-shaped task to the schema: the required
// fields, the input_type and output_format values, and the types of
// evaluation_criteria, constraints and examples. It reports every problem,
// each where it is (a missing field where the task starts).
func checkTaskBench(obj *value, b *builder) {
	byKey := map[string]*value{}
	for i, k := range obj.keys {
		byKey[looseKey(k)] = obj.vals[i]
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if !byKey[k].empty() {
				return true
			}
		}
		return false
	}
	required := []struct {
		field string
		alt   []string // keys that stand in for it
	}{
		{"name", []string{"name", "taskid", "id"}},
		{"description", []string{"description", "question", "prompt", "turns"}},
		{"input_type", []string{"inputtype"}},
		{"output_format", []string{"outputformat"}},
		{"evaluation_criteria", []string{"evaluationcriteria"}},
		{"judge_instructions", []string{"judgeinstructions"}},
	}
	for _, r := range required {
		if !has(r.alt...) {
			b.fail(obj, r.field, "is required in a TaskBench task (one with input_type, output_format or evaluation_criteria)")
		}
	}
	oneOf(b, byKey["inputtype"], "input_type", InputTypes)
	oneOf(b, byKey["outputformat"], "output_format", OutputFormats)
	if v := byKey["evaluationcriteria"]; !v.empty() {
		if v.kind != list {
			b.fail(v, "evaluation_criteria", "must be a list of criteria, not %s", v.describe())
		} else {
			for i, it := range v.items {
				if it.kind != scalar || strings.TrimSpace(it.text) == "" {
					b.fail(it, "evaluation_criteria", "criterion %d must be non-empty text", i+1)
				}
			}
		}
	}
	if v := byKey["constraints"]; !v.empty() && v.kind != object {
		b.fail(v, "constraints", "must be a mapping of constraint: value (min_words: 100), not %s", v.describe())
	}
	if v := byKey["examples"]; !v.empty() {
		if v.kind != list {
			b.fail(v, "examples", "must be a list of examples (input, expected_output, …), not %s", v.describe())
		} else {
			for i, it := range v.items {
				if it.kind != object {
					b.fail(it, "examples", "example %d must be a mapping (input, expected_output, …), not %s", i+1, it.describe())
				}
			}
		}
	}
}

// oneOf checks that v, when given, is one of the allowed values.
func oneOf(b *builder, v *value, field string, allowed []string) {
	switch {
	case v.empty():
	case v.kind != scalar:
		b.fail(v, field, "must be one of %s, not %s", strings.Join(allowed, ", "), v.describe())
	case !slices.Contains(allowed, strings.TrimSpace(v.text)):
		b.fail(v, field, "%q is not one of %s", strings.TrimSpace(v.text), strings.Join(allowed, ", "))
	}
}

// checkConstraints looks at a constraints mapping: a min/max pair whose
// minimum is above its maximum is an error at the minimum. TaskBench lets a
// task add constraints of its own ("Add your own constraints as key-value
// pairs", its template says), so a key Build does not write out in words is
// allowed, with a warning that says what the model gets.
func checkConstraints(v *value, b *builder) {
	if v.kind != object {
		return
	}
	cs := make([]prompt.Constraint, len(v.keys))
	for i, k := range v.keys {
		cs[i] = prompt.Constraint{Key: k, Value: v.vals[i].inline()}
	}
	for _, bc := range prompt.BoundConflicts(cs) {
		b.fail(v.vals[bc.Min], "constraints", "%s", bc.Message)
	}
	for i, c := range cs {
		if line, worded := prompt.InWords(c); !worded {
			b.warn(v.vals[i], "constraints", "%q is not a key Tribunal writes out in words (%s); the model gets it as %q",
				c.Key, prompt.WordedKeys, line)
		}
	}
}
