package secret_test

import (
	"strings"
	"testing"

	"tribunal/secret"
)

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://api.openai.com", "https://API.OpenAI.com:443/v1", true},
		{"http://127.0.0.1:11434", "http://127.0.0.1:11434/api", true},
		{"http://example.com", "http://example.com:80", true},
		{"https://api.openai.com", "http://api.openai.com", false},
		{"https://api.openai.com", "https://api.openai.com:8443", false},
		{"https://api.openai.com", "https://evil.example", false},
		{"https://api.openai.com", "not a url", false},
	} {
		if got := secret.SameOrigin(tc.a, tc.b); got != tc.same {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func TestBindingKeep(t *testing.T) {
	same := secret.Binding{Name: "base URL", Old: "https://api.example.com", New: "https://api.example.com/v2"}
	moved := secret.Binding{Name: "base URL", Old: "https://api.example.com", New: "https://evil.example"}
	mask := secret.Mask("sk-123456")
	for _, tc := range []struct {
		name            string
		b               secret.Binding
		value           string
		isSecret, saved bool
		keep            bool
		err             string
	}{
		{"new value", moved, "sk-new", true, true, false, ""},
		{"mask, same origin", same, mask, true, true, true, ""},
		{"empty, same origin", same, "", true, true, true, ""},
		{"mask, moved", moved, mask, true, true, false, "the base URL changed"},
		{"empty, moved", moved, "", true, true, false, "the base URL changed"},
		{"mask, nothing stored", same, mask, true, false, false, "no secret value is stored"},
		{"mask made plain", same, mask, false, true, false, "cannot become a plain value"},
		{"plain value", moved, "text", false, false, false, ""},
	} {
		keep, err := tc.b.Keep(tc.value, tc.isSecret, tc.saved)
		if keep != tc.keep || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: Keep = %v, %v; want %v, %q", tc.name, keep, err, tc.keep, tc.err)
		}
	}
}
