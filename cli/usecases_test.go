package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"tribunal/llm/llmtest"
)

// TestUseCaseFiles: validate checks a use-case file and shows what it adds to
// a task's prompt; import saves it by name, and again updates it.
func TestUseCaseFiles(t *testing.T) {
	p := newInProcess(t)
	uc := p.write("lectures.yaml", "name: lectures\ngoal: ${UC_GOAL:-Chunk lectures}\nchunk_min: 500\n")
	tasks := p.write("tasks.csv", "task_id,category,question,usecase\nt1,c,Chunk this.,lectures\n")

	code, out, errOut := p.main("validate", "--show-prompt", tasks, uc)
	if code != 0 || !strings.Contains(out, `use case "lectures", 1 constraint`) || !strings.Contains(out, "## Goal\nChunk lectures") ||
		!strings.Contains(out, "- Chunk: at least 500.") {
		t.Fatalf("validate = %d\n%s\n%s", code, out, errOut)
	}
	bad := p.write("bad.yaml", "name: x\ngoal: g\ncost_priority: cheap\n")
	if code, _, errOut := p.main("validate", bad); code != 2 || !strings.Contains(errOut, "bad.yaml:3: cost_priority:") {
		t.Errorf("bad use case: %d %s", code, errOut)
	}

	if code, out, errOut := p.main("import", uc); code != 0 || !strings.Contains(out, `Use case "lectures" created`) {
		t.Fatalf("import = %d\n%s\n%s", code, out, errOut)
	}
	t.Setenv("UC_GOAL", "Chunk talks")
	if code, out, errOut := p.main("import", uc, tasks); code != 0 || !strings.Contains(out, `Use case "lectures" updated`) || !strings.Contains(out, "1 created") {
		t.Fatalf("import again = %d\n%s\n%s", code, out, errOut)
	}
	got, err := p.store().UseCaseNamed(context.Background(), "lectures")
	if err != nil || got.Goal != "Chunk talks" || got.Tasks != 1 {
		t.Errorf("saved %+v, %v", got, err)
	}
}

// TestRunFileUseCaseJudge: a run file naming a use case and no judge is
// judged by the use case's default_judge_model through its targets'
// provider, and its tasks join the use case.
func TestRunFileUseCaseJudge(t *testing.T) {
	p := newInProcess(t)
	var mu sync.Mutex
	var judgeModels []string
	fake := llmtest.New(t, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			mu.Lock()
			judgeModels = append(judgeModels, r.Model)
			mu.Unlock()
			return llmtest.Reply{Content: `{"score": 8, "reasoning": "ok"}`}
		}
		return llmtest.DefaultReply(r)
	})
	run := func(name, useCase, extra string) string {
		return p.write(name, "name: uc\nusecase: "+useCase+"\nproviders:\n  - {name: fake, base_url: "+fake.URL+"}\n"+
			"tasks:\n  - {task_id: a1, question: Say A}\ntargets:\n  - {provider: fake, model: m}\n"+extra)
	}
	if code, _, errOut := p.main("run", run("none.yaml", "lectures", ""), "--progress", "none"); code != ExitUsage ||
		!strings.Contains(errOut, `none.yaml:2: usecase: no saved use case "lectures"`) {
		t.Fatalf("unsaved use case: %d %s", code, errOut)
	}
	p.write("lectures.usecase.yaml", "name: lectures\ngoal: Chunk\ndefault_judge_model: ${UC_JUDGE:-judge-model}\n")
	if code, out, errOut := p.main("import", filepath.Join(p.dir, "lectures.usecase.yaml")); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := p.main("run", run("uc.yaml", "lectures", ""), "--progress", "none"); code != ExitOK {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	if len(judgeModels) != 1 || judgeModels[0] != "judge-model" {
		t.Errorf("judged by %v", judgeModels)
	}
	mu.Unlock()
	uc, err := p.store().UseCaseNamed(context.Background(), "lectures")
	if err != nil || uc.Tasks != 1 {
		t.Errorf("the file's task did not join the use case: %+v, %v", uc, err)
	}
	two := run("two.yaml", "lectures", "  - {provider: other, model: m}\n")
	two = p.write("two.yaml", strings.Replace(readFile(t, two), "providers:\n", "providers:\n  - {name: other, base_url: "+fake.URL+"}\n", 1))
	if code, _, errOut := p.main("run", two, "--progress", "none"); code != ExitUsage || !strings.Contains(errOut, "2 providers") {
		t.Errorf("two providers: %d %s", code, errOut)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
