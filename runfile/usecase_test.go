package runfile

import (
	"errors"
	"strings"
	"testing"
)

func TestParseUseCase(t *testing.T) {
	data := "name: lectures\ngoal: ${GOAL:-Chunk}\ndefault_judge_model: ${JUDGE}\ndefault_candidate_models: [a/b, '${M:-c/d}']\n" +
		"cost_priority: low\ncontext_needed_tokens: 32000\nchunk_min: 500\nstrict: TRUE\nconstraints:\n  language: en\n  chunk_max: 2000\n"
	in, err := ParseUseCase("uc.yaml", []byte(data), env(map[string]string{"JUDGE": "x/judge"}))
	if err != nil {
		t.Fatal(err)
	}
	if in.Name != "lectures" || in.Goal != "Chunk" || in.DefaultJudgeModel != "x/judge" || strings.Join(in.DefaultCandidateModels, ",") != "a/b,c/d" ||
		in.CostPriority != "low" || in.ContextNeededTokens != 32000 || in.Constraints["chunk_min"] != 500.0 ||
		in.Constraints["chunk_max"] != 2000.0 || in.Constraints["strict"] != true || in.Constraints["language"] != "en" {
		t.Errorf("parsed %+v", in)
	}

	bad := "goal: ${NOPE}\ncost_priority: cheap\nchunk_min: 9\nnested: {a: 1}\nconstraints:\n  chunk_min: 1\n  chunk_max: [1]\n"
	_, err = ParseUseCase("bad.yaml", []byte(bad), env(nil))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v", err)
	}
	got := ps.Error()
	for _, want := range []string{"bad.yaml: name: is required", "bad.yaml:1: goal: environment variable NOPE", "bad.yaml:4: nested:",
		"bad.yaml:6: constraints.chunk_min: is given twice", "bad.yaml:7: constraints.chunk_max: must be a number"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	// Checks past the reading (the store's) name their line too.
	_, err = ParseUseCase("p.yaml", []byte("name: n\n\ncost_priority: cheap\n"), env(nil))
	if err == nil || !strings.HasPrefix(err.Error(), "p.yaml:3: cost_priority:") {
		t.Errorf("cost_priority: %v", err)
	}
	if !IsUseCaseFile("u.yaml", []byte(data)) || IsUseCaseFile("run.yaml", []byte("name: x\ntargets: []\n")) || IsUseCaseFile("u.csv", []byte(data)) {
		t.Error("IsUseCaseFile misjudges")
	}
}

// FuzzParseUseCase: never a panic, and every problem names the file and a
// line inside it.
func FuzzParseUseCase(f *testing.F) {
	f.Add([]byte("name: n\ngoal: g\nchunk_min: 1\nchunk_max: 2\n"))
	f.Add([]byte("name: ${X:-y}\nconstraints: {a: true, b: [1]}\n"))
	f.Add([]byte("- a\n"))
	f.Add([]byte("name: &a x\ngoal: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		in, err := ParseUseCase("uc.yaml", data, env(nil))
		if err == nil {
			if in.Name == "" {
				t.Fatalf("accepted a use case without a name: %q", data)
			}
			return
		}
		var ps Problems
		if !errors.As(err, &ps) || len(ps) == 0 {
			t.Fatalf("error is not Problems: %v", err)
		}
		lines := strings.Count(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data)), "\n") + 1
		for _, p := range ps {
			if p.File != "uc.yaml" || p.Message == "" || p.Line < 0 || p.Line > lines {
				t.Errorf("problem %+v in a %d-line file", p, lines)
			}
		}
	})
}
