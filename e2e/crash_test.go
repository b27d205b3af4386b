package e2e

// Crash-recovery tests: the real binary is built once, started as a
// subprocess, killed with SIGKILL at random moments while a run is in
// flight, and restarted on the same database. The run must still finish
// with exactly one result per (task, target) and no item left claimed.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/llm/llmtest"
	"tribunal/secret"
	"tribunal/store"
	"tribunal/store/storetest"
)

const (
	crashMasterKey = "test-key"
	crashLease     = 1500 * time.Millisecond
	crashTaskCount = 40
	crashKills     = 4
	crashJudge     = "fake-judge"
	// crashRunTimeout bounds the wait for the run to finish after the last restart.
	crashRunTimeout = 60 * time.Second
)

// crashModels are the run's targets, in order.
var crashModels = []string{"fake-small", "fake-large"}

// ---- the binary ----

// crashBin is the tribunal binary, built once per test binary.
var crashBin struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// TestMain removes the binary built for the crash tests. (browser_test.go
// and clickthrough_test.go define no TestMain; if one is ever added there,
// move this cleanup into it.)
func TestMain(m *testing.M) {
	code := m.Run()
	if crashBin.dir != "" {
		os.RemoveAll(crashBin.dir)
	}
	os.Exit(code)
}

// tribunalBinary builds the app (`go build -o <tmp>/tribunal .` from the
// repository root) the first time it is called and returns the binary's path.
func tribunalBinary(t *testing.T) string {
	t.Helper()
	crashBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "tribunal-e2e-bin-")
		if err != nil {
			crashBin.err = err
			return
		}
		crashBin.dir = dir
		goCmd, err := exec.LookPath("go")
		if err != nil {
			goCmd = "/usr/local/go/bin/go" // where scripts/test.sh also looks
		}
		path := filepath.Join(dir, "tribunal")
		cmd := exec.Command(goCmd, "build", "-o", path, ".")
		cmd.Dir = ".." // the repository root, from e2e/
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		start := time.Now()
		crashBin.out, crashBin.err = cmd.CombinedOutput()
		if crashBin.err == nil {
			crashBin.path = path
			crashBin.out = fmt.Appendf(nil, "built in %v", time.Since(start).Round(time.Millisecond))
		}
	})
	if crashBin.err != nil {
		t.Fatalf("build tribunal: %v\n%s", crashBin.err, crashBin.out)
	}
	return crashBin.path
}

// ---- processes ----

// crashProc is one running tribunal process.
type crashProc struct {
	name string // "server-3", "worker-2"
	pid  int
	url  string // http://127.0.0.1:port; empty for a worker
	log  string // its stdout and stderr
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // what Wait returned, once done is closed
}

// alive reports whether the process is still running.
func (p *crashProc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL (no shutdown, no lease hand-back) and waits for the exit.
func (p *crashProc) kill() {
	if p.alive() {
		p.cmd.Process.Kill()
	}
	<-p.done
}

// crashEnv starts tribunal processes on one database and keeps their logs.
type crashEnv struct {
	t       *testing.T
	bin     string
	dataDir string // SQLite file (and unused by PostgreSQL processes)
	dbURL   string // empty: SQLite
	logDir  string

	mu    sync.Mutex
	n     int
	procs []*crashProc
}

func newCrashEnv(t *testing.T, dataDir, dbURL string) *crashEnv {
	t.Helper()
	e := &crashEnv{t: t, bin: tribunalBinary(t), dataDir: dataDir, dbURL: dbURL, logDir: t.TempDir()}
	t.Cleanup(func() {
		e.mu.Lock()
		procs := slices.Clone(e.procs)
		e.mu.Unlock()
		for _, p := range procs {
			p.kill()
		}
		if t.Failed() {
			for _, p := range procs {
				e.dumpLog(p)
			}
		}
	})
	return e
}

// dumpLog prints the end of a process's log.
func (e *crashEnv) dumpLog(p *crashProc) {
	b, err := os.ReadFile(p.log)
	if err != nil {
		e.t.Logf("%s (pid %d): no log: %v", p.name, p.pid, err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 80 {
		lines = append([]string{fmt.Sprintf("… %d earlier lines", len(lines)-80)}, lines[len(lines)-80:]...)
	}
	e.t.Logf("---- log of %s (pid %d, exit %v) ----\n%s", p.name, p.pid, p.err, strings.Join(lines, "\n"))
}

// crashFreePort finds a port nobody listens on right now.
func crashFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// crashChildEnv is the test's environment without anything that would
// point the child elsewhere (DATABASE_URL, TRIBUNAL_*), plus the master key.
func crashChildEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TRIBUNAL_") || k == "DATABASE_URL" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TRIBUNAL_MASTER_KEY="+crashMasterKey)
}

// start runs `tribunal` (worker: `tribunal worker`) with extra flags and
// waits until it is ready: /healthz answers 200, or for a worker, its engine
// has started.
func (e *crashEnv) start(worker bool, extra ...string) *crashProc {
	t := e.t
	t.Helper()
	e.mu.Lock()
	e.n++
	kind := "server"
	if worker {
		kind = "worker"
	}
	p := &crashProc{name: fmt.Sprintf("%s-%d", kind, e.n), done: make(chan struct{})}
	e.mu.Unlock()

	port := crashFreePort(t)
	var args []string
	if worker {
		args = append(args, "worker")
	}
	args = append(args, "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--data-dir", e.dataDir,
		"--lease", crashLease.String())
	if e.dbURL != "" {
		args = append(args, "--database-url", e.dbURL)
	}
	args = append(args, extra...)
	p.log = filepath.Join(e.logDir, p.name+".log")
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatalf("create %s: %v", p.log, err)
	}
	p.cmd = exec.Command(e.bin, args...)
	p.cmd.Env = crashChildEnv()
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", p.name, err)
	}
	f.Close() // the child has its own descriptor
	p.pid = p.cmd.Process.Pid
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()

	deadline := time.Now().Add(20 * time.Second)
	for {
		if worker {
			if b, _ := os.ReadFile(p.log); bytes.Contains(b, []byte("engine started")) {
				return p
			}
		} else {
			url := fmt.Sprintf("http://127.0.0.1:%d", port)
			if code, _, err := crashDo(http.MethodGet, url+"/healthz", nil, nil); err == nil && code == http.StatusOK {
				p.url = url
				return p
			}
		}
		if !p.alive() {
			e.dumpLog(p)
			t.Fatalf("%s (pid %d) exited before it was ready: %v", p.name, p.pid, p.err)
		}
		if time.Now().After(deadline) {
			e.dumpLog(p)
			t.Fatalf("%s (pid %d) not ready after 20s", p.name, p.pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---- HTTP ----

var crashHTTP = &http.Client{Timeout: 10 * time.Second}

// crashDo sends JSON (when in is not nil) and decodes a 2xx reply into out.
func crashDo(method, url string, in, out any) (int, string, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, "", err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return 0, "", err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := crashHTTP.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, "", err
	}
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, string(data), fmt.Errorf("decode %s %s: %w", method, url, err)
		}
	}
	return resp.StatusCode, string(data), nil
}

// mustDo is crashDo that fails the test unless the status is want.
func mustDo(t *testing.T, p *crashProc, method, path string, in, out any, want int) {
	t.Helper()
	code, body, err := crashDo(method, p.url+path, in, out)
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, path, p.name, err)
	}
	if code != want {
		t.Fatalf("%s %s on %s: status %d, want %d: %s", method, path, p.name, code, want, body)
	}
}

// crashRun is the part of GET /api/runs/{id} the tests read.
type crashRun struct {
	ID       int64  `json:"id"`
	Status   string `json:"status"`
	Phase    string `json:"phase"`
	Error    string `json:"error"`
	Progress struct {
		Total     int64            `json:"total"`
		Done      int64            `json:"done"`
		Completed int64            `json:"completed"`
		Failed    int64            `json:"failed"`
		ByStatus  map[string]int64 `json:"by_status"`
	} `json:"progress"`
}

// ---- the fake LLM ----

// crashFake answers benchmark calls with the model and task it was asked
// about, and judges with a score derived from both, counting every call.
type crashFake struct {
	*llmtest.Server
	mu    sync.Mutex
	calls map[string]int // "model|task" for benchmark calls, "fake-judge|model|task" for verdicts
}

var (
	crashTaskRe   = regexp.MustCompile(`crash-(\d+)`)
	crashAnswerRe = regexp.MustCompile(`Answer by (\S+) to (crash-(\d+))`)
)

func crashTaskKey(i int) string { return fmt.Sprintf("crash-%02d", i) }

// crashScore is the score the fake judge gives task i answered by model m (1–10).
func crashScore(task int, model string) int {
	return (task*7+slices.Index(crashModels, model)*3)%10 + 1
}

func newCrashFake(t *testing.T) *crashFake {
	f := &crashFake{calls: map[string]int{}}
	f.Server = llmtest.New(t, f.reply)
	return f
}

func (f *crashFake) count(key string) {
	f.mu.Lock()
	f.calls[key]++
	f.mu.Unlock()
}

func crashDelay() time.Duration { return time.Duration(20+rand.IntN(21)) * time.Millisecond }

func (f *crashFake) reply(r llmtest.ChatRequest) llmtest.Reply {
	switch {
	case r.IsWarmup():
		f.count(r.Model + "|warmup")
		return llmtest.Reply{Content: "Hello!"}
	case r.IsJudge():
		m := crashAnswerRe.FindStringSubmatch(r.Last())
		if m == nil {
			f.count(r.Model + "|unparsable")
			return llmtest.Reply{Status: http.StatusUnprocessableEntity, Content: "crash fake: no answer to grade in the judge prompt"}
		}
		model, key := m[1], m[2]
		task, _ := strconv.Atoi(m[3])
		f.count(r.Model + "|" + model + "|" + key)
		return llmtest.Reply{Delay: crashDelay(), Content: fmt.Sprintf(`{"score": %d, "reasoning": "%s on %s"}`,
			crashScore(task, model), model, key)}
	}
	key := crashTaskRe.FindString(r.Last())
	f.count(r.Model + "|" + key)
	return llmtest.Reply{Delay: crashDelay(), Content: fmt.Sprintf("Answer by %s to %s: 42", r.Model, key)}
}

// summary says how many calls the fake saw and how many were repeats
// (a call cut off by a kill is asked again after the item is rescued).
func (f *crashFake) summary() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var bench, judge, warm, repeats, total int
	for k, n := range f.calls {
		total += n
		switch {
		case strings.HasSuffix(k, "|warmup"):
			warm += n
			continue
		case strings.HasPrefix(k, crashJudge+"|"):
			judge += n
		default:
			bench += n
		}
		repeats += n - 1
	}
	return fmt.Sprintf("%d calls: %d warm-up, %d benchmark, %d judge; %d repeated (task, model) calls",
		total, warm, bench, judge, repeats)
}

// dump lists the per-(model, task) call counts, for a failing test.
func (f *crashFake) dump() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]string, 0, len(f.calls))
	for k := range f.calls {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, f.calls[k])
	}
	return b.String()
}

// ---- set-up through the API ----

// crashSetup creates a provider on the fake, the tasks, a collection and a
// run over both target models, and returns the run's id.
func crashSetup(t *testing.T, p *crashProc, fake *crashFake) int64 {
	t.Helper()
	var prov store.Provider
	mustDo(t, p, http.MethodPost, "/api/providers", map[string]any{
		"name": "Crash fake", "type": "CUSTOM_OPEN_AI_COMPATIBLE", "base_url": fake.URL,
		// Several items in flight when a process is killed. A short timeout
		// keeps the warm-up lease (timeout + 10 s) short, should a kill land on it.
		"concurrency": 4, "timeout_seconds": 2,
	}, &prov, http.StatusCreated)
	keys := make([]string, crashTaskCount)
	for i := range crashTaskCount {
		keys[i] = crashTaskKey(i)
		mustDo(t, p, http.MethodPost, "/api/tasks", map[string]any{
			"task_id": keys[i], "category": "crash",
			"question": fmt.Sprintf("Task %s: what is %d + %d?", keys[i], i, i),
		}, nil, http.StatusCreated)
	}
	var col struct {
		ID int64 `json:"id"`
	}
	mustDo(t, p, http.MethodPost, "/api/collections", map[string]any{"name": "Crash", "task_ids": keys}, &col, http.StatusCreated)
	targets := []map[string]any{}
	for _, m := range crashModels {
		targets = append(targets, map[string]any{"provider_id": prov.ID, "model": m})
	}
	var run crashRun
	mustDo(t, p, http.MethodPost, "/api/runs", map[string]any{
		"name": "Crash run", "judge": map[string]any{"provider_id": prov.ID, "model": crashJudge},
		"targets": targets, "collection_ids": []int64{col.ID},
	}, &run, http.StatusCreated)
	if want := int64(crashTaskCount * len(crashModels)); run.Progress.Total != want {
		t.Fatalf("new run %d has %d items, want %d", run.ID, run.Progress.Total, want)
	}
	return run.ID
}

// ---- the database, read directly ----

// crashSQL opens the database the processes share, for reads the store's
// public methods do not offer (score rows per item, leases, worker ids).
func crashSQL(t *testing.T, dataDir, dbURL string) *sql.DB {
	t.Helper()
	var db *sql.DB
	var err error
	if dbURL != "" {
		db, err = sql.Open("pgx", dbURL) // registered by package store
	} else {
		path := filepath.Join(dataDir, "tribunal.db")
		if _, serr := os.Stat(path); serr != nil {
			t.Fatalf("no SQLite database: %v", serr)
		}
		// Read-only: a read-write connection would checkpoint and delete the
		// WAL a killed process left, and the next process would not recover it.
		db, err = sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)") // modernc, registered by package store
	}
	if err != nil {
		t.Fatalf("open the database: %v", err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// crashCount runs a COUNT query (built only from integers: no parameters,
// so the same text works on both databases).
func crashCount(t *testing.T, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	q := fmt.Sprintf(query, args...)
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// crashStatuses counts a run's items by status, straight from the database.
func crashStatuses(t *testing.T, db *sql.DB, runID int64) map[string]int64 {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf("SELECT status, COUNT(*) FROM items WHERE run_id = %d GROUP BY status", runID))
	if err != nil {
		t.Fatalf("item statuses: %v", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			t.Fatalf("item statuses: %v", err)
		}
		out[st] = n
	}
	return out
}

// crashHeldBy counts the run's items in flight under a claim of process pid
// (worker ids are "<host>-<pid>-<4 hex digits>").
func crashHeldBy(t *testing.T, db *sql.DB, runID int64, pid int) int64 {
	t.Helper()
	return crashCount(t, db, "SELECT COUNT(*) FROM items WHERE run_id = %d AND status IN ('IN_PROGRESS', 'JUDGING') AND worker_id LIKE '%%-%d-____'", runID, pid)
}

// ---- checks ----

// crashWaitFinished polls the run every 100 ms until it is FINISHED.
func crashWaitFinished(t *testing.T, p *crashProc, runID int64, fake *crashFake) crashRun {
	t.Helper()
	deadline := time.Now().Add(crashRunTimeout)
	var run crashRun
	var lastErr string
	for {
		code, body, err := crashDo(http.MethodGet, fmt.Sprintf("%s/api/runs/%d", p.url, runID), nil, &run)
		switch {
		case err != nil:
			lastErr = err.Error()
		case code != http.StatusOK:
			lastErr = fmt.Sprintf("status %d: %s", code, body)
		case run.Status == "FINISHED":
			return run
		case run.Status == "FAILED" || run.Status == "CANCELLED":
			t.Fatalf("run %d ended %s (%s); items %v; fake: %s", runID, run.Status, run.Error, run.Progress.ByStatus, fake.summary())
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d not FINISHED after %v: status %s, phase %s, items %v (last error: %s)\nfake: %s\n%s",
				runID, crashRunTimeout, run.Status, run.Phase, run.Progress.ByStatus, lastErr, fake.summary(), fake.dump())
		}
		select {
		case <-p.done:
			t.Fatalf("%s (pid %d) exited while the run was going: %v", p.name, p.pid, p.err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// crashCheckAPI checks the finished run through the API: counts, and every
// (task, model) pair exactly once, COMPLETED, with the score the fake gave.
func crashCheckAPI(t *testing.T, p *crashProc, run crashRun) {
	t.Helper()
	want := int64(crashTaskCount * len(crashModels))
	if run.Progress.Total != want || run.Progress.Completed != want || run.Progress.Failed != 0 || run.Progress.Done != want {
		t.Errorf("progress: total %d, completed %d, failed %d, done %d; want %d, %d, 0, %d (by status %v)",
			run.Progress.Total, run.Progress.Completed, run.Progress.Failed, run.Progress.Done, want, want, want, run.Progress.ByStatus)
	}
	var items []store.ItemView
	for page := 1; ; page++ {
		var pg store.Page[store.ItemView]
		mustDo(t, p, http.MethodGet, fmt.Sprintf("/api/runs/%d/items?per_page=500&page=%d", run.ID, page), nil, &pg, http.StatusOK)
		items = append(items, pg.Items...)
		if len(pg.Items) == 0 || int64(len(items)) >= pg.Total {
			if pg.Total != want {
				t.Errorf("items total %d, want %d", pg.Total, want)
			}
			break
		}
	}
	seen := map[string]int{}
	for _, it := range items {
		key := it.TaskID + "|" + it.Model
		seen[key]++
		if it.Status != store.ItemCompleted {
			t.Errorf("item %d (%s): status %s, want COMPLETED (error %q)", it.ID, key, it.Status, it.Error)
			continue
		}
		task, err := strconv.Atoi(strings.TrimPrefix(it.TaskID, "crash-"))
		if err != nil {
			t.Errorf("item %d: unexpected task_id %q", it.ID, it.TaskID)
			continue
		}
		wantScore := float64(crashScore(task, it.Model))
		if it.Score == nil || *it.Score != wantScore {
			got := "none"
			if it.Score != nil {
				got = strconv.FormatFloat(*it.Score, 'f', -1, 64)
			}
			t.Errorf("item %d (%s): score %s, want %v", it.ID, key, got, wantScore)
		}
		if wantReason := it.Model + " on " + it.TaskID; it.Reasoning != wantReason {
			t.Errorf("item %d (%s): reasoning %q, want %q", it.ID, key, it.Reasoning, wantReason)
		}
		if it.Response == nil || !strings.HasPrefix(*it.Response, "Answer by "+it.Model+" to "+it.TaskID+":") {
			t.Errorf("item %d (%s): response %v is not this model's answer to this task", it.ID, key, it.Response)
		}
	}
	for i := range crashTaskCount {
		for _, m := range crashModels {
			if key := crashTaskKey(i) + "|" + m; seen[key] != 1 {
				t.Errorf("(task, model) %s appears %d times in the items, want once", key, seen[key])
			}
		}
	}
	if len(seen) != int(want) {
		t.Errorf("%d distinct (task, model) pairs, want %d", len(seen), want)
	}
}

// crashCheckDB checks the database once every process is stopped: through
// the store's public methods, then the score rows and leases directly.
func crashCheckDB(t *testing.T, dataDir, dbURL string, runID int64) {
	t.Helper()
	want := int64(crashTaskCount * len(crashModels))
	ctx := context.Background()
	box, err := secret.NewBox(crashMasterKey)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, store.Config{DataDir: dataDir, DatabaseURL: dbURL, Box: box})
	if err != nil {
		t.Fatalf("open the store after the crashes: %v", err)
	}
	defer st.Close()
	run, err := st.Run(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != store.RunFinished || run.FinishedAt == nil {
		t.Errorf("stored run: status %s, finished_at %v; want FINISHED with a time", run.Status, run.FinishedAt)
	}
	for _, tg := range run.Targets {
		if tg.WarmupStatus != store.WarmupOK {
			t.Errorf("target %s: warm-up %s (%s), want OK", tg.Label(), tg.WarmupStatus, tg.WarmupError)
		}
	}
	prog, err := st.RunProgress(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Total != want || prog.Count(store.ItemCompleted) != want {
		t.Errorf("stored progress: total %d, completed %d, want %d each (%v)", prog.Total, prog.Count(store.ItemCompleted), want, prog.ByStatus)
	}
	for _, s := range []store.ItemStatus{store.ItemNew, store.ItemInProgress, store.ItemWaitingForJudge, store.ItemJudging, store.ItemFailed} {
		if n := prog.Count(s); n != 0 {
			t.Errorf("%d item(s) left %s", n, s)
		}
	}
	var scored int64
	err = st.EachRunItem(ctx, runID, func(v *store.ItemView) error {
		if v.Score != nil {
			scored++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scored != prog.Count(store.ItemCompleted) {
		t.Errorf("%d items have a score, %d are completed", scored, prog.Count(store.ItemCompleted))
	}
	fig, err := st.RunFigures(ctx, runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	sum := fig.Summary
	if sum.Overall.Items != want || sum.Overall.Completed != want {
		t.Errorf("summary: %d items, %d completed; want %d each", sum.Overall.Items, sum.Overall.Completed, want)
	}

	// No public method counts score rows: read them directly.
	db := crashSQL(t, dataDir, dbURL)
	defer db.Close()
	if n := crashCount(t, db, "SELECT COUNT(*) FROM scores WHERE run_id = %d", runID); n != want {
		t.Errorf("%d score rows, want %d (one per item)", n, want)
	}
	if n := crashCount(t, db, "SELECT COUNT(*) FROM (SELECT item_id FROM scores WHERE run_id = %d GROUP BY item_id HAVING COUNT(*) <> 1) d", runID); n != 0 {
		t.Errorf("%d item(s) have more than one score row", n)
	}
	if n := crashCount(t, db, "SELECT COUNT(*) FROM items i WHERE i.run_id = %d AND NOT EXISTS (SELECT 1 FROM scores s WHERE s.item_id = i.id)", runID); n != 0 {
		t.Errorf("%d item(s) have no score row", n)
	}
	if n := crashCount(t, db, "SELECT COUNT(*) FROM (SELECT run_task_id, run_target_id FROM items WHERE run_id = %d GROUP BY run_task_id, run_target_id HAVING COUNT(*) <> 1) d", runID); n != 0 {
		t.Errorf("%d (task, target) pair(s) have more than one item", n)
	}
	if n := crashCount(t, db, "SELECT COUNT(*) FROM items WHERE run_id = %d AND (worker_id <> '' OR lease_until IS NOT NULL)", runID); n != 0 {
		t.Errorf("%d item(s) still hold a claim (worker_id or lease_until set)", n)
	}
}

// crashAdvance grows by one each time an item moves a step forward.
func crashAdvance(byStatus map[string]int64) int64 {
	return byStatus[string(store.ItemWaitingForJudge)] + 2*byStatus[string(store.ItemCompleted)] + 2*byStatus[string(store.ItemFailed)]
}

// crashWaitResumed waits until the run has moved past where it was when the
// last process died (or has finished), and says how long that took. A run
// that does not move again within 20 s (its dead leases expire in 1.5 s) is stuck.
func crashWaitResumed(t *testing.T, p *crashProc, runID int64, before int64) time.Duration {
	t.Helper()
	start := time.Now()
	var run crashRun
	for {
		code, _, err := crashDo(http.MethodGet, fmt.Sprintf("%s/api/runs/%d", p.url, runID), nil, &run)
		if err == nil && code == http.StatusOK && ((run.Status != "RUNNING" && run.Status != "PENDING") || crashAdvance(run.Progress.ByStatus) > before) {
			return time.Since(start)
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("run %d did not move for 20s after %s started: status %s, phase %s, items %v",
				runID, p.name, run.Status, run.Phase, run.Progress.ByStatus)
		}
		if !p.alive() {
			t.Fatalf("%s (pid %d) exited: %v", p.name, p.pid, p.err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---- the tests ----

// crashRNG returns a generator whose seed is logged (TRIBUNAL_CRASH_SEED replays the delays).
func crashRNG(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TRIBUNAL_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("TRIBUNAL_CRASH_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("random seed %d (set TRIBUNAL_CRASH_SEED=%d to replay the kill delays)", seed, seed)
	return rand.New(rand.NewPCG(seed, 0x7269_6275_6e61_6c))
}

func crashKillDelay(rng *rand.Rand) time.Duration {
	return 100*time.Millisecond + time.Duration(rng.Int64N(int64(500*time.Millisecond)))
}

func TestCrashRecoverySQLite(t *testing.T) {
	t.Parallel()
	testCrashRecovery(t, t.TempDir(), "")
}

func TestCrashRecoveryPostgres(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	testCrashRecovery(t, t.TempDir(), url)
}

// testCrashRecovery kills the only process at random moments of a run and
// restarts it on the same database; the run must finish exactly once per item.
func testCrashRecovery(t *testing.T, dataDir, dbURL string) {
	start := time.Now()
	fake := newCrashFake(t)
	env := newCrashEnv(t, dataDir, dbURL)
	t.Logf("binary: %s", crashBin.out)
	rng := crashRNG(t)
	proc := env.start(false)
	runID := crashSetup(t, proc, fake)
	t.Logf("run %d created with %d items (set-up took %v)", runID, crashTaskCount*len(crashModels), time.Since(start).Round(time.Millisecond))

	orphanedTotal := int64(0)
	for k := 1; k <= crashKills; k++ {
		d := crashKillDelay(rng)
		time.Sleep(d)
		proc.kill()
		// The killed process can no longer touch the items it held: they stay
		// claimed until their lease runs out and the next process rescues them.
		db := crashSQL(t, dataDir, dbURL)
		held := crashHeldBy(t, db, runID, proc.pid)
		statuses := crashStatuses(t, db, runID)
		var runStatus, phase string
		if err := db.QueryRow(fmt.Sprintf("SELECT status, phase FROM runs WHERE id = %d", runID)).Scan(&runStatus, &phase); err != nil {
			t.Fatalf("read run: %v", err)
		}
		db.Close()
		orphanedTotal += held
		since := "it resumed the run"
		if k == 1 {
			since = "the run was created"
		}
		t.Logf("kill %d: %s (pid %d) %v after %s: run %s/%s, items %v, %d left claimed by the dead process",
			k, proc.name, proc.pid, d.Round(time.Millisecond), since, runStatus, phase, statuses, held)
		proc = env.start(false)
		if k < crashKills {
			// Until the dead process's leases run out, its items fill the
			// provider's slots and the new process can only wait; a kill
			// then would find nothing in flight. Kill again only once work
			// has moved on.
			waited := crashWaitResumed(t, proc, runID, crashAdvance(statuses))
			t.Logf("%s resumed the run %v after it was ready", proc.name, waited.Round(time.Millisecond))
		}
	}
	run := crashWaitFinished(t, proc, runID, fake)
	t.Logf("run %d FINISHED %v after it was created; fake: %s", runID, time.Since(start).Round(time.Millisecond), fake.summary())
	env.logRescues()
	crashCheckAPI(t, proc, run)
	proc.kill()
	crashCheckDB(t, dataDir, dbURL, runID)
	if t.Failed() {
		t.Logf("fake calls per (model, task): %s", fake.dump())
	}
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}

// TestTwoWorkersOneKilledPostgres runs a server (web + engine) and a
// `tribunal worker` on one PostgreSQL; the worker is killed while it holds
// items, and the server's engine must take them over once their lease runs
// out and finish the run.
func TestTwoWorkersOneKilledPostgres(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	start := time.Now()
	fake := newCrashFake(t)
	dataDir := t.TempDir()
	env := newCrashEnv(t, dataDir, url)
	rng := crashRNG(t)
	// The provider allows 4 calls at once across processes; the server takes
	// at most 2, so the worker gets the others.
	srv := env.start(false, "--max-in-flight", "2")
	wrk := env.start(true)
	runID := crashSetup(t, srv, fake)

	db := crashSQL(t, dataDir, url)
	defer db.Close()
	var orphaned int64
	serverHeld := false
	for attempt := 1; ; attempt++ {
		// Wait until the worker has work, then kill it a random moment later;
		// if that moment fell between its claims, try again with a new worker.
		deadline := time.Now().Add(15 * time.Second)
		for crashHeldBy(t, db, runID, wrk.pid) == 0 {
			serverHeld = serverHeld || crashHeldBy(t, db, runID, srv.pid) > 0
			if time.Now().After(deadline) {
				t.Fatalf("%s (pid %d) held no item for 15s; items %v", wrk.name, wrk.pid, crashStatuses(t, db, runID))
			}
			if !wrk.alive() || !srv.alive() {
				t.Fatalf("a process exited: %s %v, %s %v", wrk.name, wrk.err, srv.name, srv.err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		// Kill soon after it is seen holding work: a later moment often falls
		// after the run has already finished (the server takes over quickly).
		d := time.Duration(rng.Int64N(int64(30 * time.Millisecond)))
		time.Sleep(d)
		wrk.kill()
		orphaned = crashHeldBy(t, db, runID, wrk.pid)
		serverHeld = serverHeld || crashHeldBy(t, db, runID, srv.pid) > 0
		t.Logf("attempt %d: killed %s (pid %d) %v after it started working; items %v, %d left claimed by the dead worker",
			attempt, wrk.name, wrk.pid, d.Round(time.Millisecond), crashStatuses(t, db, runID), orphaned)
		if orphaned > 0 {
			break
		}
		if attempt == 5 {
			t.Fatalf("in 5 attempts the worker never held an item when SIGKILL landed")
		}
		wrk = env.start(true)
	}

	run := crashWaitFinished(t, srv, runID, fake)
	t.Logf("run %d FINISHED %v after it started; fake: %s", runID, time.Since(start).Round(time.Millisecond), fake.summary())
	env.logRescues()
	if !serverHeld {
		t.Logf("the server was not seen holding a claim while sampling (it completed the run, so it did work)")
	}
	crashCheckAPI(t, srv, run)
	srv.kill()
	crashCheckDB(t, dataDir, url, runID)
	if t.Failed() {
		t.Logf("fake calls per (model, task): %s", fake.dump())
	}
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}

// logRescues logs what each process said about rescuing expired leases.
func (e *crashEnv) logRescues() {
	e.mu.Lock()
	procs := slices.Clone(e.procs)
	e.mu.Unlock()
	for _, p := range procs {
		for _, l := range crashLogLines(p.log, "rescued items") {
			e.t.Logf("%s: %s", p.name, l)
		}
	}
}

// crashLogLines returns the lines of a log that contain s (for diagnostics).
func crashLogLines(path, s string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			out = append(out, sc.Text())
		}
	}
	return out
}
