package cli

import (
	"strings"
	"testing"
)

// validate holds a task file to TaskBench's schema and names every problem
// at file:line:column; warnings print but do not fail.
func TestValidateTaskBenchFile(t *testing.T) {
	p := newInProcess(t)
	bad := p.write("invalid_task.yaml", `name: "invalid_task"
description: "This task is missing required fields"
input_type: "invalid_type"
output_format: "pdf"
`)
	code, out, errOut := p.main("validate", bad)
	for _, w := range []string{
		bad + `:1:1: row 1: evaluation_criteria: is required`,
		bad + `:1:1: row 1: judge_instructions: is required`,
		bad + `:3:13: row 1: input_type: "invalid_type" is not one of transcript, text, csv, json`,
		bad + `:4:16: row 1: output_format: "pdf" is not one of csv, json, markdown`,
		"4 problems",
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	if code != ExitUsage || strings.Contains(out, "OK") {
		t.Errorf("exit %d, stdout %s", code, out)
	}

	good := p.write("free.yaml", `name: t
description: d
input_type: text
output_format: json
evaluation_criteria: [right]
judge_instructions: j
constraints:
  min_words: 10
  max_words: 100
  tone: formal
`)
	code, out, errOut = p.main("validate", good)
	if code != ExitOK || !strings.Contains(out, "free.yaml: OK") ||
		!strings.Contains(errOut, good+`:10:9: warning: row 1: constraints: "tone" is not a key Tribunal writes out in words`) {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// validate looks a run file's style names and gate metrics up in the
// database as run does, so it says OK only where run would start.
func TestValidateRunFileAgainstDatabase(t *testing.T) {
	p := newInProcess(t)
	file := func(style, gate string) string {
		return `name: styles
providers:
  - {name: local, base_url: "http://127.0.0.1:9"}
tasks:
  - {task_id: a1, question: "Say A"}
targets:
  - {provider: local, model: m}
judge: {provider: local, model: j, style: ` + style + `}
gates: {` + gate + `}
`
	}
	bad := p.write("bad.yaml", file("Strictest", "min_acuracy: 5"))
	for _, cmd := range []string{"validate", "run"} {
		args := []string{cmd, bad}
		if cmd == "run" {
			args = append(args, "--progress", "none")
		}
		code, out, errOut := p.main(args...)
		if code != ExitUsage || strings.Contains(out, "OK") ||
			!strings.Contains(errOut, `bad.yaml:8: judge.style: no judgement style "Strictest"`) ||
			!strings.Contains(errOut, `bad.yaml:9: gates.min_acuracy: the run has no metric "acuracy"`) {
			t.Errorf("%s: exit %d\n%s\n%s", cmd, code, out, errOut)
		}
	}
	styles, err := p.store().Styles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, s := range styles {
		for _, m := range s.Metrics {
			if m.Name == "accuracy" {
				name = s.Name
			}
		}
	}
	if name == "" {
		t.Fatalf("no stored style has an accuracy metric: %+v", styles)
	}
	good := p.write("good.yaml", file(`"`+name+`"`, "min_accuracy: 5"))
	if code, out, errOut := p.main("validate", good); code != ExitOK || !strings.Contains(out, "good.yaml: OK") {
		t.Errorf("validate: exit %d\n%s\n%s", code, out, errOut)
	}
}
