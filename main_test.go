package main

import (
	"context"
	"math"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

func TestParseConfigRefusesExposedWithoutToken(t *testing.T) {
	for _, name := range []string{"TRIBUNAL_ADDR", "TRIBUNAL_AUTH_TOKEN", "TRIBUNAL_INSECURE_NO_AUTH", "TRIBUNAL_ALLOWED_HOSTS"} {
		t.Setenv(name, "")
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr bool
	}{
		{"default loopback", nil, nil, false},
		{"localhost", nil, []string{"--addr", "localhost:9000"}, false},
		{"ipv6 loopback", nil, []string{"--addr", "[::1]:9000"}, false},
		{"127/8", nil, []string{"--addr", "127.0.0.2:9000"}, false},
		{"all interfaces", nil, []string{"--addr", "0.0.0.0:8080"}, true},
		{"empty host", nil, []string{"--addr", ":8080"}, true},
		{"ipv6 any", nil, []string{"--addr", "[::]:8080"}, true},
		{"a LAN address", map[string]string{"TRIBUNAL_ADDR": "192.168.1.5:8080"}, nil, true},
		{"a host name", nil, []string{"--addr", "tribunal.lan:8080"}, true},
		{"token flag", nil, []string{"--addr", "0.0.0.0:8080", "--auth-token", "s3cret"}, false},
		{"token variable", map[string]string{"TRIBUNAL_AUTH_TOKEN": "s3cret"}, []string{"--addr", "0.0.0.0:8080"}, false},
		{"insecure flag", nil, []string{"--addr", "0.0.0.0:8080", "--insecure-no-auth"}, false},
		{"insecure variable", map[string]string{"TRIBUNAL_INSECURE_NO_AUTH": "true"}, []string{"--addr", "0.0.0.0:8080"}, false},
		{"worker serves nothing", nil, []string{"worker", "--addr", "0.0.0.0:8080"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := parseConfig(tc.args)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil && (!strings.Contains(err.Error(), "TRIBUNAL_AUTH_TOKEN") || !strings.Contains(err.Error(), "--insecure-no-auth")) {
				t.Errorf("the error does not say how to set a token: %v", err)
			}
		})
	}
}

func TestParseConfigEdge(t *testing.T) {
	t.Setenv("TRIBUNAL_AUTH_TOKEN", "from-env")
	t.Setenv("TRIBUNAL_ALLOWED_HOSTS", "tribunal.example.com, ,10.0.0.7:8080")
	cfg, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AuthToken != "from-env" || !slices.Equal(cfg.AllowedHosts, []string{"tribunal.example.com", "10.0.0.7:8080"}) {
		t.Errorf("from the environment: token %q, hosts %q", cfg.AuthToken, cfg.AllowedHosts)
	}
	cfg, err = parseConfig([]string{"--auth-token", "from-flag", "--allowed-hosts", "a.example"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AuthToken != "from-flag" || !slices.Equal(cfg.AllowedHosts, []string{"a.example"}) {
		t.Errorf("flags do not win over the environment: token %q, hosts %q", cfg.AuthToken, cfg.AllowedHosts)
	}
}

func TestServerTimeouts(t *testing.T) {
	srv := newServer("127.0.0.1:0", http.NotFoundHandler(), context.Background())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("timeouts: header %s, read %s, write %s, idle %s", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
}

// The serving process gets a soft memory limit, unless GOMEMLIMIT sets one.
func TestLimitMemory(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	limitMemory(func(string) (string, bool) { return "1GiB", true })
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, the limit became %d", got)
	}
	limitMemory(func(string) (string, bool) { return "", false })
	if got := debug.SetMemoryLimit(-1); got != memoryLimit {
		t.Errorf("without GOMEMLIMIT, the limit is %d, want %d", got, memoryLimit)
	}
}
