package llm

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/egress"
)

// TestEgressPolicy: a provider's connections obey the egress policy, and a
// redirect to another origin is refused before its secret headers follow.
func TestEgressPolicy(t *testing.T) {
	client := NewHTTPClient(time.Second, egress.Default)
	meta := New(Endpoint{BaseURL: "http://169.254.169.254", ModelsEndpoint: "/latest/meta-data/"}, client)
	if _, err := meta.Models(context.Background()); err == nil || !strings.Contains(err.Error(), "cloud metadata") {
		t.Errorf("metadata address: err = %v", err)
	}

	var reached atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Store(true)
		w.Write([]byte(`{"data":[]}`))
	}))
	defer elsewhere.Close()
	_, port, _ := net.SplitHostPort(elsewhere.Listener.Addr().String())
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	c := New(Endpoint{BaseURL: redirecting.URL, ModelsEndpoint: "/v1/models", Headers: map[string]string{"X-Api-Key": "k-1"}}, client)
	if _, err := c.Models(context.Background()); err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("cross-origin redirect: err = %v", err)
	}
	if reached.Load() {
		t.Error("the redirect was followed to another origin")
	}
}
