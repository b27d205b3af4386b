package runfile

import (
	"strings"
	"testing"
)

const autoRun = `providers:
  - name: local
    base_url: http://127.0.0.1:11434
tasks:
  - task_id: t1
    question: "What is 2+2?"
usecase: ${UC:-support}
models: auto
judge: {provider: local, model: "qwen2.5:14b"}
`

// models: auto stands in for targets, and needs the use case it recommends for.
func TestModelsAuto(t *testing.T) {
	f, err := Parse("run.yaml", []byte(autoRun), ".", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !f.AutoModels || f.UseCase.Name != "support" || f.Category != "" || len(f.Targets) != 0 {
		t.Errorf("auto %v, usecase %q, category %q, targets %+v", f.AutoModels, f.UseCase.Name, f.Category, f.Targets)
	}
	// Listed targets stay beside the recommended ones.
	f, err = Parse("run.yaml", []byte(autoRun+"targets:\n  - {provider: local, model: mine}\n"), ".", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !f.AutoModels || len(f.Targets) != 1 || f.Targets[0].Model != "mine" {
		t.Errorf("auto with targets: %v %+v", f.AutoModels, f.Targets)
	}
	for _, tc := range []struct {
		replace, with string
		want          []problem
	}{
		{"usecase: ${UC:-support}\n", "", []problem{{"run.yaml", 7, "auto recommends models for a use case: add usecase: NAME"}}},
		{"usecase: ${UC:-support}\n", "category: billing\nusecase: support\n", []problem{{"run.yaml", 7, "give usecase: or category:, not both"}}},
		{"models: auto", "models: best", []problem{{"run.yaml", 0, "targets: is required"}, {"run.yaml", 8, "only auto is understood here"}}},
	} {
		_, err := Parse("run.yaml", []byte(replaceOnce(t, autoRun, tc.replace, tc.with)), ".", env(nil))
		wantProblems(t, err, tc.want)
	}
	// Without models: auto, targets are required as ever.
	_, err = Parse("run.yaml", []byte(replaceOnce(t, autoRun, "models: auto\n", "")), ".", env(nil))
	wantProblems(t, err, []problem{{"run.yaml", 0, "targets: is required"}})
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("%q not in the text", old)
	}
	return strings.Replace(s, old, new, 1)
}
