package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/secret"
	"tribunal/store"
	"tribunal/store/storetest"
)

func TestSecretsEncryptedAtRestAndWrongKeyRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(key string) (*store.Store, error) {
		box, err := secret.NewBox(key)
		if err != nil {
			t.Fatal(err)
		}
		return store.Open(ctx, store.Config{DataDir: dir, Box: box})
	}
	st, err := open("key-one")
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://x",
		Headers: []store.Header{{Key: "Authorization", Value: "Bearer plaintext-secret-42", IsSecret: true}}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	raw, err := os.ReadFile(filepath.Join(dir, "tribunal.db"))
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(filepath.Join(dir, "tribunal.db-wal"))
	if strings.Contains(string(raw)+string(wal), "plaintext-secret-42") {
		t.Fatal("the secret is stored in plain text")
	}
	if _, err := open("key-two"); err == nil || !strings.Contains(err.Error(), "TRIBUNAL_MASTER_KEY") {
		t.Fatalf("opening with the wrong key: %v, want a clear TRIBUNAL_MASTER_KEY error", err)
	}
	st, err = open("key-one")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ps, _ := st.Providers(ctx)
	p, err := st.ProviderWithSecrets(ctx, ps[0].ID)
	if err != nil || p.Headers[0].Value != "Bearer plaintext-secret-42" {
		t.Fatalf("secret after reopen: %+v %v", p, err)
	}
	if ps[0].Headers[0].Value != "••••••t-42" {
		t.Errorf("masked value %q", ps[0].Headers[0].Value)
	}
}

func TestDefaultProvidersOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for range 2 {
			if err := st.EnsureDefaultProviders(ctx, "http://ollama:11434", "http://lms:1234"); err != nil {
				t.Fatal(err)
			}
		}
		ps, _ := st.Providers(ctx)
		if len(ps) != 2 || ps[0].Name != "Local LM Studio" || ps[1].BaseURL != "http://ollama:11434" || ps[1].Type != store.ProviderOllama {
			t.Fatalf("defaults: %+v", ps)
		}
		st.DeleteProvider(ctx, ps[0].ID)
		st.EnsureDefaultProviders(ctx, "http://ollama:11434", "http://lms:1234")
		if ps, _ := st.Providers(ctx); len(ps) != 1 {
			t.Errorf("a deleted default provider came back")
		}
	})
}

// TestClaimIsExclusive claims from many goroutines at once: every item must
// be claimed exactly once (SKIP LOCKED on PostgreSQL, one writer on SQLite).
func TestClaimIsExclusive(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 40, 2)
		var mu sync.Mutex
		seen := map[int64]int{}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for {
					items, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress,
						WorkerID: fmt.Sprintf("w%d", w), Lease: time.Minute, Limit: 3})
					if err != nil {
						t.Error(err)
						return
					}
					if len(items) == 0 {
						return
					}
					mu.Lock()
					for _, it := range items {
						seen[it.ID]++
						if it.Status != store.ItemInProgress || it.Attempts != 1 || it.LeaseUntil == nil {
							t.Errorf("claimed item %+v", it)
						}
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != 80 {
			t.Fatalf("claimed %d distinct items, want 80", len(seen))
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("item %d claimed %d times", id, n)
			}
		}
	})
}

func TestLeaseGuardsResultWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 1, 1)
		claim := func(worker string, lease time.Duration) store.Item {
			items, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: worker, Lease: lease, Limit: 1})
			if err != nil || len(items) != 1 {
				t.Fatalf("claim: %v %v", items, err)
			}
			return items[0]
		}
		first := claim("dead", -time.Second) // a lease that has already run out
		n, err := st.RescueExpired(ctx)
		if err != nil || n != 1 {
			t.Fatalf("rescued %d, %v", n, err)
		}
		second := claim("alive", time.Minute)
		if _, err := st.CompleteBenchmark(ctx, &first, store.BenchmarkResult{Response: "late"}, nil); err == nil {
			t.Fatal("the worker whose lease expired could still write its result")
		}
		if _, err := st.CompleteBenchmark(ctx, &second, store.BenchmarkResult{Request: "{}", Response: "on time", Judged: true}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CompleteBenchmark(ctx, &second, store.BenchmarkResult{Request: "{}", Response: "twice"}, nil); err == nil {
			t.Fatal("a result was written twice")
		}
		page, _ := st.RunItems(ctx, run.ID, store.ItemFilter{})
		if it := page.Items[0]; it.Status != store.ItemWaitingForJudge || *it.Response != "on time" {
			t.Errorf("item after writes: %+v", it)
		}
	})
}

// makeRun creates a run of n tasks × targets models without starting an engine.
func makeRun(t *testing.T, st *store.Store, n, targets int) *store.Run {
	t.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	var refs []store.TaskRef
	for i := range n {
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: fmt.Sprintf("k%d", i), Category: "c", Question: "q"})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, store.TaskRef{ID: tk.ID})
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &refs})
	if err != nil {
		t.Fatal(err)
	}
	in := store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "j"}, CollectionIDs: []int64{col.ID}}
	for i := range targets {
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: p.ID, Model: fmt.Sprintf("m%d", i)})
	}
	run, err := st.CreateRun(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if run, err = st.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunPending); err != nil {
		t.Fatal(err)
	}
	return run
}

// TestClaimOnlyFromRunningRuns: a pause takes effect in the claim itself.
func TestClaimOnlyFromRunningRuns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 3, 1)
		claim := func() int {
			items, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w", Lease: time.Minute, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return len(items)
		}
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunPaused, store.RunRunning); err != nil {
			t.Fatal(err)
		}
		if n := claim(); n != 0 {
			t.Fatalf("claimed %d items of a paused run", n)
		}
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunPaused); err != nil {
			t.Fatal(err)
		}
		if n := claim(); n != 1 {
			t.Fatalf("claimed %d items of a running run, want 1", n)
		}
	})
}
