package cli

import (
	"context"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
)

// tribunal import --outputs: a file of answers becomes an IMPORTED run that
// --follow scores in process (the judge named by its provider's name is
// only ever asked to judge); a bad row exits 2 naming its line, and
// nothing is imported.
func TestImportOutputsCommand(t *testing.T) {
	p := newInProcess(t)
	var asked int
	fake := llmtest.New(t, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			return llmtest.Reply{Content: `{"score": 9, "reasoning": "good"}`}
		}
		asked++
		return llmtest.Reply{Content: "a target was asked"}
	})
	st := p.store()
	if _, err := st.CreateProvider(context.Background(), store.ProviderInput{Name: "Judge host", Type: store.ProviderCustom, BaseURL: fake.URL}); err != nil {
		t.Fatal(err)
	}
	file := p.write("answers.csv", "task_id,question,reference,model,response,latency_ms,output_tokens\n"+
		"a,2+2?,4,mine,4,100,1\nb,3+3?,6,mine,It is 6.,200,3\na,,,theirs,five,50,1\n")

	code, out, errOut := p.main("import", "--outputs", file, "--judge-provider", "judge host", "--judge-model", "fake-judge",
		"--checks", "contains", "--collection", "Answers", "--follow")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if !strings.Contains(out, "Imported 3 answers from "+file+" (csv, 2 models) as run 1: 2 tasks created, 0 updated") {
		t.Errorf("stdout: %s", out)
	}
	run, err := st.Run(context.Background(), 1)
	if err != nil || run.Kind != store.RunImported || run.Status != store.RunFinished || run.TriggeredBy != "CLI" || asked != 0 {
		t.Fatalf("run %+v (%v); %d target calls", run, err, asked)
	}
	if !strings.Contains(out, "mine") || !strings.Contains(out, "theirs") {
		t.Errorf("no table per model: %s", out)
	}

	bad := p.write("bad.jsonl", `{"task_id": "a", "model": "m", "response": "r", "cost_usd": "free"}`+"\n")
	code, _, errOut = p.main("import", "--outputs", bad, "--checks", "contains")
	if code != ExitUsage || !strings.Contains(errOut, bad+":1:61: row 1: cost_usd: not a number") {
		t.Errorf("bad file: exit %d, stderr %s", code, errOut)
	}
	code, _, errOut = p.main("import", "--outputs", file)
	if code != ExitUsage || !strings.Contains(errOut, "pick a judge or checks") {
		t.Errorf("no judge: exit %d, stderr %s", code, errOut)
	}
	if runs, _ := st.Runs(context.Background(), store.RunFilter{}); runs.Total != 1 {
		t.Errorf("%d runs after refused imports", runs.Total)
	}
}
