package runs

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/importer"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// outputsFile is two models' answers to three tasks, one of them named by
// its question only; "small" gets two of them wrong.
const outputsFile = "task_id,question,reference,model,response,latency_ms,input_tokens,output_tokens,cost_usd\n" +
	"cap,Capital of France?,Paris,big,It is Paris.,1200,30,4,0.002\n" +
	"cap,,,small,It is Lyon.,300,30,3,0.0001\n" +
	"sum,2+2?,4,big,4,900,12,1,0.001\n" +
	"sum,,,small,5,250,12,1,0.00005\n" +
	",Colour of the sky?,blue,big,blue,1500,10,1,\n" +
	",Colour of the sky?,,small,The sky is blue,,,,\n"

func readOutputs(t *testing.T, data string) []importer.OutputRow {
	t.Helper()
	o := importer.ReadOutputs("outputs.csv", []byte(data), "")
	if len(o.Errors) > 0 {
		t.Fatal(o.Errors)
	}
	return o.Rows
}

func (b *bench) wait(t *testing.T, id int64) *store.Run {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := b.st.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Active() {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s", id, got.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestImportOutputs: a file of two models' answers becomes an IMPORTED run
// with a target per model; checks score the answers against the rows'
// references, the judge is called only as a judge, and latency, tokens and
// cost are kept as the file gives them. Importing it again updates the
// tasks (no duplicates) and makes a new run.
func TestImportOutputs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		var judged, asked atomic.Int64
		b := newBenchWith(t, st, 0, nil, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				judged.Add(1)
				return llmtest.Reply{Content: `{"score": 8, "reasoning": "fine"}`}
			}
			asked.Add(1)
			return llmtest.Reply{Content: "a target was asked"}
		})
		opts := OutputsOptions{Judge: &store.ModelRef{ProviderID: b.provider, Model: "fake-judge"}, Checks: []string{"contains", "F1"},
			Collection: "mine", TriggeredBy: "API"}
		res, err := b.svc.ImportOutputs(ctx, readOutputs(t, outputsFile), opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.TasksCreated != 3 || res.TasksUpdated != 0 || res.Items != 6 || res.Models != 2 || res.CollectionID == 0 {
			t.Fatalf("result %+v", res)
		}
		run := b.wait(t, res.RunID)
		if run.Status != store.RunFinished || run.Kind != store.RunImported || len(run.Targets) != 2 || run.Targets[0].ProviderName != ImportedProvider {
			t.Fatalf("run %s %s, targets %+v", run.Status, run.Kind, run.Targets)
		}
		type measures struct {
			ms, in, out int64
			cost        float64
		}
		want := map[string]struct {
			contains float64
			m        *measures
		}{
			"cap/big": {1, &measures{1200, 30, 4, 0.002}}, "cap/small": {0, &measures{300, 30, 3, 0.0001}},
			"sum/big": {1, &measures{900, 12, 1, 0.001}}, "sum/small": {0, &measures{250, 12, 1, 0.00005}},
			importer.QuestionKey("Colour of the sky?") + "/big": {1, nil}, importer.QuestionKey("Colour of the sky?") + "/small": {1, nil},
		}
		items, err := b.svc.Items(ctx, run, store.ItemFilter{PerPage: 100})
		if err != nil || len(items.Items) != 6 {
			t.Fatalf("%d items, %v", len(items.Items), err)
		}
		for _, it := range items.Items {
			key := it.TaskID + "/" + it.Model
			w, ok := want[key]
			if !ok || it.Status != store.ItemCompleted {
				t.Errorf("item %s: %s", key, it.Status)
				continue
			}
			if m := w.m; m != nil && (*it.TimeMs != m.ms || *it.PromptTokens != m.in || *it.CompletionTokens != m.out || *it.CostUSD != m.cost) {
				t.Errorf("%s measures %d ms, %d+%d tokens, $%v; want %+v", key, *it.TimeMs, *it.PromptTokens, *it.CompletionTokens, *it.CostUSD, *m)
			}
			if w.m == nil && strings.HasSuffix(key, "small") && it.CostUSD != nil {
				t.Errorf("%s: a cost the file did not give: $%v", key, *it.CostUSD)
			}
			scores, err := st.ItemScoreRows(ctx, it.ID)
			if err != nil {
				t.Fatal(err)
			}
			var sources []string
			for _, sc := range scores {
				sources = append(sources, sc.Source)
				if sc.Source == "check:contains" && sc.Score != w.contains {
					t.Errorf("%s: contains scored %v, want %v", key, sc.Score, w.contains)
				}
			}
			if strings.Join(sources, ",") != "check:contains,check:f1,judge:1" {
				t.Errorf("%s scored by %v", key, sources)
			}
		}
		if asked.Load() != 0 || judged.Load() != 6 {
			t.Errorf("%d target calls, %d judge calls; want 0 and 6", asked.Load(), judged.Load())
		}

		again, err := b.svc.ImportOutputs(ctx, readOutputs(t, outputsFile), opts)
		if err != nil {
			t.Fatal(err)
		}
		if again.RunID == res.RunID || again.TasksCreated != 0 || again.TasksUpdated != 3 || again.CollectionID != res.CollectionID {
			t.Errorf("re-import %+v after %+v", again, res)
		}
		b.wait(t, again.RunID)
		tasks, err := st.Tasks(ctx, store.TaskFilter{})
		if err != nil || tasks.Total != 3 {
			t.Errorf("%d tasks after a re-import (%v), want 3", tasks.Total, err)
		}
	})
}

// TestImportOutputsRefused: a row naming a task that does not exist, without
// its question, refuses the whole file with its line; with neither a judge
// nor checks, or with a check that needs a reference a task lacks, nothing
// is imported either. Nothing is written in any case.
func TestImportOutputsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBenchWith(t, st, 0, nil, func(llmtest.ChatRequest) llmtest.Reply {
			return llmtest.Reply{Content: `{"score": 8, "reasoning": "fine"}`}
		})
		judge := &store.ModelRef{ProviderID: b.provider, Model: "fake-judge"}
		for _, tc := range []struct {
			name, file string
			opts       OutputsOptions
			want       string
		}{
			{"unknown task", "task_id,question,model,response\nnew,Is this new?,m,yes\nghost,,m,boo\n", OutputsOptions{Judge: judge},
				`line 3: task_id: no task "ghost" exists; give the row its question to create it`},
			{"no reference", "question,model,response\nq?,m,a\n", OutputsOptions{Checks: []string{"exact_match"}},
				"line 2: reference: the exact_match check compares with a reference; give the task one"},
			{"neither", "question,model,response\nq?,m,a\n", OutputsOptions{}, "judge: pick a judge or checks to score the outputs with"},
			{"agent check", "question,model,response\nq?,m,a\n", OutputsOptions{Checks: []string{"tool_called"}},
				"checks: tool_called scores an agent's tool calls, which imported outputs do not have"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := b.svc.ImportOutputs(ctx, readOutputs(t, tc.file), tc.opts)
				var ve *store.ValidationError
				var es importer.Errors
				if err == nil || !errors.As(err, &ve) && !errors.As(err, &es) || err.Error() != tc.want {
					t.Fatalf("err = %v (%T), want %q", err, err, tc.want)
				}
			})
		}
		runs, err := st.Runs(ctx, store.RunFilter{})
		if err != nil || runs.Total != 0 {
			t.Errorf("%d runs after refused imports (%v)", runs.Total, err)
		}
		tasks, err := st.Tasks(ctx, store.TaskFilter{})
		if err != nil || tasks.Total != 0 {
			t.Errorf("%d tasks after refused imports (%v)", tasks.Total, err)
		}
	})
}
