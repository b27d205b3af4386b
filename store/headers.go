package store

import (
	"fmt"
	"strings"

	"tribunal/secret"
)

// Headers sent to somewhere Tribunal calls (a provider, an agent's MCP
// server or endpoint) share one set of rules: checked names, credentials
// always secret, secrets sealed at rest, masked on every read, and a masked
// value sent back kept only while it goes to the same origin.

// normalizeHeaders trims and checks headers; field prefixes error fields.
func normalizeHeaders(field string, hs []Header) error {
	seen := map[string]bool{}
	for i := range hs {
		h := &hs[i]
		h.Key = strings.TrimSpace(h.Key)
		f := fmt.Sprintf("%s[%d]", field, i)
		if h.Key == "" {
			return invalid(f+".key", "is required")
		}
		if strings.ContainsAny(h.Key, " :\r\n") {
			return invalid(f+".key", "is not a valid header name")
		}
		if strings.ContainsAny(h.Value, "\r\n") {
			return invalid(f+".value", "must not contain line breaks")
		}
		lk := strings.ToLower(h.Key)
		if seen[lk] {
			return invalid(f+".key", "%q appears twice", h.Key)
		}
		seen[lk] = true
		// Whoever sends it, a credential is never stored in clear.
		h.IsSecret = h.IsSecret || secret.CredentialHeader(h.Key)
	}
	return nil
}

// sealHeaders returns hs as stored: secret values sealed. A secret sent back
// empty or masked keeps the sealed value it had under the same key in old,
// if b allows it (secret.Binding.Keep).
func (s *Store) sealHeaders(field string, hs, old []Header, b secret.Binding) ([]Header, error) {
	out := make([]Header, len(hs))
	for i, h := range hs {
		stored, ok := storedSecret(h.Key, old)
		keep, err := b.Keep(h.Value, h.IsSecret, ok)
		if err != nil {
			return nil, invalid(fmt.Sprintf("%s[%d].value", field, i), "%q: %v", h.Key, err)
		}
		switch {
		case keep:
			h.Value = stored
		case h.IsSecret:
			if h.Value, err = s.box.Seal(h.Value); err != nil {
				return nil, err
			}
		}
		out[i] = h
	}
	return out, nil
}

// storedSecret returns the sealed value of the secret header named key.
func storedSecret(key string, old []Header) (string, bool) {
	for _, o := range old {
		if o.IsSecret && strings.EqualFold(o.Key, key) {
			return o.Value, true
		}
	}
	return "", false
}

// maskHeaders replaces each sealed value with its masked form (last 4
// characters), which needs the plain value, so it is done here and never
// stored. owner names what holds the headers in an error.
func (s *Store) maskHeaders(owner string, hs []Header) error {
	for i := range hs {
		if hs[i].IsSecret {
			v, err := s.box.Open(hs[i].Value)
			if err != nil {
				return fmt.Errorf("store: %s header %q: %w", owner, hs[i].Key, err)
			}
			hs[i].Value = secret.Mask(v)
		}
	}
	return nil
}

// openHeaders decrypts each sealed value, for a call; never show the result.
func (s *Store) openHeaders(owner string, hs []Header) error {
	for i := range hs {
		if hs[i].IsSecret {
			v, err := s.box.Open(hs[i].Value)
			if err != nil {
				return fmt.Errorf("store: %s header %q: %w", owner, hs[i].Key, err)
			}
			hs[i].Value = v
		}
	}
	return nil
}
