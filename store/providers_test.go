package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tribunal/egress"
	"tribunal/store"
	"tribunal/store/storetest"
)

// wantInvalid fails unless err is a ValidationError on field whose message says want.
func wantInvalid(t *testing.T, what string, err error, field, want string) {
	t.Helper()
	var ve *store.ValidationError
	if !errors.As(err, &ve) || ve.Field != field || !strings.Contains(ve.Message, want) {
		t.Errorf("%s: err = %v, want a ValidationError on %s saying %q", what, err, field, want)
	}
}

// TestProviderSecretsBoundToBaseURL: a stored secret goes only where it was
// entered. Changing the base URL's scheme, host or port, or a secret
// header's key, needs the secret value again; a path change keeps it.
func TestProviderSecretsBoundToBaseURL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "https://api.example.com",
			Headers: []store.Header{{Key: "Authorization", Value: "Bearer sk-123456", IsSecret: true},
				{Key: "X-Team", Value: "team-secret-9876", IsSecret: true}}})
		if err != nil {
			t.Fatal(err)
		}
		masked := p.Headers[0].Value
		update := func(baseURL string, hs ...store.Header) error {
			_, err := st.UpdateProvider(ctx, p.ID, store.ProviderInput{Name: "p", BaseURL: baseURL, Headers: hs})
			return err
		}
		kept := func(what, want string) {
			t.Helper()
			got, err := st.ProviderWithSecrets(ctx, p.ID)
			if err != nil || got.Headers[0].Value != want {
				t.Errorf("%s: the stored secret is %+v (%v), want %q", what, got.Headers, err, want)
			}
		}
		for _, tc := range []struct{ name, url string }{
			{"another host", "https://attacker.example"},
			{"another scheme", "http://api.example.com"},
			{"another port", "https://api.example.com:8443"},
		} {
			err := update(tc.url, store.Header{Key: "Authorization", Value: masked, IsSecret: true})
			wantInvalid(t, tc.name+", masked", err, "headers[0].value", `"Authorization": the base URL changed, so enter the secret value again`)
			err = update(tc.url, store.Header{Key: "Authorization", Value: "", IsSecret: true})
			wantInvalid(t, tc.name+", empty", err, "headers[0].value", "the base URL changed")
		}
		kept("after refused moves", "Bearer sk-123456")

		// Every secret must be entered again, not only the first.
		err = update("https://attacker.example", store.Header{Key: "Authorization", Value: "Bearer new", IsSecret: true},
			store.Header{Key: "X-Team", Value: "", IsSecret: true})
		wantInvalid(t, "second secret kept on a move", err, "headers[1].value", `"X-Team": the base URL changed`)

		// A secret header renamed is a new secret.
		err = update("https://api.example.com", store.Header{Key: "X-Other", Value: masked, IsSecret: true})
		wantInvalid(t, "renamed key", err, "headers[0].value", "no secret value is stored")
		// A secret made plain while masked.
		err = update("https://api.example.com", store.Header{Key: "X-Team", Value: masked})
		wantInvalid(t, "made plain", err, "headers[0].value", "cannot become a plain value")

		// Path, case of the host and default port: the same destination.
		if err := update("https://API.example.com:443/v2", store.Header{Key: "authorization", Value: masked, IsSecret: true}); err != nil {
			t.Fatalf("path change: %v", err)
		}
		kept("after a path change", "Bearer sk-123456")
		// A new value may go anywhere.
		if err := update("https://other.example", store.Header{Key: "Authorization", Value: "Bearer other", IsSecret: true}); err != nil {
			t.Fatalf("move with a new value: %v", err)
		}
		kept("after a move with a new value", "Bearer other")
	})
}

// TestProviderCredentialHeadersAlwaysSecret: Authorization, X-Api-Key,
// Api-Key and Cookie are sealed whatever is_secret says.
func TestProviderCredentialHeadersAlwaysSecret(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "https://api.example.com",
			Headers: []store.Header{{Key: "authorization", Value: "Bearer sk-1"}, {Key: "X-API-Key", Value: "k-2"},
				{Key: "Api-Key", Value: "k-3"}, {Key: "Cookie", Value: "s=4"}, {Key: "X-Trace", Value: "plain"}}})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range p.Headers {
			if wantSecret := i < 4; h.IsSecret != wantSecret || (wantSecret && !strings.HasPrefix(h.Value, "••")) {
				t.Errorf("header %q: is_secret %v, value %q", h.Key, h.IsSecret, h.Value)
			}
		}
	})
}

// TestProviderURLChecks: credentials in the URL are refused, and so are
// addresses the egress policy forbids, when they are known at save.
func TestProviderURLChecks(t *testing.T) {
	// Subtests of distinct names: a '#' in a test's temp dir would cut the SQLite file name.
	t.Run("default", func(t *testing.T) {
		storetest.EachWithEgress(t, egress.Default, func(t *testing.T, st *store.Store) {
			ctx := context.Background()
			for _, tc := range []struct{ url, want string }{
				{"https://user:sk-1@api.example.com", "send them in a header"},
				{"http://169.254.169.254", "link-local or cloud metadata"},
				{"http://[fd00:ec2::254]", "link-local or cloud metadata"},
			} {
				_, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: tc.url})
				wantInvalid(t, tc.url, err, "base_url", tc.want)
			}
			// A local model is the common case; a name that does not resolve now may later.
			for _, u := range []string{"http://127.0.0.1:11434", "http://ollama.invalid:11434"} {
				if _, err := st.CreateProvider(ctx, store.ProviderInput{Name: u, BaseURL: u}); err != nil {
					t.Errorf("%s: %v", u, err)
				}
			}
		})
	})
	none, _ := egress.Parse("none")
	t.Run("none", func(t *testing.T) {
		storetest.EachWithEgress(t, none, func(t *testing.T, st *store.Store) {
			_, err := st.CreateProvider(context.Background(), store.ProviderInput{Name: "p", BaseURL: "http://10.0.0.5:8000"})
			wantInvalid(t, "private under none", err, "base_url", "--allow-private-egress")
		})
	})
}

// TestProviderEndpointsArePaths: an endpoint cannot name another host than
// base_url, to which the provider's secrets are bound.
func TestProviderEndpointsArePaths(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		for _, ep := range []string{"//evil.example/v1/models", "/http://127.0.0.1:9/x", "/v1\\models", "v1/models"} {
			_, err := st.CreateProvider(context.Background(), store.ProviderInput{Name: "p", BaseURL: "https://api.example.com", ModelsEndpoint: ep})
			wantInvalid(t, ep, err, "models_endpoint", "path starting with /")
		}
		if _, err := st.CreateProvider(context.Background(), store.ProviderInput{Name: "p", BaseURL: "https://api.example.com",
			ModelsEndpoint: "/api/v1/models"}); err != nil {
			t.Errorf("a plain path: %v", err)
		}
	})
}
