package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tribunal/store"
)

// export-tasks writes a collection's tasks in the format -o names, which
// tribunal import reads back as the same tasks.
func TestExportTasksCommand(t *testing.T) {
	p := newInProcess(t)
	st := p.store()
	in := []store.TaskInput{
		{TaskKey: "a", Category: "math", Question: "1+1?", Reference: "2", Tags: []string{"x"}, Input: "numbers"},
		{TaskKey: "b", Category: "math", Question: "Hi", Turns: []string{"Hi", "Bye"}},
	}
	if _, err := st.UpsertTasks(t.Context(), store.ImportInput{Tasks: in, Collection: "Mine"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateTask(t.Context(), store.TaskInput{TaskKey: "z", Category: "other", Question: "q"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(p.dir, "mine.jsonl")
	code, _, errOut := p.main("export-tasks", "--collection", "mine", "-o", out)
	data, err := os.ReadFile(out)
	if code != ExitOK || err != nil || strings.Count(string(data), "\n") != 2 || strings.Contains(string(data), `"z"`) ||
		!strings.Contains(string(data), `"input_data":"numbers"`) {
		t.Fatalf("exit %d, %v, stderr %s\n%s", code, err, errOut, data)
	}
	code, stdout, errOut := p.main("import", out, "--json")
	if code != ExitOK || !strings.Contains(stdout, `"updated": 2`) {
		t.Errorf("import the export: exit %d\n%s\n%s", code, stdout, errOut)
	}
	back, err := st.Tasks(t.Context(), store.TaskFilter{Category: "math"})
	if err != nil || back.Total != 2 || back.Items[0].InputData != "numbers" || len(back.Items[1].Turns) != 2 {
		t.Errorf("tasks after the round trip: %+v, %v", back.Items, err)
	}

	code, stdout, _ = p.main("export-tasks", "--category", "other")
	if code != ExitOK || !strings.HasPrefix(stdout, "# Tribunal tasks") || !strings.Contains(stdout, `- task_id: "z"`) || strings.Contains(stdout, `"a"`) {
		t.Errorf("yaml to stdout: exit %d\n%s", code, stdout)
	}
	if code, _, errOut := p.main("export-tasks", "--collection", "nope"); code != ExitUsage || !strings.Contains(errOut, `no collection "nope" (collections: "Mine")`) {
		t.Errorf("unknown collection: exit %d, %s", code, errOut)
	}
}
