package egress_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"tribunal/egress"
)

func TestCheck(t *testing.T) {
	none, err := egress.Parse("none")
	if err != nil {
		t.Fatal(err)
	}
	both, err := egress.Parse(" Providers , webhooks")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr                    string
		none, dflt, dfltWebhook bool // allowed to providers under none, default; to webhooks under default
		both                    bool
	}{
		{"8.8.8.8", true, true, true, true},
		{"2606:4700::1111", true, true, true, true},
		{"169.254.169.254", false, false, false, false},
		{"::ffff:169.254.169.254", false, false, false, false},
		{"64:ff9b::a9fe:a9fe", false, false, false, false},
		{"fe80::1", false, false, false, false},
		{"fd00:ec2::254", false, false, false, false},
		{"100.100.100.200", false, false, false, false},
		{"127.0.0.1", false, true, false, true},
		{"::1", false, true, false, true},
		{"10.1.2.3", false, true, false, true},
		{"172.16.0.1", false, true, false, true},
		{"192.168.1.1", false, true, false, true},
		{"fc00::1", false, true, false, true},
		{"0.0.0.0", false, true, false, true},
		{"100.64.0.1", false, true, false, true},
	} {
		a := netip.MustParseAddr(tc.addr)
		for _, c := range []struct {
			name string
			p    *egress.Policy
			kind egress.Kind
			want bool
		}{
			{"none", none, egress.Providers, tc.none},
			{"default", egress.Default, egress.Providers, tc.dflt},
			{"nil", nil, egress.Providers, tc.dflt},
			{"default webhooks", egress.Default, egress.Webhooks, tc.dfltWebhook},
			{"both webhooks", both, egress.Webhooks, tc.both},
		} {
			err := c.p.Check(c.kind, a)
			if (err == nil) != c.want {
				t.Errorf("%s: Check(%s, %s) = %v, want allowed %v", c.name, c.kind, tc.addr, err, c.want)
			}
			if err != nil && !errors.Is(err, egress.ErrForbidden) {
				t.Errorf("%s: %v does not match ErrForbidden", tc.addr, err)
			}
		}
	}
	if _, err := egress.Parse("providers,mcp"); err == nil {
		t.Error("Parse accepted an unknown kind")
	}
	if got := both.String(); got != "providers,webhooks" {
		t.Errorf("String() = %q", got)
	}
}

// TestCheckURL: at save, IP literals and names that resolve are checked; a
// name that does not resolve passes (it may be down only for now).
func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		url  string
		kind egress.Kind
		ok   bool
	}{
		{"http://169.254.169.254/latest/meta-data/", egress.Providers, false},
		{"http://[fe80::1]:80/", egress.Providers, false},
		{"http://127.0.0.1:11434", egress.Providers, true},
		{"http://127.0.0.1:8080/hook", egress.Webhooks, false},
		{"http://localhost:8080/hook", egress.Webhooks, false},
		{"https://no-such-host.invalid/hook", egress.Webhooks, true},
	} {
		err := egress.Default.CheckURL(ctx, tc.kind, tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%s, %s) = %v, want ok %v", tc.kind, tc.url, err, tc.ok)
		}
	}
}

// TestDialContext: the address actually dialled is checked, whatever name
// led to it.
func TestDialContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	client := func(p *egress.Policy, kind egress.Kind) *http.Client {
		return &http.Client{Transport: &http.Transport{Proxy: p.Proxy(kind),
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return p.DialContext(ctx, kind, net.Dialer{Timeout: time.Second}, network, addr)
			}}}
	}
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	viaName := "http://localhost:" + port + "/"
	if _, err := client(egress.Default, egress.Webhooks).Get(viaName); !errors.Is(err, egress.ErrForbidden) {
		t.Errorf("webhook to localhost under the default policy: err = %v, want ErrForbidden", err)
	}
	res, err := client(egress.AllowPrivate(egress.Webhooks), egress.Webhooks).Get(viaName)
	if err != nil {
		t.Fatalf("webhook to localhost when allowed: %v", err)
	}
	res.Body.Close()
}
