package watch

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// receiver is an httptest webhook endpoint answering with scripted statuses.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int // answered in turn; the last one repeats
	bodies   []map[string]any
	header   http.Header
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses, header: http.Header{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		var body map[string]any
		json.Unmarshal(raw, &body)
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		status := r.statuses[min(len(r.bodies), len(r.statuses))-1]
		for k, v := range r.header {
			w.Header()[k] = v
		}
		r.mu.Unlock()
		if req.Header.Get("Content-Type") != "application/json" {
			status = 415
		}
		w.WriteHeader(status)
		io.WriteString(w, `{"ok":false}`)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) calls() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.bodies...)
}

func deliveries(t *testing.T, st *store.Store, id int64) map[string]store.Delivery {
	t.Helper()
	n, err := st.Notification(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.Delivery{}
	for _, d := range n.Deliveries {
		out[d.Channel+":"+d.Target] = d
	}
	return out
}

// TestDeliveryRetries: webhooks are retried with backoff (1s·n⁴) until they
// succeed, honour Retry-After, give up after MaxAttempts, and do not retry
// a permanent refusal; Slack and Teams get their text payloads; e-mail
// without SMTP reports NOT_CONFIGURED.
func TestDeliveryRetries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		flaky := newReceiver(t, 503, 500, 204)
		gone := newReceiver(t, 404)
		down := newReceiver(t, 500)
		limited := newReceiver(t, 429, 200)
		limited.header.Set("Retry-After", "120")
		slack, teams := newReceiver(t, 200), newReceiver(t, 200)
		clock := newFakeClock(at(10, 0, 0))
		v, base, th := 0.62, 0.8, 0.7
		n := &store.Notification{Kind: "ALERT", Severity: "WARNING", Title: "Accuracy low", Message: "Run 7 “Nightly”: accuracy dropped.",
			Subject: "accuracy", Condition: "LESS_THAN", Value: &v, Baseline: &base, Threshold: &th, BaselineN: 5}
		channels := []store.Channel{{Type: "webhook", URL: flaky.URL + "/secret-token"}, {Type: "webhook", URL: gone.URL},
			{Type: "webhook", URL: down.URL}, {Type: "webhook", URL: limited.URL}, {Type: "slack", URL: slack.URL}, {Type: "teams", URL: teams.URL},
			{Type: "email", To: "ops@example.com"}}
		if err := st.CreateNotification(ctx, n, channels, clock.Now()); err != nil {
			t.Fatal(err)
		}
		if n.ReadAt == nil {
			t.Errorf("a notification without in_app starts unread")
		}
		d := NewDeliverer(Config{Clock: clock, WorkerID: "w", MaxAttempts: 3, BaseURL: "http://tribunal.test/", Egress: storetest.Egress}, st, quietLog())
		step := func(want int) {
			t.Helper()
			got, err := d.Tick(ctx)
			if err != nil || got != want {
				t.Fatalf("at %s: attempted %d (%v), want %d", clock.Now().Format("15:04:05"), got, err, want)
			}
		}
		step(7)
		step(0) // nothing is due until the backoff has passed
		ds := deliveries(t, st, n.ID)
		host := func(r *receiver) string { return r.URL + "/…" }
		if f := ds["webhook:"+host(flaky)]; f.Status != store.DeliveryPending || f.Attempts != 1 || !f.NextAttemptAt.Equal(at(10, 0, 1)) ||
			*f.ResponseCode != 503 || !strings.Contains(f.LastError, "HTTP 503") {
			t.Errorf("flaky after 1: %+v", f)
		}
		if g := ds["webhook:"+host(gone)]; g.Status != store.DeliveryFailed || g.Attempts != 1 || !strings.Contains(g.LastError, "not retried") {
			t.Errorf("404: %+v", g)
		}
		if l := ds["webhook:"+host(limited)]; l.Status != store.DeliveryPending || !l.NextAttemptAt.Equal(at(10, 2, 0)) {
			t.Errorf("429 with Retry-After 120: %+v", l)
		}
		if e := ds["email:ops@example.com"]; e.Status != store.DeliveryNotConfigured || !strings.Contains(e.LastError, "TRIBUNAL_SMTP_HOST") {
			t.Errorf("email: %+v", e)
		}
		clock.Set(at(10, 0, 1))
		step(2) // flaky, down: second attempts; next after 16 s
		clock.Set(at(10, 0, 17))
		step(2)
		clock.Set(at(10, 2, 0))
		step(1) // limited
		step(0)
		ds = deliveries(t, st, n.ID)
		if f := ds["webhook:"+host(flaky)]; f.Status != store.DeliverySent || f.Attempts != 3 || *f.ResponseCode != 204 || f.SentAt == nil {
			t.Errorf("flaky at the end: %+v", f)
		}
		if f := ds["webhook:"+host(down)]; f.Status != store.DeliveryFailed || f.Attempts != 3 || !strings.Contains(f.LastError, "gave up after 3 attempts") {
			t.Errorf("down at the end: %+v", f)
		}
		if l := ds["webhook:"+host(limited)]; l.Status != store.DeliverySent || l.Attempts != 2 {
			t.Errorf("limited at the end: %+v", l)
		}
		body := flaky.calls()[2]
		if body["event"] != "alert.fired" || body["value"] != 0.62 || body["baseline"] != 0.8 || body["threshold"] != 0.7 ||
			body["severity"] != "WARNING" || body["subject"] != "accuracy" || body["baseline_runs"] != float64(5) || body["link"] != "http://tribunal.test/notifications" {
			t.Errorf("webhook body: %v", body)
		}
		if text, _ := slack.calls()[0]["text"].(string); !strings.Contains(text, "*[WARNING] Accuracy low*") || !strings.Contains(text, "accuracy dropped") {
			t.Errorf("slack body: %v", slack.calls())
		}
		if tb := teams.calls()[0]; tb["@type"] != "MessageCard" || !strings.Contains(tb["text"].(string), "accuracy dropped") {
			t.Errorf("teams body: %v", tb)
		}
		// Listing shows the outcome without the webhook's secret path.
		list, _ := st.Notifications(ctx, store.NotificationFilter{})
		raw, _ := json.Marshal(list)
		if strings.Contains(string(raw), "secret-token") {
			t.Errorf("the notification list leaks a webhook URL: %s", raw)
		}
	})
}

// TestDeliveryEmail sends an alert to a fake SMTP server.
func TestDeliveryEmail(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	srv := fakeSMTP(t)
	clock := newFakeClock(at(10, 0, 0))
	n := &store.Notification{Kind: "ALERT", Severity: "CRITICAL", Title: "Qualität gefallen", Message: "Run 3: score dropped.\n.dot line"}
	if err := st.CreateNotification(ctx, n, []store.Channel{{Type: "email", To: "a@example.com, b@example.com"}, {Type: "in_app"}}, clock.Now()); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(srv.addr)
	cfg := Config{Clock: clock, WorkerID: "w", BaseURL: "http://t", SMTP: SMTPConfig{Host: host, From: "tribunal@example.com"}}
	cfg.SMTP.Port = atoi(port)
	d := NewDeliverer(cfg, st, quietLog())
	if got, err := d.Tick(ctx); err != nil || got != 1 {
		t.Fatalf("tick: %d %v", got, err)
	}
	if ds := deliveries(t, st, n.ID); ds["email:a@example.com, b@example.com"].Status != store.DeliverySent || ds["in_app:"].Status != store.DeliverySent {
		t.Fatalf("deliveries: %+v", ds)
	}
	msg := srv.message()
	for _, want := range []string{"MAIL FROM:<tribunal@example.com>", "RCPT TO:<a@example.com>", "RCPT TO:<b@example.com>",
		"Subject: =?utf-8?q?[CRITICAL]_Qualit=C3=A4t_gefallen?=", "Run 3: score dropped.\r\n..dot line", "http://t/notifications"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the mail lacks %q:\n%s", want, msg)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

type smtpServer struct {
	addr string
	mu   sync.Mutex
	log  strings.Builder
	done chan struct{}
}

// fakeSMTP accepts one session and records it.
func fakeSMTP(t *testing.T) *smtpServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{addr: ln.Addr().String(), done: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	go func() {
		defer close(s.done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		say := func(l string) { io.WriteString(c, l+"\r\n") }
		say("220 fake ESMTP")
		data := false
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			s.mu.Lock()
			s.log.WriteString(line)
			s.mu.Unlock()
			cmd := strings.ToUpper(strings.TrimSpace(line))
			switch {
			case data:
				if cmd == "." {
					data = false
					say("250 queued")
				}
			case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
				say("250-fake")
				say("250 8BITMIME")
			case cmd == "DATA":
				data = true
				say("354 go ahead")
			case cmd == "QUIT":
				say("221 bye")
				return
			default:
				say("250 ok")
			}
		}
	}()
	return s
}

func (s *smtpServer) message() string {
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// TestDeliveryKeepsNoReplyBody: a failed delivery records the status and its
// generic reason, never what the receiver wrote back, which users would see.
func TestDeliveryKeepsNoReplyBody(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		leaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":"bad token","debug":"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG"}`)
		}))
		defer leaky.Close()
		clock := newFakeClock(at(10, 0, 0))
		n := &store.Notification{Kind: "ALERT", Severity: "INFO", Title: "t", Message: "m"}
		if err := st.CreateNotification(ctx, n, []store.Channel{{Type: "webhook", URL: leaky.URL}}, clock.Now()); err != nil {
			t.Fatal(err)
		}
		d := NewDeliverer(Config{Clock: clock, WorkerID: "w", BaseURL: "http://t", Egress: storetest.Egress}, st, quietLog())
		if _, err := d.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := st.Notification(ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		dl := got.Deliveries[0]
		if dl.Status != store.DeliveryFailed || dl.ResponseCode == nil || *dl.ResponseCode != 403 || !strings.HasPrefix(dl.LastError, "HTTP 403 Forbidden") {
			t.Errorf("delivery: %+v", dl)
		}
		if raw, _ := json.Marshal(got); strings.Contains(string(raw), "wJalrXUtnFEMI") || strings.Contains(string(raw), "bad token") {
			t.Errorf("the reply body was stored: %s", raw)
		}
	})
}

// TestDeliveryEgressAtConnect: the policy is applied to the address each
// connection goes to, whatever was checked when the URL was saved.
func TestDeliveryEgressAtConnect(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		local := newReceiver(t, 204)
		_, port, _ := net.SplitHostPort(local.Listener.Addr().String())
		clock := newFakeClock(at(10, 0, 0))
		n := &store.Notification{Kind: "ALERT", Severity: "INFO", Title: "t", Message: "m"}
		// By name, as a host whose DNS answer changed after the save would be.
		if err := st.CreateNotification(ctx, n, []store.Channel{{Type: "webhook", URL: "http://localhost:" + port + "/hook"}}, clock.Now()); err != nil {
			t.Fatal(err)
		}
		d := NewDeliverer(Config{Clock: clock, WorkerID: "w", BaseURL: "http://t"}, st, quietLog()) // the default policy
		if _, err := d.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := st.Notification(ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		if dl := got.Deliveries[0]; dl.Status == store.DeliverySent || !strings.Contains(dl.LastError, "--allow-private-egress=webhooks") {
			t.Errorf("delivery to loopback under the default policy: %+v", dl)
		}
		if len(local.calls()) != 0 {
			t.Errorf("the receiver was reached")
		}
	})
}
