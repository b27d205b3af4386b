// Package langfusetest is an httptest fake of the part of Langfuse's public
// API that package langfuse reads, shape-for-shape with the real one (the
// same paths, JSON field names and paging meta, Langfuse v4.16), seeded by
// the test and able to inject faults.
package langfusetest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Keys the fake accepts unless a test sets others.
const (
	PublicKey = "pk-lf-test"
	SecretKey = "sk-lf-test"
)

// Item seeds a dataset item; Input, ExpectedOutput and Metadata are any
// value encoding/json takes.
type Item struct {
	ID                    string
	Input, ExpectedOutput any
	Metadata              any
	Status                string // ACTIVE when empty
}

// Usage is an observation's older usage shape.
type Usage struct {
	Input, Output int64
}

// Observation seeds one observation of a trace; set Usage, UsageDetails or neither.
type Observation struct {
	ID           string
	Type         string // GENERATION when empty
	Usage        *Usage
	UsageDetails map[string]int64
}

// Trace seeds a trace.
type Trace struct {
	ID             string
	Input, Output  any
	LatencySeconds float64
	TotalCost      float64
	Observations   []Observation
}

// RunItem seeds one item of a dataset run.
type RunItem struct {
	DatasetItemID, TraceID, ObservationID string
}

type dataset struct {
	id, name string
	created  time.Time
	items    []Item
	runs     []*run
}

type run struct {
	id, name string
	created  time.Time
	items    []RunItem
}

// Server is the fake. Seed it before the client calls it; the seeding
// methods are safe to call while it serves.
type Server struct {
	*httptest.Server
	// PublicKey and SecretKey are the keys it accepts (Basic auth).
	PublicKey, SecretKey string

	mu       sync.Mutex
	datasets map[string]*dataset
	traces   map[string]Trace
	faults   map[int64]fault
	latency  time.Duration
	requests atomic.Int64
	paths    map[string]int
	next     int
}

type fault struct {
	status     int
	retryAfter string
	body       string
}

// New starts a fake closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{PublicKey: PublicKey, SecretKey: SecretKey, datasets: map[string]*dataset{}, traces: map[string]Trace{},
		faults: map[int64]fault{}, paths: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) id(prefix string) string {
	s.next++
	return fmt.Sprintf("%s-%06d", prefix, s.next)
}

// base is when seeded objects are created: each next one a minute later.
var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// AddDataset seeds a dataset with its items (an item without an id gets
// one) and returns the dataset's id.
func (s *Server) AddDataset(name string, items ...Item) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &dataset{id: s.id("ds"), name: name, created: base.Add(time.Duration(s.next) * time.Minute)}
	for _, it := range items {
		if it.ID == "" {
			it.ID = s.id("item")
		}
		if it.Status == "" {
			it.Status = "ACTIVE"
		}
		d.items = append(d.items, it)
	}
	s.datasets[name] = d
	return d.id
}

// ItemIDs returns the ids of a dataset's items in order.
func (s *Server) ItemIDs(dataset string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, it := range s.datasets[dataset].items {
		ids = append(ids, it.ID)
	}
	return ids
}

// AddRun seeds a run of a seeded dataset, created after every object seeded
// before it, and returns its id. A run item may name a trace never added:
// fetching it answers 404, like a trace Langfuse lost.
func (s *Server) AddRun(datasetName, name string, items ...RunItem) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.datasets[datasetName]
	r := &run{id: s.id("run"), name: name, created: base.Add(time.Duration(s.next) * time.Minute), items: items}
	d.runs = append(d.runs, r)
	return r.id
}

// AddTrace seeds a trace.
func (s *Server) AddTrace(t Trace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traces[t.ID] = t
}

// FailRequest makes the nth request from now on (1 = the next one) answer
// status with an error body, and a Retry-After header when retryAfter is set.
func (s *Server) FailRequest(n int, status int, retryAfter string) {
	s.faultAt(n, fault{status: status, retryAfter: retryAfter, body: `{"message":"injected fault"}`})
}

// Malform makes the nth request from now on answer 200 with body, which need not be JSON.
func (s *Server) Malform(n int, body string) {
	s.faultAt(n, fault{status: http.StatusOK, body: body})
}

func (s *Server) faultAt(n int, f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[s.requests.Load()+int64(n)] = f
}

// SetLatency delays every reply by d.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Requests is how many requests the fake has had.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// Hits is how many requests asked for path (without its query).
func (s *Server) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paths[path]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	s.mu.Lock()
	f, faulty := s.faults[n]
	delete(s.faults, n)
	latency := s.latency
	s.paths[r.URL.Path]++
	s.mu.Unlock()
	if latency > 0 {
		time.Sleep(latency)
	}
	if user, pass, ok := r.BasicAuth(); !ok || user != s.PublicKey || pass != s.SecretKey {
		// Langfuse's words for a bad or missing key pair.
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Invalid credentials. Confirm that you've configured the correct host."})
		return
	}
	if faulty {
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(f.body))
		return
	}
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"message": "Method not allowed"})
		return
	}
	s.route(w, r)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	seg := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/public/"), "/")
	switch {
	case r.URL.Path == "/api/public/projects":
		writeJSON(w, http.StatusOK, map[string]any{"data": []any{map[string]any{"id": "proj-1", "name": "test project", "metadata": map[string]any{}}}})
	case len(seg) == 2 && seg[0] == "datasets", len(seg) == 3 && seg[0] == "v2" && seg[1] == "datasets":
		d, ok := s.datasets[seg[len(seg)-1]]
		if !ok {
			notFound(w, "Dataset not found")
			return
		}
		writeJSON(w, http.StatusOK, datasetJSON(d))
	case len(seg) == 3 && seg[0] == "datasets" && seg[2] == "runs":
		d, ok := s.datasets[seg[1]]
		if !ok {
			notFound(w, "Dataset not found")
			return
		}
		var runs []any
		for _, rn := range d.runs {
			runs = append(runs, runJSON(d, rn))
		}
		page(w, q, runs)
	case len(seg) == 4 && seg[0] == "datasets" && seg[2] == "runs":
		d, ok := s.datasets[seg[1]]
		if !ok {
			notFound(w, "Dataset not found")
			return
		}
		for _, rn := range d.runs {
			if rn.name == seg[3] {
				out := runJSON(d, rn)
				items := []any{}
				for i := range rn.items {
					items = append(items, runItemJSON(d, rn, i))
				}
				out["datasetRunItems"] = items
				writeJSON(w, http.StatusOK, out)
				return
			}
		}
		notFound(w, "Dataset run not found")
	case r.URL.Path == "/api/public/dataset-items":
		d, ok := s.datasets[q.Get("datasetName")]
		if !ok {
			notFound(w, "Dataset not found")
			return
		}
		var items []any
		for _, it := range d.items {
			items = append(items, itemJSON(d, it))
		}
		page(w, q, items)
	case r.URL.Path == "/api/public/dataset-run-items":
		if q.Get("datasetId") == "" || q.Get("runName") == "" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Invalid request data", "error": "datasetId and runName are required"})
			return
		}
		var items []any
		for _, d := range s.datasets {
			if d.id != q.Get("datasetId") {
				continue
			}
			for _, rn := range d.runs {
				if rn.name == q.Get("runName") {
					for i := range rn.items {
						items = append(items, runItemJSON(d, rn, i))
					}
				}
			}
		}
		page(w, q, items)
	case len(seg) == 2 && seg[0] == "traces":
		t, ok := s.traces[seg[1]]
		if !ok {
			notFound(w, "Trace "+seg[1]+" not found within authorized project")
			return
		}
		writeJSON(w, http.StatusOK, traceJSON(t))
	default:
		notFound(w, "Not found")
	}
}

// page answers one page of all as Langfuse does: data plus meta, page from
// 1, limit 50 unless asked.
func page(w http.ResponseWriter, q map[string][]string, all []any) {
	pg, limit := 1, 50
	for _, p := range []struct {
		name string
		dst  *int
	}{{"page", &pg}, {"limit", &limit}} {
		if v := first(q[p.name]); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Invalid request data", "error": p.name + " must be a positive integer"})
				return
			}
			*p.dst = n
		}
	}
	from := min((pg-1)*limit, len(all))
	to := min(from+limit, len(all))
	data := all[from:to]
	if data == nil {
		data = []any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "meta": map[string]any{
		"page": pg, "limit": limit, "totalItems": len(all), "totalPages": int(math.Ceil(float64(len(all)) / float64(limit)))}})
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func notFound(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": msg, "error": "LangfuseNotFoundError"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func datasetJSON(d *dataset) map[string]any {
	return map[string]any{"id": d.id, "name": d.name, "description": nil, "metadata": nil, "inputSchema": nil,
		"expectedOutputSchema": nil, "projectId": "proj-1", "createdAt": d.created, "updatedAt": d.created}
}

func itemJSON(d *dataset, it Item) map[string]any {
	return map[string]any{"id": it.ID, "status": it.Status, "input": it.Input, "expectedOutput": it.ExpectedOutput,
		"metadata": it.Metadata, "sourceTraceId": nil, "sourceObservationId": nil, "datasetId": d.id, "datasetName": d.name,
		"createdAt": d.created, "updatedAt": d.created, "mediaReferences": []any{}}
}

func runJSON(d *dataset, r *run) map[string]any {
	return map[string]any{"id": r.id, "name": r.name, "description": nil, "metadata": nil, "datasetId": d.id,
		"datasetName": d.name, "createdAt": r.created, "updatedAt": r.created}
}

func runItemJSON(d *dataset, r *run, i int) map[string]any {
	it := r.items[i]
	var obs any
	if it.ObservationID != "" {
		obs = it.ObservationID
	}
	return map[string]any{"id": fmt.Sprintf("%s-ri-%d", r.id, i), "datasetRunId": r.id, "datasetRunName": r.name,
		"datasetItemId": it.DatasetItemID, "traceId": it.TraceID, "observationId": obs, "createdAt": r.created, "updatedAt": r.created}
}

func traceJSON(t Trace) map[string]any {
	obs := []any{}
	for i, o := range t.Observations {
		typ := o.Type
		if typ == "" {
			typ = "GENERATION"
		}
		id := o.ID
		if id == "" {
			id = fmt.Sprintf("%s-obs-%d", t.ID, i)
		}
		// Langfuse always sends both shapes; the older one is zeros when
		// usage came in the newer one.
		usage := map[string]any{"input": 0, "output": 0, "total": 0, "unit": "TOKENS"}
		details := map[string]int64{}
		switch {
		case o.Usage != nil:
			usage = map[string]any{"input": o.Usage.Input, "output": o.Usage.Output, "total": o.Usage.Input + o.Usage.Output, "unit": "TOKENS"}
		case o.UsageDetails != nil:
			details = o.UsageDetails
		}
		obs = append(obs, map[string]any{"id": id, "traceId": t.ID, "type": typ, "name": "llm-call", "startTime": base,
			"endTime": base.Add(time.Duration(t.LatencySeconds * float64(time.Second))), "completionStartTime": nil,
			"model": "gpt-4o-mini", "modelParameters": map[string]any{}, "input": nil, "output": nil, "metadata": nil,
			"version": nil, "usage": usage, "usageDetails": details, "costDetails": map[string]float64{}, "level": "DEFAULT",
			"statusMessage": nil, "parentObservationId": nil, "promptId": nil, "environment": "default"})
	}
	return map[string]any{"id": t.ID, "timestamp": base, "name": "answer", "input": t.Input, "output": t.Output,
		"sessionId": nil, "release": nil, "version": nil, "userId": nil, "metadata": nil, "tags": []string{}, "public": false,
		"environment": "default", "htmlPath": "/project/proj-1/traces/" + t.ID, "latency": t.LatencySeconds,
		"totalCost": t.TotalCost, "observations": obs, "scores": []any{}}
}
