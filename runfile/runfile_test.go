package runfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"tribunal/store"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// write puts files in a temp dir and returns its path.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// smallest is the run file, as written there.
const smallest = `providers:
  - name: local
    base_url: http://127.0.0.1:11434
    headers: {Authorization: "Bearer ${OPENAI_API_KEY}"}
tasks:
  - file: tasks.csv            # any import format below
  - task_id: t1
    question: "What is 2+2?"
    reference: "4"
    checks: [{type: numeric}]
targets:
  - {provider: local, model: "llama3.1:8b", settings: {temperature: 0}}
judge: {provider: local, model: "qwen2.5:14b"}
gates: {min_score: 6}          # overall mean judge score; per-model gates too
`

const tasksCSV = "task_id,category,question,reference\nc1,math,What is 3+3?,6\nc2,math,What is 5*5?,25\n"

func TestSmallestRunFile(t *testing.T) {
	dir := write(t, map[string]string{"run.yaml": smallest, "tasks.csv": tasksCSV})
	f, err := Load(filepath.Join(dir, "run.yaml"), env(map[string]string{"OPENAI_API_KEY": "sk-test"}))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, task := range f.Tasks {
		keys = append(keys, task.TaskKey)
	}
	if diff := diff([]string{"c1", "c2", "t1"}, keys); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	if got := f.Tasks[2].Checks; len(got) != 1 || got[0].Type != "numeric" {
		t.Errorf("t1 checks = %+v", got)
	}
	p := f.Providers[0]
	if p.Name != "local" || p.Input.BaseURL != "http://127.0.0.1:11434" {
		t.Errorf("provider = %+v", p)
	}
	want := []store.Header{{Key: "Authorization", Value: "Bearer sk-test", IsSecret: true}}
	if diff := diff(want, p.Input.Headers); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if len(f.Targets) != 1 || f.Targets[0].Model != "llama3.1:8b" || f.Targets[0].Settings.Temperature == nil || *f.Targets[0].Settings.Temperature != 0 {
		t.Errorf("targets = %+v", f.Targets)
	}
	if len(f.Judges) != 1 || f.Judges[0].Model != "qwen2.5:14b" || f.Judges[0].Saved() {
		t.Errorf("judges = %+v", f.Judges)
	}
	if diff := diff([]Gate{{Key: "min_score", Metric: "score", Value: 6, Line: 14}}, f.Gates.Overall); diff != "" {
		t.Errorf("gates (-want +got):\n%s", diff)
	}
	if f.Collection != "run file run" {
		t.Errorf("collection = %q", f.Collection)
	}
	if diff := diff([]Source{{File: "tasks.csv", Format: "csv", Tasks: 2, Line: 6}, {Tasks: 1, Line: 7}}, f.Sources); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
}

// problem is a problem's place and a piece of its message.
type problem struct {
	file string
	line int
	has  string
}

func wantProblems(t *testing.T, err error, want []problem) {
	t.Helper()
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v, want Problems", err)
	}
	if len(ps) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(ps), len(want), ps.Error())
	}
	for i, w := range want {
		if i >= len(ps) {
			break
		}
		p := ps[i]
		if filepath.Base(p.File) != w.file || p.Line != w.line || !strings.Contains(p.Error(), w.has) {
			t.Errorf("problem %d = %s; want %s:%d containing %q", i, p.Error(), w.file, w.line, w.has)
		}
	}
}

func TestEveryProblemWithItsLine(t *testing.T) {
	bad := `name: broken
providers:
  - name: local
    base_url: http://127.0.0.1:11434
    headers:
      Authorization: "Bearer sk-live-123"
      X-Title: ${MISSING_VAR}
    concurrensy: 3
tasks:
  - file: missing.csv
  - file: bad.csv
  - task_id: t1
    question: "What is 2+2?"
    checks: [{type: numerik}]
  - task_id: t2
targets:
  - {provider: locl, model: "llama3.1:8b"}
  - provider: local
    model: qwen
    settings: {temperature: 5, top_k: 3}
judge: {provider: local}
repeats: 0
max_cost_usd: -2
pipeline: sometimes
gates:
  min_scroe: 6
  min_pass_rate: 80
  per_model: {"gpt-9": {min_score: 1}}
`
	badCSV := "task_id,category,question\nb1,x,ok\nb2,x,\n"
	dir := write(t, map[string]string{"run.yaml": bad, "bad.csv": badCSV})
	_, err := Load(filepath.Join(dir, "run.yaml"), env(nil))
	wantProblems(t, err, []problem{
		{"run.yaml", 6, `Authorization: a secret header takes its value from the environment`},
		{"run.yaml", 7, "environment variable MISSING_VAR is not set"},
		{"run.yaml", 8, `unknown key "concurrensy" (did you mean "concurrency"?)`},
		{"run.yaml", 10, "cannot read missing.csv"},
		{"run.yaml", 11, "bad.csv has problems"},
		{"run.yaml", 14, `unknown check type "numerik"`},
		{"run.yaml", 15, "question: is required"},
		{"run.yaml", 17, `no provider "locl"`},
		{"run.yaml", 20, `unknown key "top_k"`},
		{"run.yaml", 20, "temperature: must be within 0…2"},
		{"run.yaml", 21, "judge.model: is required with provider"},
		{"run.yaml", 22, "repeats: must be within 1…100"},
		{"run.yaml", 23, "max_cost_usd: must be a number of USD within 0…1,000,000,000"},
		{"run.yaml", 24, `pipeline: must be true or false, not "sometimes"`},
		{"run.yaml", 26, `unknown metric "scroe" (did you mean "score"?)`},
		{"run.yaml", 27, "pass_rate is a fraction from 0 to 1"},
		{"run.yaml", 28, `no target "gpt-9"`},
		{"bad.csv", 3, "question: is required"},
	})
}

func TestSyntaxErrorHasItsLine(t *testing.T) {
	_, err := Parse("run.yaml", []byte("providers:\n  - name: a\n targets: [\n"), ".", env(nil))
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Line == 0 || !strings.Contains(ps[0].Message, "not valid YAML") {
		t.Fatalf("err = %v", err)
	}
}

func TestSecrets(t *testing.T) {
	base := `providers:
  - name: p
    base_url: ${BASE:-http://127.0.0.1:1234}
    headers:
%s
tasks: [{task_id: a, question: q}]
targets: [{provider: p, model: m}]
judge: {provider: p, model: j}
`
	for _, tc := range []struct {
		name    string
		headers string
		vars    map[string]string
		want    []store.Header
		problem string
	}{
		{name: "env reference", headers: `      Authorization: "Bearer ${KEY}"`, vars: map[string]string{"KEY": "abc"},
			want: []store.Header{{Key: "Authorization", Value: "Bearer abc", IsSecret: true}}},
		{name: "default", headers: `      X-Api-Key: "${KEY:-dev-key}"`,
			want: []store.Header{{Key: "X-Api-Key", Value: "dev-key", IsSecret: true}}},
		{name: "plain header", headers: `      X-Title: Tribunal CI`,
			want: []store.Header{{Key: "X-Title", Value: "Tribunal CI"}}},
		{name: "escaped", headers: `      X-Template: "$${not_env}"`,
			want: []store.Header{{Key: "X-Template", Value: "${not_env}"}}},
		{name: "literal key", headers: `      X-Api-Key: sk-123`, problem: "run.yaml:5: providers[\"p\"].headers.X-Api-Key: a secret header"},
		{name: "literal token", headers: `      X-Auth-Token: abc`, problem: "run.yaml:5:"},
		{name: "marked secret", headers: "      - {key: X-Custom, value: literal, secret: true}", problem: "run.yaml:5:"},
		{name: "missing env", headers: `      Authorization: "Bearer ${NOPE}"`, problem: "run.yaml:5: providers[\"p\"].headers.Authorization: environment variable NOPE is not set"},
		{name: "malformed", headers: `      Authorization: "Bearer ${1X}"`, problem: "not a valid reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("run.yaml", []byte(strings.Replace(base, "%s", tc.headers, 1)), ".", env(tc.vars))
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("err = %v, want %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := diff(tc.want, f.Providers[0].Input.Headers); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			if f.Providers[0].Input.BaseURL != "http://127.0.0.1:1234" {
				t.Errorf("base_url = %q", f.Providers[0].Input.BaseURL)
			}
		})
	}
}

func TestFullRunFile(t *testing.T) {
	data := `name: Nightly ${BRANCH:-main}
tags: [nightly, team-a]
providers:
  - name: Local Ollama          # stored: use it as it is
  - name: router
    type: openrouter
    base_url: https://openrouter.ai/api
    headers: {Authorization: "Bearer ${OPENROUTER_API_KEY}"}
    concurrency: 8
    prices:
      meta/llama: {input: 0.1, output: 0.2}
tasks:
  - task_id: x1
    question: Say hi
collections: [Math basics]
select: {mode: random, n: 5, seed: 42}
targets:
  - provider: router
    models: [meta/llama, qwen/qwen]
    settings: &cold {temperature: 0, max_tokens: 256}
    tags: [cloud]
  - {provider: Local Ollama, model: "llama3.1:8b", settings: *cold}
judges:
  - {name: Strict Qwen}
  - provider: router
    model: qwen/judge
    style: Five metrics (0–5)
    personality: {name: strict, description: Punishes hedging.}
metrics: [accuracy, check_numeric]
weights: {accuracy: 2}
repeats: 3
system_prompt: Be brief.
max_cost_usd: 2.5
pipeline: true
checks: [{type: contains, value: hi}]
gates:
  min_score: 3
  max_cost_usd: 1.5
  min_accuracy: 2
  per_model:
    "meta/llama": {min_pass_rate: 0.5}
    "Local Ollama / llama3.1:8b": {max_latency_ms: 2000}
out: results/
`
	f, err := Parse("nightly.yaml", []byte(data), ".", env(map[string]string{"OPENROUTER_API_KEY": "or-key"}))
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "Nightly main" || strings.Join(f.Tags, ",") != "nightly,team-a" || f.Out != "results/" {
		t.Errorf("name %q tags %v out %q", f.Name, f.Tags, f.Out)
	}
	if !f.Providers[0].RefOnly || f.Providers[1].Input.Concurrency != 8 || len(f.Providers[1].Input.Prices) != 1 {
		t.Errorf("providers = %+v", f.Providers)
	}
	if len(f.Targets) != 3 || f.Targets[1].Model != "qwen/qwen" || *f.Targets[2].Settings.MaxTokens != 256 || f.Targets[0].Tags[0] != "cloud" {
		t.Errorf("targets = %+v", f.Targets)
	}
	if len(f.Judges) != 2 || f.Judges[0].Name != "Strict Qwen" || f.Judges[1].Style != "Five metrics (0–5)" ||
		f.Judges[1].Personality != "strict" || f.Judges[1].PersonalityDescription != "Punishes hedging." {
		t.Errorf("judges = %+v", f.Judges)
	}
	if f.Selection == nil || *f.Selection != (store.TaskSelection{Mode: "random", N: 5, Seed: 42}) {
		t.Errorf("selection = %+v", f.Selection)
	}
	if f.Repeats != 3 || f.SystemPrompt != "Be brief." || f.Weights["accuracy"] != 2 || len(f.Collections) != 1 {
		t.Errorf("options: repeats %d prompt %q weights %v collections %v", f.Repeats, f.SystemPrompt, f.Weights, f.Collections)
	}
	if !f.Pipeline || f.LineOf("pipeline") == 0 {
		t.Errorf("pipeline = %v (line %d), want true with its line", f.Pipeline, f.LineOf("pipeline"))
	}
	if f.MaxCostUSD == nil || *f.MaxCostUSD != 2.5 || f.LineOf("max_cost_usd") == 0 {
		t.Errorf("max_cost_usd = %v (line %d), want 2.5 with its line", f.MaxCostUSD, f.LineOf("max_cost_usd"))
	}
	if c := f.Tasks[0].Checks; len(c) != 1 || c[0].Type != "contains" || c[0].Value != "hi" {
		t.Errorf("run-level checks not applied: %+v", c)
	}
	if len(f.Gates.Overall) != 3 || len(f.Gates.PerModel) != 2 || f.Gates.PerModel[1].Gates[0].Metric != "latency_ms" {
		t.Errorf("gates = %+v", f.Gates)
	}
	if got := f.LineOf("targets[2].settings.temperature"); got != 22 {
		t.Errorf("LineOf(targets[2].settings.temperature) = %d, want 22 (where the settings alias is)", got)
	}
	if got := f.LineOf("judge_ids[1]"); got != 25 {
		t.Errorf("LineOf(judge_ids[1]) = %d, want 25", got)
	}
}

func TestGatesEvaluate(t *testing.T) {
	g := Gates{
		Overall: []Gate{{Metric: "score", Value: 6}, {Metric: "cost_usd", Max: true, Value: 1}, {Metric: "accuracy", Value: 3}},
		PerModel: []ModelGates{
			{Model: "small", Gates: []Gate{{Metric: "score", Value: 7}}},
			{Model: "p / big", Gates: []Gate{{Metric: "pass_rate", Value: 0.5}}},
		},
	}
	m := &store.RunMetrics{
		Overall: map[string]float64{"score": 6.5, "cost_usd": 0.4},
		PerModel: map[string]map[string]float64{
			"p / small": {"score": 6.9},
			"p / big":   {"pass_rate": 0.5},
		},
	}
	var got []string
	for _, r := range g.Evaluate(m) {
		mark := "fail"
		if r.Pass {
			mark = "pass"
		}
		got = append(got, r.Scope+" "+r.Gate.Metric+" "+mark)
	}
	want := []string{"overall score pass", "overall cost_usd pass", "overall accuracy fail", "p / small score fail", "p / big pass_rate pass"}
	if diff := diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if Passed(g.Evaluate(m)) {
		t.Error("Passed with failing gates")
	}
}

func TestExpandEnv(t *testing.T) {
	look := env(map[string]string{"A": "1", "EMPTY": ""})
	for in, want := range map[string]string{
		"x${A}y": "x1y", "${EMPTY:-d}": "d", "${MISSING:-}": "", "$${A}": "${A}", "plain $A": "plain $A",
	} {
		got, missing, bad := expandEnv(in, look)
		if got != want || len(missing) > 0 || bad != "" {
			t.Errorf("expandEnv(%q) = %q %v %q, want %q", in, got, missing, bad, want)
		}
	}
	if _, missing, _ := expandEnv("${EMPTY}${NOPE}", look); strings.Join(missing, ",") != "EMPTY,NOPE" {
		t.Errorf("missing = %v", missing)
	}
}

// diff reports want and got when they differ ("" when equal).
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("-%#v\n+%#v", want, got)
}
