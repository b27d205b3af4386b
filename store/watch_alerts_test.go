package store_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/egress"
	"tribunal/store"
	"tribunal/store/storetest"
)

func TestWatchAlertValidation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		k, err := st.CreateKPI(ctx, store.KPIInput{Name: "Q", Formula: "score"})
		if err != nil {
			t.Fatal(err)
		}
		f := func(v float64) *float64 { return &v }
		a, err := st.CreateAlert(ctx, store.AlertInput{Name: "drop", Metric: "Accuracy", Condition: "percentage_drop", Threshold: f(10),
			Channels: []store.Channel{{Type: "Slack", URL: " https://hooks.slack.test/T/B/secret "}, {Type: "email", To: "Ops <ops@example.com>, b@example.com"}}})
		if err != nil {
			t.Fatal(err)
		}
		if a.Metric != "accuracy" || a.Condition != "PERCENTAGE_DROP" || a.Severity != "WARNING" || a.BaselineRuns != 5 || !a.Enabled ||
			len(a.Channels) != 2 || a.Channels[0].URL != "••••••cret" || a.Channels[1].To != "ops@example.com, b@example.com" {
			t.Fatalf("created: %+v", a)
		}
		if plain, err := st.AlertWithSecrets(ctx, a.ID); err != nil || plain.Channels[0].URL != "https://hooks.slack.test/T/B/secret" {
			t.Fatalf("created, in clear: %+v %v", plain, err)
		}
		an, err := st.CreateAlert(ctx, store.AlertInput{Name: "odd", KPIID: &k.ID, Condition: "ANOMALY_DETECTED"})
		if err != nil || an.Threshold != store.DefaultAnomalyK || len(an.Channels) != 1 || an.Channels[0].Type != "in_app" {
			t.Fatalf("anomaly defaults: %+v %v", an, err)
		}
		missing := int64(99)
		for _, tt := range []struct {
			in         store.AlertInput
			field, msg string
		}{
			{store.AlertInput{Name: "x", Condition: "LESS_THAN", Threshold: f(1)}, "kpi_id", "pick a KPI"},
			{store.AlertInput{Name: "x", KPIID: &k.ID, Metric: "score", Condition: "LESS_THAN", Threshold: f(1)}, "metric", "not both"},
			{store.AlertInput{Name: "x", KPIID: &missing, Condition: "LESS_THAN", Threshold: f(1)}, "kpi_id", "no KPI with id 99"},
			{store.AlertInput{Name: "x", Metric: "acuracy", Condition: "LESS_THAN", Threshold: f(1)}, "metric", `unknown metric "acuracy"`},
			{store.AlertInput{Name: "x", Metric: "score", Condition: "SOMETIMES", Threshold: f(1)}, "condition", "must be one of"},
			{store.AlertInput{Name: "x", Metric: "score", Condition: "LESS_THAN"}, "threshold", "is required"},
			{store.AlertInput{Name: "x", Metric: "score", Condition: "PERCENTAGE_RISE", Threshold: f(-5)}, "threshold", "percentage"},
			{store.AlertInput{Name: "x", Metric: "score", Condition: "ANOMALY_DETECTED", BaselineRuns: 1}, "baseline_runs", "at least 2"},
			{store.AlertInput{Name: "x", Metric: "score", Condition: "EQUALS", Threshold: f(1), Severity: "LOUD"}, "severity", "INFO, WARNING or CRITICAL"},
			{store.AlertInput{Name: "x", Metric: "score", Condition: "EQUALS", Threshold: f(1), Channels: []store.Channel{{Type: "webhook", URL: "ftp://x"}}}, "channels[0].url", "http(s) URL"},
			{store.AlertInput{Name: "x", Metric: "score", Condition: "EQUALS", Threshold: f(1), Channels: []store.Channel{{Type: "email", To: "not an address"}}}, "channels[0].to", "e-mail addresses"},
			{store.AlertInput{Name: "x", Metric: "score", Condition: "EQUALS", Threshold: f(1), Channels: []store.Channel{{Type: "pager"}}}, "channels[0].type", "in_app, webhook"},
			{store.AlertInput{Name: "x", KPIID: &k.ID, Condition: "EQUALS", Threshold: f(1), CollectionID: &missing}, "kpi_id", "follows the KPI"},
		} {
			_, err := st.CreateAlert(ctx, tt.in)
			var ve *store.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field || !strings.Contains(ve.Message, tt.msg) {
				t.Errorf("%+v: %v, want %s …%s…", tt.in, err, tt.field, tt.msg)
			}
		}
		if _, err := st.CreateAlert(ctx, store.AlertInput{Name: "drop", Metric: "score", Condition: "EQUALS", Threshold: f(1)}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate: %v", err)
		}
	})
}

// TestWatchChannelURLsSealed: webhook URLs are encrypted at rest.
func TestWatchChannelURLsSealed(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: dir, Box: storetest.Box(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := 1.0
	if _, err := st.CreateAlert(ctx, store.AlertInput{Name: "a", Metric: "score", Condition: "EQUALS", Threshold: &f,
		Channels: []store.Channel{{Type: "webhook", URL: "https://example.test/hook/s3cr3t"}}}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "tribunal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var raw string
	if err := db.QueryRow("SELECT channels FROM alerts").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "s3cr3t") || !strings.Contains(raw, `"type":"webhook"`) {
		t.Errorf("channels at rest: %s", raw)
	}
}

// TestWatchNotificationsAndDeliveries: unread counts, read marks, and
// delivery claims that one sender holds at a time.
func TestWatchNotificationsAndDeliveries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Now()
		for i := range 5 {
			n := &store.Notification{Kind: "ALERT", Severity: "INFO", Title: "n"}
			chs := []store.Channel{{Type: "in_app"}, {Type: "webhook", URL: "https://example.test/" + string(rune('a'+i))}}
			if i == 4 {
				chs = chs[1:] // no in_app: listed, but not unread
			}
			if err := st.CreateNotification(ctx, n, chs, now); err != nil {
				t.Fatal(err)
			}
		}
		if n, _ := st.UnreadNotifications(ctx); n != 4 {
			t.Fatalf("unread %d, want 4", n)
		}
		page, err := st.Notifications(ctx, store.NotificationFilter{UnreadOnly: true, PerPage: 2})
		if err != nil || page.Total != 4 || len(page.Items) != 2 || len(page.Items[0].Deliveries) != 2 || page.Items[0].Deliveries[1].Target != "https://example.test/…" {
			t.Fatalf("unread page: %+v %v", page, err)
		}
		if n, _ := st.MarkNotificationsRead(ctx, []int64{page.Items[0].ID}); n != 1 {
			t.Fatalf("marked %d", n)
		}
		if n, _ := st.MarkNotificationsRead(ctx, nil); n != 3 {
			t.Fatalf("marked all: %d", n)
		}

		// Concurrent senders share the deliveries without overlap.
		var wg sync.WaitGroup
		var mu sync.Mutex
		seen := map[int64]int{}
		for i := range 4 {
			wg.Go(func() {
				ds, err := st.ClaimDeliveries(ctx, string(rune('a'+i)), time.Minute, 2, now)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				for _, d := range ds {
					seen[d.ID]++
					if !strings.HasPrefix(d.Target, "https://example.test/") {
						t.Errorf("claimed target %q", d.Target)
					}
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		for id, n := range seen {
			if n != 1 {
				t.Errorf("delivery %d claimed %d times", id, n)
			}
		}
		if len(seen) != 5 {
			t.Fatalf("claimed %d of 5 deliveries", len(seen))
		}
		// A sender whose lease ran out loses the delivery and cannot record its outcome.
		ds, _ := st.ClaimDeliveries(ctx, "late", time.Minute, 10, now.Add(2*time.Minute))
		if len(ds) != 5 || ds[0].Attempts != 2 {
			t.Fatalf("re-claimed after the lease: %+v", ds)
		}
		stale := ds[0]
		stale.Attempts, stale.WorkerID = 1, "a"
		if ok, err := st.FinishDelivery(ctx, &stale, store.DeliveryResult{Status: store.DeliverySent}, now); ok || err != nil {
			t.Fatalf("a lost claim recorded its outcome: %v %v", ok, err)
		}
		if ok, err := st.FinishDelivery(ctx, &ds[0], store.DeliveryResult{Status: store.DeliveryPending, RetryAt: now.Add(time.Hour)}, now); !ok || err != nil {
			t.Fatalf("finish: %v %v", ok, err)
		}
		if next, _ := st.NextDeliveryAt(ctx); next == nil || !next.Equal(now.Add(time.Hour).UTC().Truncate(time.Microsecond)) && !next.Equal(now.Add(time.Hour).UTC()) {
			t.Errorf("next delivery at %v", next)
		}
	})
}

// TestWatchChannelURLMasked: users see a webhook URL masked; the mask sent
// back keeps the stored URL, and a mask that matches none is refused.
func TestWatchChannelURLMasked(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := 1.0
		hook := "https://hooks.example.test/services/T0/B0/s3cr3t-token"
		a, err := st.CreateAlert(ctx, store.AlertInput{Name: "a", Metric: "score", Condition: "EQUALS", Threshold: &f,
			Channels: []store.Channel{{Type: "in_app"}, {Type: "webhook", URL: hook}}})
		if err != nil {
			t.Fatal(err)
		}
		list, err := st.Alerts(ctx)
		if err != nil || len(list) != 1 || strings.Contains(list[0].Channels[1].URL, "s3cr3t") || !strings.HasPrefix(list[0].Channels[1].URL, "••") {
			t.Fatalf("listed: %+v %v", list, err)
		}
		// Sent back masked, in another order: kept.
		in := store.AlertInput{Name: "a", Metric: "score", Condition: "EQUALS", Threshold: &f,
			Channels: []store.Channel{a.Channels[1], {Type: "in_app"}}}
		if _, err := st.UpdateAlert(ctx, a.ID, in); err != nil {
			t.Fatal(err)
		}
		if got, err := st.AlertWithSecrets(ctx, a.ID); err != nil || got.Channels[0].URL != hook {
			t.Fatalf("after a masked update: %+v %v", got, err)
		}
		// A mask of no stored URL (or of another type's) cannot be kept.
		in.Channels = []store.Channel{{Type: "slack", URL: a.Channels[1].URL}}
		_, err = st.UpdateAlert(ctx, a.ID, in)
		wantInvalid(t, "mask of another type", err, "channels[0].url", "enter the URL again")
		_, err = st.CreateAlert(ctx, store.AlertInput{Name: "b", Metric: "score", Condition: "EQUALS", Threshold: &f,
			Channels: []store.Channel{{Type: "webhook", URL: a.Channels[1].URL}}})
		wantInvalid(t, "mask on create", err, "channels[0].url", "enter the URL again")
	})
}

// TestWatchChannelURLChecks: no credentials in a webhook URL, never a
// metadata address, and no private address unless the policy lists webhooks.
func TestWatchChannelURLChecks(t *testing.T) {
	// Subtests of distinct names: a '#' in a test's temp dir would cut the SQLite file name.
	t.Run("default", func(t *testing.T) {
		storetest.EachWithEgress(t, egress.Default, func(t *testing.T, st *store.Store) {
			ctx := context.Background()
			f := 1.0
			for _, tc := range []struct{ typ, url, want string }{
				{"webhook", "https://user:pw@hooks.example.test/x", "must not hold credentials"},
				{"webhook", "http://169.254.169.254/latest/meta-data/", "link-local or cloud metadata"},
				{"slack", "http://100.100.100.200/", "link-local or cloud metadata"},
				{"teams", "http://127.0.0.1:8080/hook", "--allow-private-egress=webhooks"},
				{"webhook", "http://192.168.1.10/hook", "--allow-private-egress=webhooks"},
			} {
				_, err := st.CreateAlert(ctx, store.AlertInput{Name: "a", Metric: "score", Condition: "EQUALS", Threshold: &f,
					Channels: []store.Channel{{Type: tc.typ, URL: tc.url}}})
				wantInvalid(t, tc.url, err, "channels[0].url", tc.want)
			}
		})
	})
	t.Run("allowed", func(t *testing.T) {
		storetest.EachWithEgress(t, egress.AllowPrivate(egress.Webhooks), func(t *testing.T, st *store.Store) {
			f := 1.0
			if _, err := st.CreateAlert(context.Background(), store.AlertInput{Name: "a", Metric: "score", Condition: "EQUALS", Threshold: &f,
				Channels: []store.Channel{{Type: "webhook", URL: "http://127.0.0.1:8080/hook"}}}); err != nil {
				t.Errorf("a private webhook where allowed: %v", err)
			}
		})
	})
}
