package llm

import (
	"context"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// unresponsiveAddr listens on loopback with a full accept queue, so new
// connections hang in the handshake: what a provider behind a dead route does.
func unresponsiveAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip("raw socket unavailable:", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	for range 16 { // fill the queue until a connect no longer completes
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			return addr
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("this kernel completes every handshake; cannot simulate a hanging connect")
	return ""
}

func TestConnectTimeoutIsPerProvider(t *testing.T) {
	addr := unresponsiveAddr(t)
	shared := NewHTTPClient(time.Minute, nil)
	c := New(Endpoint{BaseURL: "http://" + addr, ModelsEndpoint: "/v1/models", Timeout: time.Minute, ConnectTimeout: 500 * time.Millisecond}, shared)
	start := time.Now()
	_, err := c.Models(context.Background())
	if err == nil || !strings.Contains(err.Error(), "connect to "+addr) {
		t.Fatalf("err %v, want a connect error naming %s", err, addr)
	}
	// Bounded by the 0.5 s connect timeout, not the shared client's minute.
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("gave up after %v", took)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{{"2", 2 * time.Second}, {"0.5", 500 * time.Millisecond}, {"", 0}, {"soon", 0}} {
		if got := retryAfter(tc.in); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
