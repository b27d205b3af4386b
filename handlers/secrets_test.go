package handlers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestProviderSecretFollowsNoNewHost is the attack of issue 17: point a
// provider at another host, send its masked key back, then test the
// connection so that the stored key is sent there. The update is refused,
// from the API and from the form, and the other host hears nothing.
func TestProviderSecretFollowsNoNewHost(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		var mu sync.Mutex
		var heard []string
		attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			heard = append(heard, r.Header.Get("Authorization"))
			mu.Unlock()
			w.Write([]byte(`{"data":[]}`))
		}))
		defer attacker.Close()

		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(
			`{"name":"Fake","base_url":%q,"headers":[{"key":"Authorization","value":"Bearer sk-live-abcdefgh3456","is_secret":true}]}`, a.fake.URL)}, 201, &p)
		masked := p.Headers[0].Value

		path := fmt.Sprintf("/api/providers/%d", p.ID)
		body := func(baseURL string) string {
			return fmt.Sprintf(`{"name":"Fake","base_url":%q,"headers":[{"key":"Authorization","value":%q,"is_secret":true}]}`, baseURL, masked)
		}
		msg := a.do(t, call{method: "PUT", path: path, body: body(attacker.URL)}, 422, nil)
		if !strings.Contains(msg, `headers[0].value: \"Authorization\": the base URL changed, so enter the secret value again`) {
			t.Errorf("refusal: %s", msg)
		}
		// The same through the HTML form.
		form := url.Values{"name": {"Fake"}, "base_url": {attacker.URL}, "header_key": {"Authorization"},
			"header_value": {masked}, "header_secret": {"secret"}}
		if res, doc := a.post(t, path[len("/api"):], form, nil); res.StatusCode != 422 || !strings.Contains(doc.Text(), "the base URL changed") {
			t.Errorf("form update: status %d, %s", res.StatusCode, doc.Find("[role=alert], .error").Text())
		}
		a.do(t, call{method: "POST", path: path + "/test"}, 200, nil)
		mu.Lock()
		if len(heard) != 0 {
			t.Errorf("the other host heard %q", heard)
		}
		mu.Unlock()

		// A path of the same origin keeps the key.
		a.do(t, call{method: "PUT", path: path, body: body(a.fake.URL + "/")}, 200, nil)
		if full, err := st.ProviderWithSecrets(t.Context(), p.ID); err != nil || full.Headers[0].Value != "Bearer sk-live-abcdefgh3456" {
			t.Errorf("after a path change: %+v %v", full, err)
		}

		// No credentials in the URL; credential headers are secret whatever is_secret says.
		msg = a.do(t, call{method: "POST", path: "/api/providers", body: `{"name":"U","base_url":"https://u:p@api.example.com"}`}, 422, nil)
		if !strings.Contains(msg, "header") {
			t.Errorf("credentials in base_url: %s", msg)
		}
		var plain store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: `{"name":"K","base_url":"https://api.example.com","headers":[{"key":"x-api-key","value":"k-123456789","is_secret":false}]}`}, 201, &plain)
		if !plain.Headers[0].IsSecret || strings.Contains(plain.Headers[0].Value, "k-123") {
			t.Errorf("x-api-key stored as %+v", plain.Headers[0])
		}
		a.do(t, call{method: "POST", path: "/api/providers", body: `{"name":"M","base_url":"http://169.254.169.254"}`}, 422, nil)
	})
}

// TestWebhookURLMasked: GET /api/alerts, /api/alerts/{id} and the alert page
// show a webhook URL masked; the mask sent back keeps it.
func TestWebhookURLMasked(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		const hook = "https://hooks.example.test/services/T0/B0/xoxb-s3cr3t"
		var al store.Alert
		a.do(t, call{method: "POST", path: "/api/alerts", body: fmt.Sprintf(
			`{"name":"low","metric":"score","condition":"LESS_THAN","threshold":0.5,"channels":[{"type":"webhook","url":%q}]}`, hook)}, 201, &al)
		path := fmt.Sprintf("/api/alerts/%d", al.ID)
		for _, p := range []string{"/api/alerts", path} {
			if got := a.do(t, call{method: "GET", path: p}, 200, nil); strings.Contains(got, "s3cr3t") || !strings.Contains(got, "••") {
				t.Errorf("GET %s shows the webhook URL: %s", p, got)
			}
		}
		if _, _, page := a.get(t, path[len("/api"):]); strings.Contains(page, "s3cr3t") {
			t.Errorf("the alert page shows the webhook URL")
		}
		// Sent back masked (a PATCH carries the stored channels along): kept.
		a.do(t, call{method: "PATCH", path: path, body: `{"threshold":0.6}`}, 200, nil)
		a.do(t, call{method: "PUT", path: path, body: fmt.Sprintf(
			`{"name":"low","metric":"score","condition":"LESS_THAN","threshold":0.5,"channels":[{"type":"webhook","url":%q}]}`, al.Channels[0].URL)}, 200, nil)
		if got, err := st.AlertWithSecrets(t.Context(), al.ID); err != nil || got.Channels[0].URL != hook {
			t.Errorf("after masked updates: %+v %v", got, err)
		}
		msg := a.do(t, call{method: "PUT", path: path, body: `{"name":"low","metric":"score","condition":"LESS_THAN","threshold":0.5,"channels":[{"type":"webhook","url":"https://u:p@hooks.example.test/x"}]}`}, 422, nil)
		if !strings.Contains(msg, "credentials") {
			t.Errorf("credentials in a webhook URL: %s", msg)
		}
		a.do(t, call{method: "PUT", path: path, body: `{"name":"low","metric":"score","condition":"LESS_THAN","threshold":0.5,"channels":[{"type":"webhook","url":"http://169.254.169.254/x"}]}`}, 422, nil)
	})
}
