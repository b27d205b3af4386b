package handlers_test

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/llm/llmtest"
	"tribunal/metrics"
	"tribunal/store"
	"tribunal/store/storetest"
)

// serve runs handlers.New with opts over st; its engine never runs.
func serve(t *testing.T, st *store.Store, opts ...handlers.Option) *httptest.Server {
	t.Helper()
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(handlers.New(st, eng, slog.New(slog.DiscardHandler), opts...))
	t.Cleanup(srv.Close)
	return srv
}

// send makes a request without following redirects.
func send(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func newRequest(t *testing.T, method, url, body string, header map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

// TestRebindingRefused: a page on a name that resolves to the server (DNS
// rebinding) sends its own name as Host and as Origin; both must be refused.
func TestRebindingRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "Kept", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		srv := serve(t, st)
		const evil = "rebind.attacker.example:8080"
		req := newRequest(t, "PUT", fmt.Sprintf("%s/api/providers/%d", srv.URL, p.ID), `{"name":"Pwned","base_url":"http://attacker.example"}`,
			map[string]string{"Content-Type": "application/json", "Origin": "http://" + evil})
		req.Host = evil
		res, body := send(t, req)
		if res.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(body, `"error"`) {
			t.Errorf("rebound PUT: %d %s, want 421 with a JSON error", res.StatusCode, body)
		}
		if got, _ := st.Provider(ctx, p.ID); got.Name != "Kept" || got.BaseURL != "http://127.0.0.1:9" {
			t.Errorf("the provider changed: %+v", got)
		}
		req = newRequest(t, "GET", srv.URL+"/runs", "", nil)
		req.Host = evil
		if res, _ := send(t, req); res.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("rebound page: %d, want 421", res.StatusCode)
		}
		// Health checks answer whatever name a probe uses.
		req = newRequest(t, "GET", srv.URL+"/healthz", "", nil)
		req.Host = "10.1.2.3:8080"
		if res, _ := send(t, req); res.StatusCode != http.StatusOK {
			t.Errorf("/healthz under another name: %d", res.StatusCode)
		}
		// A known Host with a foreign Origin is cross-site.
		req = newRequest(t, "PUT", fmt.Sprintf("%s/api/providers/%d", srv.URL, p.ID), `{"name":"Pwned","base_url":"http://x"}`,
			map[string]string{"Content-Type": "application/json", "Origin": "http://" + evil})
		if res, body := send(t, req); res.StatusCode != http.StatusForbidden {
			t.Errorf("foreign Origin: %d %s, want 403", res.StatusCode, body)
		}
	})
}

func TestAllowedHosts(t *testing.T) {
	st := storetest.SQLite(t)
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	h := handlers.New(st, eng, slog.New(slog.DiscardHandler), handlers.WithEdge(handlers.Edge{
		ListenAddr: "127.0.0.1:8080", AllowedHosts: []string{"tribunal.example.com", "10.0.0.7:9000"}}))
	for _, tc := range []struct {
		host string
		want int
	}{
		{"localhost:8080", 200},
		{"localhost", 200},
		{"LOCALHOST:8080", 200},
		{"127.0.0.1:8080", 200},
		{"[::1]:8080", 200},
		{"[::1]", 200},
		{"localhost:9999", 421}, // another port: something else forwarded here
		{"tribunal.example.com", 200},
		{"tribunal.example.com:443", 200},
		{"10.0.0.7:9000", 200},
		{"10.0.0.7:8080", 421},
		{"tribunal.example.com.attacker.example", 421},
		{"", 421},
	} {
		req := httptest.NewRequest("GET", "/api/runs", nil)
		req.Host = tc.host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Host %q: %d, want %d", tc.host, rec.Code, tc.want)
		}
	}
	// The Origin of a state change must be an allowed name too.
	for origin, want := range map[string]int{"https://tribunal.example.com": 422, "http://localhost:8080": 422, "http://localhost:3000": 403, "http://evil.example": 403} {
		req := httptest.NewRequest("POST", "/api/providers", strings.NewReader(`{}`))
		req.Host, req.Header["Origin"] = "tribunal.example.com", []string{origin}
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Origin %s: %d %s, want %d", origin, rec.Code, rec.Body, want)
		}
	}
}

func TestAuthToken(t *testing.T) {
	const token = "correct-horse-battery-staple"
	srv := serve(t, storetest.SQLite(t), handlers.WithEdge(handlers.Edge{AuthToken: token}))
	bearer := map[string]string{"Authorization": "Bearer " + token}
	// The session cookie is a MAC under the master key: one made from the
	// token alone, as anybody could for each guess, is no session.
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("tribunal-session"))
	forged := map[string]string{"Cookie": "tribunal_session=" + hex.EncodeToString(mac.Sum(nil))}

	for _, tc := range []struct {
		name, path string
		header     map[string]string
		want       int
		location   string
	}{
		{"API without token", "/api/runs", nil, 401, ""},
		{"API with a wrong token", "/api/runs", map[string]string{"Authorization": "Bearer nope"}, 401, ""},
		{"API with the token", "/api/runs", bearer, 200, ""},
		{"API, lower-case scheme", "/api/runs", map[string]string{"Authorization": "bearer " + token}, 200, ""},
		{"metrics without token", "/metrics", nil, 401, ""},
		{"metrics with the token", "/metrics", bearer, 200, ""},
		{"page without a session", "/runs/new?x=1", nil, 303, "/login?next=%2Fruns%2Fnew%3Fx%3D1"},
		{"a token in the cookie itself is no session", "/runs", map[string]string{"Cookie": "tribunal_session=" + token}, 303, "/login?next=%2Fruns"},
		{"a cookie made without the master key is no session", "/api/runs", forged, 401, ""},
		{"health", "/healthz", nil, 200, ""},
		{"readiness", "/readyz", nil, 200, ""},
		{"assets", "/assets/htmx.min.js", nil, 200, ""},
		{"sign-in page", "/login", nil, 200, ""},
	} {
		res, body := send(t, newRequest(t, "GET", srv.URL+tc.path, "", tc.header))
		if res.StatusCode != tc.want || res.Header.Get("Location") != tc.location {
			t.Errorf("%s: %d → %q, want %d → %q", tc.name, res.StatusCode, res.Header.Get("Location"), tc.want, tc.location)
		}
		if tc.want == 401 && tc.path == "/api/runs" && !strings.Contains(body, `"error"`) {
			t.Errorf("%s: body %s, want a JSON error", tc.name, body)
		}
		if tc.path == "/healthz" && body != "ok" {
			t.Errorf("/healthz says %q", body)
		}
	}

	// The sign-in page links nowhere it could not go, and polls nothing (a
	// poll would be sent back to sign in, for ever).
	if _, body := send(t, newRequest(t, "GET", srv.URL+"/login", "", nil)); strings.Contains(body, "hx-get") || strings.Contains(body, `href="/tasks"`) {
		t.Errorf("the sign-in page carries the app's navigation")
	}

	// HTMX cannot follow a redirect into a fragment; it is told to navigate.
	res, _ := send(t, newRequest(t, "GET", srv.URL+"/runs", "", map[string]string{"HX-Request": "true"}))
	if res.StatusCode != 401 || res.Header.Get("HX-Redirect") != "/login" {
		t.Errorf("HTMX without a session: %d, HX-Redirect %q", res.StatusCode, res.Header.Get("HX-Redirect"))
	}

	login := func(tok, next string, header map[string]string) *http.Response {
		form := url.Values{"token": {tok}, "next": {next}}
		h := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": srv.URL}
		for k, v := range header {
			h[k] = v
		}
		res, _ := send(t, newRequest(t, "POST", srv.URL+"/login", form.Encode(), h))
		return res
	}
	if res := login("wrong", "/tasks", nil); res.StatusCode != 401 || len(res.Cookies()) != 0 {
		t.Errorf("wrong token: %d, cookies %v", res.StatusCode, res.Cookies())
	}
	res = login(token, "/tasks", nil)
	if res.StatusCode != 303 || res.Header.Get("Location") != "/tasks" || len(res.Cookies()) != 1 {
		t.Fatalf("sign in: %d → %q, cookies %v", res.StatusCode, res.Header.Get("Location"), res.Cookies())
	}
	ck := res.Cookies()[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure || ck.Value == "" || strings.Contains(ck.Value, token) {
		t.Errorf("session cookie: %+v", ck)
	}
	if ck := login(token, "/", map[string]string{"X-Forwarded-Proto": "https"}).Cookies(); len(ck) != 1 || !ck[0].Secure {
		t.Errorf("cookie over TLS is not Secure: %v", ck)
	}
	for _, next := range []string{"//evil.example/x", "https://evil.example", "/\\evil.example", "/\t/evil.example", "javascript:alert(1)", "evil"} {
		if loc := login(token, next, nil).Header.Get("Location"); loc != "/runs" {
			t.Errorf("next %q redirects to %q, want /runs", next, loc)
		}
	}

	// The session opens pages and the API, and the nav offers to sign out.
	session := map[string]string{"Cookie": ck.Name + "=" + ck.Value}
	res, body := send(t, newRequest(t, "GET", srv.URL+"/runs", "", session))
	if res.StatusCode != 200 || !strings.Contains(body, `data-testid="sign-out"`) {
		t.Errorf("page with a session: %d, sign out shown: %v", res.StatusCode, strings.Contains(body, `data-testid="sign-out"`))
	}
	if res, _ := send(t, newRequest(t, "GET", srv.URL+"/api/runs", "", session)); res.StatusCode != 200 {
		t.Errorf("API with a session: %d", res.StatusCode)
	}
	// Another process behind the same token accepts the same cookie.
	other := serve(t, storetest.SQLite(t), handlers.WithEdge(handlers.Edge{AuthToken: token}))
	if res, _ := send(t, newRequest(t, "GET", other.URL+"/runs", "", session)); res.StatusCode != 200 {
		t.Errorf("another process: %d", res.StatusCode)
	}

	res, _ = send(t, newRequest(t, "POST", srv.URL+"/logout", "", map[string]string{"Origin": srv.URL}))
	if res.StatusCode != 303 || len(res.Cookies()) != 1 || res.Cookies()[0].MaxAge >= 0 {
		t.Errorf("sign out: %d, cookies %v", res.StatusCode, res.Cookies())
	}
}

// TestWrongTokensAreThrottled: a client that sent ten wrong tokens gets 429,
// even with the right one, on the API and the sign-in form alike, while a
// browser already signed in from the same address goes on.
func TestWrongTokensAreThrottled(t *testing.T) {
	const token = "correct-horse-battery-staple"
	srv := serve(t, storetest.SQLite(t), handlers.WithEdge(handlers.Edge{AuthToken: token}))
	form := func(tok string) *http.Request {
		return newRequest(t, "POST", srv.URL+"/login", url.Values{"token": {tok}}.Encode(),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": srv.URL})
	}
	res, _ := send(t, form(token))
	if res.StatusCode != 303 || len(res.Cookies()) != 1 {
		t.Fatalf("sign in: %d, cookies %v", res.StatusCode, res.Cookies())
	}
	session := map[string]string{"Cookie": res.Cookies()[0].Name + "=" + res.Cookies()[0].Value}

	for i := range 10 {
		req := form("guess")
		if i%2 == 0 {
			req = newRequest(t, "GET", srv.URL+"/api/runs", "", map[string]string{"Authorization": "Bearer guess"})
		}
		if res, _ := send(t, req); res.StatusCode != 401 {
			t.Fatalf("wrong token %d: %d, want 401", i+1, res.StatusCode)
		}
	}
	for name, req := range map[string]*http.Request{
		"API":           newRequest(t, "GET", srv.URL+"/api/runs", "", map[string]string{"Authorization": "Bearer " + token}),
		"sign-in form":  form(token),
		"API, no token": newRequest(t, "GET", srv.URL+"/api/runs", "", nil),
		"session":       newRequest(t, "GET", srv.URL+"/api/runs", "", session),
	} {
		res, body := send(t, req)
		want := 429
		switch name {
		case "API, no token":
			want = 401
		case "session":
			want = 200
		}
		if res.StatusCode != want {
			t.Errorf("%s after ten wrong tokens: %d %s, want %d", name, res.StatusCode, body, want)
			continue
		}
		if want != 429 {
			continue
		}
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Errorf("%s: Retry-After %q, want 1–60 seconds", name, res.Header.Get("Retry-After"))
		}
		if len(res.Cookies()) != 0 || !strings.Contains(body, "try again in") {
			t.Errorf("%s: cookies %v, body %s", name, res.Cookies(), body)
		}
	}
}

func TestNoSignOutWithoutToken(t *testing.T) {
	srv := serve(t, storetest.SQLite(t))
	res, body := send(t, newRequest(t, "GET", srv.URL+"/runs", "", nil))
	if res.StatusCode != 200 || strings.Contains(body, `data-testid="sign-out"`) {
		t.Errorf("without a token: %d, sign out shown: %v", res.StatusCode, strings.Contains(body, `data-testid="sign-out"`))
	}
	// Nothing to sign in to: the sign-in page moves on.
	if res, _ := send(t, newRequest(t, "GET", srv.URL+"/login?next=/tasks", "", nil)); res.StatusCode != 303 || res.Header.Get("Location") != "/tasks" {
		t.Errorf("/login without a token: %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestSecurityHeaders(t *testing.T) {
	srv := serve(t, storetest.SQLite(t))
	bad := newRequest(t, "GET", srv.URL+"/runs", "", nil)
	bad.Host = "elsewhere.example"
	for name, req := range map[string]*http.Request{
		"page":      newRequest(t, "GET", srv.URL+"/runs", "", nil),
		"API":       newRequest(t, "GET", srv.URL+"/api/runs", "", nil),
		"not found": newRequest(t, "GET", srv.URL+"/nope", "", nil),
		"asset":     newRequest(t, "GET", srv.URL+"/assets/app.css", "", nil),
		"421":       bad,
	} {
		res, _ := send(t, req)
		csp := res.Header.Get("Content-Security-Policy")
		if res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(csp, "frame-ancestors 'none'") ||
			res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s (%d): headers %v", name, res.StatusCode, res.Header)
		}
	}
}

func TestBodyLimits(t *testing.T) {
	st := storetest.SQLite(t)
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	h := handlers.New(st, eng, slog.New(slog.DiscardHandler))
	big := `{"name":"` + strings.Repeat("x", 3<<20) + `","base_url":"http://x"}`
	form := url.Values{"name": {strings.Repeat("x", 3<<20)}, "base_url": {"http://x"}}.Encode()
	var multi strings.Builder
	mw := multipart.NewWriter(&multi)
	mw.WriteField("name", strings.Repeat("x", 3<<20))
	mw.Close()
	for _, tc := range []struct {
		name, method, path, ct, body string
		chunked                      bool
		length                       int64
		want                         int
	}{
		{"JSON", "POST", "/api/providers", "application/json", big, false, 0, 413},
		{"JSON without a length", "PUT", "/api/providers/1", "application/json", big, true, 0, 413},
		{"form", "POST", "/providers", "application/x-www-form-urlencoded", form, false, 0, 413},
		{"form without a length", "POST", "/tasks", "application/x-www-form-urlencoded", form, true, 0, 413},
		{"multipart form without a length", "POST", "/collections", mw.FormDataContentType(), multi.String(), true, 0, 413},
		{"import within its limit", "POST", "/api/import?format=jsonl", "application/x-ndjson", strings.Repeat(" ", 3<<20), false, 0, 400},
		{"import beyond its limit", "POST", "/api/import?format=jsonl", "application/x-ndjson", "{}", false, 52 << 20, 413},
	} {
		var body io.Reader = strings.NewReader(tc.body)
		if tc.chunked {
			body = io.MultiReader(body) // hides the length
		}
		req := httptest.NewRequest(tc.method, tc.path, body)
		req.Host = "localhost"
		req.Header.Set("Content-Type", tc.ct)
		if tc.chunked {
			req.ContentLength = -1
		}
		if tc.length > 0 {
			req.ContentLength = tc.length
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: %d %.200s, want %d", tc.name, rec.Code, rec.Body, tc.want)
		}
		if tc.want == 413 && strings.HasPrefix(tc.path, "/api/") && !strings.Contains(rec.Body.String(), `{"error":"the request body is larger`) {
			t.Errorf("%s: body %.200s, want a JSON error", tc.name, rec.Body)
		}
	}
	if n, _ := st.Providers(context.Background()); len(n) != 0 {
		t.Errorf("an oversized body created %d providers", len(n))
	}
}

func TestReadyz(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		srv := serve(t, st)
		if res, body := send(t, newRequest(t, "GET", srv.URL+"/readyz", "", nil)); res.StatusCode != 200 || body != "ok" {
			t.Errorf("database up: %d %q", res.StatusCode, body)
		}
		for _, path := range []string{"/readyz", "/healthz"} { // probes may ask with HEAD
			if res, _ := send(t, newRequest(t, "HEAD", srv.URL+path, "", nil)); res.StatusCode != 200 {
				t.Errorf("HEAD %s: %d, want 200", path, res.StatusCode)
			}
		}
		st.Close()
		if res, _ := send(t, newRequest(t, "GET", srv.URL+"/readyz", "", nil)); res.StatusCode != 503 {
			t.Errorf("database down: %d, want 503", res.StatusCode)
		}
		if res, _ := send(t, newRequest(t, "GET", srv.URL+"/healthz", "", nil)); res.StatusCode != 200 {
			t.Errorf("/healthz with the database down: %d, want 200 (the process lives)", res.StatusCode)
		}
	})
}

// scrape reads /metrics.
func scrape(t *testing.T, srvURL string) string {
	t.Helper()
	res, body := send(t, newRequest(t, "GET", srvURL+"/metrics", "", nil))
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	return body
}

// TestEventStreamOutlivesServerTimeouts: the server's ReadTimeout and
// WriteTimeout bound ordinary requests; an event stream must go on past
// them. The web engine never runs; a worker engine starts after the
// timeouts have passed, and the stream must follow the run to its end.
// Metrics count the open stream and the worker's calls, retries and judge
// failures.
func TestEventStreamOutlivesServerTimeouts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		const timeout = 200 * time.Millisecond
		log := slog.New(slog.DiscardHandler)
		broker := engine.NewBroker()
		mets := metrics.New(st, log)
		web := engine.New(engine.Config{}, st, broker, log)
		srv := httptest.NewUnstartedServer(handlers.New(st, web, log, handlers.WithMetrics(mets)))
		srv.Config.ReadTimeout, srv.Config.WriteTimeout = timeout, timeout
		srv.Start()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		t.Cleanup(func() { srv.Close(); cancel(); wg.Wait() })

		var judgeCalls atomic.Int32
		fake := llmtest.New(t, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() && judgeCalls.Add(1) == 1 {
				return llmtest.Reply{Content: "no verdict here"} // unusable: retried
			}
			return llmtest.DefaultReply(r)
		})
		a := &app{srv: srv, st: st, fake: fake}
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, fake.URL)}, 201, &p)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"s-1","category":"c","question":"q1"}`}, 201, nil)
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"S","task_ids":["s-1"]}`}, 201, &col)
		var run runReply
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[{"provider_id":%d,"model":"m"}],"collection_ids":[%d]}`, p.ID, p.ID, col.ID)}, 201, &run)

		sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer scancel()
		req, _ := http.NewRequestWithContext(sctx, "GET", fmt.Sprintf("%s/api/runs/%d/events", srv.URL, run.ID), nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		time.Sleep(3 * timeout)
		if m := scrape(t, srv.URL); !strings.Contains(m, "tribunal_sse_clients 1\n") {
			t.Errorf("open stream not counted:\n%s", grepLines(m, "tribunal_sse_clients"))
		}

		worker := engine.New(engine.Config{PollInterval: 20 * time.Millisecond, BackoffBase: 10 * time.Millisecond,
			ObserveCallFunc: mets.ObserveCall, ObserveFailureFunc: mets.ObserveFailure}, st, broker, log)
		wg.Go(func() { worker.Run(ctx) })
		last := ""
		for line := range lines {
			if ev, ok := strings.CutPrefix(line, "event: "); ok {
				last = ev
			}
		}
		if last != "end" {
			t.Fatalf("the stream stopped before the run ended (last event %q, context %v)", last, sctx.Err())
		}

		m := scrape(t, srv.URL)
		for _, want := range []string{
			`tribunal_provider_calls_total{model="m",outcome="ok",provider="Fake"} 2`, // warm-up and answer
			`tribunal_provider_calls_total{model="j",outcome="ok",provider="Fake"} 2`, // the unusable verdict and its retry
			`tribunal_provider_call_duration_seconds_count{model="m",provider="Fake"} 2`,
			`tribunal_retries_total{phase="JUDGING"} 1`,
			`tribunal_judge_failures_total 1`,
			`tribunal_runs{status="FINISHED"} 1`,
			`tribunal_items{status="COMPLETED"} 0`, // the run is over
			"tribunal_sse_clients 0",
			"tribunal_db_max_open_connections",
		} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "tribunal_"))
			}
		}
	})
}

func grepLines(text, prefix string) string {
	var out []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}
