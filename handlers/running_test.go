package handlers_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunningNow: while two providers' groups answer at once (their
// answers held until the test has looked), the run page and GET
// /api/runs/{id} say which groups run now; a pipeline run says so in its
// options, and its re-run keeps them.
func TestRunningNow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		release := make(chan struct{})
		var releaseOnce sync.Once
		open := func() { releaseOnce.Do(func() { close(release) }) }
		defer open()
		var mu sync.Mutex
		answering := map[string]bool{}
		both := make(chan struct{})
		var bothOnce sync.Once
		hold := func(name string) func(r llmtest.ChatRequest) llmtest.Reply {
			return func(r llmtest.ChatRequest) llmtest.Reply {
				if !r.IsWarmup() && !r.IsJudge() {
					mu.Lock()
					answering[name] = true
					if len(answering) == 2 {
						bothOnce.Do(func() { close(both) })
					}
					mu.Unlock()
					<-release
				}
				return llmtest.DefaultReply(r)
			}
		}
		fakeA, fakeB := llmtest.New(t, hold("A")), llmtest.New(t, hold("B"))
		var pa, pb store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Alpha","base_url":%q,"concurrency":1,"timeout_seconds":60}`, fakeA.URL)}, 201, &pa)
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Beta","base_url":%q,"concurrency":1,"timeout_seconds":60}`, fakeB.URL)}, 201, &pb)
		for i := range 2 {
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"q-%d","category":"c","question":"q%d"}`, i, i)}, 201, nil)
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"Q","task_ids":["q-0","q-1"]}`}, 201, &col)
		var run struct {
			ID      int64            `json:"id"`
			Options store.RunOptions `json:"options"`
		}
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"pipeline":true,
			"targets":[{"provider_id":%d,"model":"a1"},{"provider_id":%d,"model":"a2"},{"provider_id":%d,"model":"b1"}],"collection_ids":[%d]}`,
			pa.ID, pa.ID, pa.ID, pb.ID, col.ID)}, 201, &run)
		if !run.Options.Pipeline {
			t.Errorf("created run's options %+v, want pipeline", run.Options)
		}
		select {
		case <-both:
		case <-time.After(15 * time.Second):
			t.Fatal("the two providers never answered at once")
		}

		var got struct {
			RunningGroups []runs.RunningGroup `json:"running_groups"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &got)
		want := []runs.RunningGroup{
			{Provider: "Alpha", Model: "a1", Phase: runs.GroupAnswering, Done: 0, Total: 2},
			{Provider: "Beta", Model: "b1", Phase: runs.GroupAnswering, Done: 0, Total: 2},
		}
		if fmt.Sprint(got.RunningGroups) != fmt.Sprint(want) {
			t.Errorf("running_groups:\n got %+v\nwant %+v", got.RunningGroups, want)
		}
		_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", run.ID))
		var shown []string
		doc.Find("[data-testid=running-now] [data-testid=running-group]").Each(func(_ int, s *goquery.Selection) {
			shown = append(shown, strings.Join(strings.Fields(s.Text()), " "))
		})
		wantShown := []string{"Alpha · a1 (answering, 0/2)", "Beta · b1 (answering, 0/2)"}
		if fmt.Sprint(shown) != fmt.Sprint(wantShown) {
			t.Errorf("running now on the page: %q, want %q", shown, wantShown)
		}
		open()
		if done := a.waitRunDone(t, run.ID); done.Status != store.RunFinished {
			t.Fatalf("run ended %s", done.Status)
		}
		_, doc, _ = a.get(t, fmt.Sprintf("/runs/%d", run.ID))
		if n := doc.Find("[data-testid=running-now]").Length(); n != 0 {
			t.Errorf("a finished run shows %d running-now line(s)", n)
		}
		// Re-run keeps the option.
		var again struct {
			Options store.RunOptions `json:"options"`
		}
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/runs/%d/rerun", run.ID)}, 201, &again)
		if !again.Options.Pipeline {
			t.Errorf("re-run's options %+v, want pipeline kept", again.Options)
		}
	})
}
