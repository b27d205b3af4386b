package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"tribunal/langfuse/langfusetest"
	"tribunal/store/storetest"
)

// importCrashItems is the size of the dataset runs imported while the
// process is killed.
const importCrashItems = 3000

func TestImportCrashSQLite(t *testing.T) {
	t.Parallel()
	testImportCrash(t, t.TempDir(), "")
}

func TestImportCrashPostgres(t *testing.T) {
	t.Parallel()
	testImportCrash(t, t.TempDir(), storetest.PostgresURL(t))
}

// seedCrashDataset adds a dataset with one run whose traces all answer.
func seedCrashDataset(fake *langfusetest.Server, name string) {
	items := make([]langfusetest.Item, importCrashItems)
	runItems := make([]langfusetest.RunItem, importCrashItems)
	for i := range items {
		items[i] = langfusetest.Item{ID: fmt.Sprintf("%s-%05d", name, i), Input: fmt.Sprintf("question %d", i), ExpectedOutput: "42"}
		runItems[i] = langfusetest.RunItem{DatasetItemID: items[i].ID, TraceID: fmt.Sprintf("%s-trace-%05d", name, i)}
		fake.AddTrace(langfusetest.Trace{ID: runItems[i].TraceID, Output: "42", LatencySeconds: 0.5})
	}
	fake.AddDataset(name, items...)
	fake.AddRun(name, "v1", runItems...)
}

// testImportCrash kills the process (SIGKILL) while an import of a Langfuse
// dataset run writes — after it has read everything from Langfuse — and
// restarts it: each time the database holds either nothing of the import or
// all of it (every task, the run, one item per trace). A first import, not
// killed, counts the requests the reading takes, so a kill can wait for the
// writing to begin.
func testImportCrash(t *testing.T, dataDir, dbURL string) {
	fake := langfusetest.New(t)
	seedCrashDataset(fake, "measure")
	seedCrashDataset(fake, "crash")
	env := newCrashEnv(t, dataDir, dbURL)
	// The measured import's run is still being scored while the next comes.
	flags := []string{"--max-active-runs", "10"}
	proc := env.start(false, flags...)
	var src struct {
		ID int64 `json:"id"`
	}
	mustDo(t, proc, http.MethodPost, "/api/sources", map[string]any{"name": "lf", "base_url": fake.URL,
		"public_key": fake.PublicKey, "secret_key": fake.SecretKey}, &src, http.StatusCreated)
	path := fmt.Sprintf("/api/sources/%d/import", src.ID)
	body := func(dataset string) map[string]any {
		return map[string]any{"dataset": dataset, "run": "v1", "checks": []string{"exact_match"}}
	}

	// importing starts the import in the background and says when its
	// reading from Langfuse is over (reads more requests).
	importing := func(dataset string, reads int) (readDone <-chan time.Time, reply <-chan int) {
		base := fake.Requests()
		rd, rp := make(chan time.Time, 1), make(chan int, 1)
		go func() {
			code, _, _ := crashDo(http.MethodPost, proc.url+path, body(dataset), nil)
			rp <- code
		}()
		go func() {
			for fake.Requests() < base+reads {
				time.Sleep(time.Millisecond)
			}
			rd <- time.Now()
		}()
		return rd, rp
	}
	base := fake.Requests()
	mustDo(t, proc, http.MethodPost, path, body("measure"), nil, http.StatusCreated)
	reads := fake.Requests() - base
	db := crashSQL(t, dataDir, dbURL)
	measured := crashCount(t, db, "SELECT COUNT(*) FROM tasks")
	db.Close()
	if measured != importCrashItems {
		t.Fatalf("the measured import left %d tasks, want %d", measured, importCrashItems)
	}

	rng := crashRNG(t)
	window := 800 * time.Millisecond
	sawNothing, sawAll := false, false
	for attempt := 1; attempt <= 5 && !(sawNothing && sawAll); attempt++ {
		readDone, reply := importing("crash", reads)
		var code int
		var killedAfter time.Duration
		select {
		case at := <-readDone:
			killedAfter = time.Duration(rng.Int64N(int64(window)))
			select {
			case code = <-reply:
			case <-time.After(time.Until(at.Add(killedAfter))):
			}
		case code = <-reply:
		}
		proc.kill()
		db := crashSQL(t, dataDir, dbURL)
		tasks := crashCount(t, db, "SELECT COUNT(*) FROM tasks WHERE task_key LIKE 'crash-%%'")
		runs := crashCount(t, db, "SELECT COUNT(*) FROM runs WHERE kind = 'IMPORTED'") - 1 // the measured one
		items := crashCount(t, db, "SELECT COUNT(*) FROM items i JOIN run_tasks rt ON rt.id = i.run_task_id WHERE rt.task_key LIKE 'crash-%%'")
		db.Close()
		t.Logf("attempt %d: killed %v after the reading ended (reply %d): %d tasks, %d runs, %d items", attempt, killedAfter, code, tasks, runs, items)
		switch {
		case tasks == 0 && runs == 0 && items == 0:
			sawNothing = true
			window = window * 3 / 2 // the writing takes longer here: aim later
		case tasks == importCrashItems && runs == 1 && items == importCrashItems:
			sawAll = true
		default:
			t.Fatalf("a partial import: %d tasks, %d runs, %d items", tasks, runs, items)
		}
		proc = env.start(false, flags...)
		if sawAll {
			break
		}
	}
	if !sawNothing {
		t.Log("no kill landed inside the import's writing (it committed first every time)")
	}
	if !sawAll {
		mustDo(t, proc, http.MethodPost, path, body("crash"), nil, http.StatusCreated)
	}
}
