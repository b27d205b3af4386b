package cli

import (
	"context"
	"strings"
	"testing"
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
