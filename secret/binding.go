package secret

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Masked reports whether a value is a mask made by Mask, sent back unchanged.
func Masked(value string) bool { return strings.HasPrefix(value, "••••") }

// Binding ties secret values to where they are sent: the URL before an
// update (Old) and after it (New), and Name, what the user calls that URL.
type Binding struct {
	Name     string
	Old, New string
}

// Keep is the rule for a value sent back on an update of something holding
// secrets (a provider's headers, an alert's webhook). A new value replaces
// the stored one (keep is false). The mask, or an empty value, keeps the
// stored secret (keep is true), but only if one is stored under that name
// and it would still go to the same origin (scheme, host and port):
// otherwise whoever may edit the URL could have the secret sent to a host
// of their choosing without ever knowing it. A mask cannot become a plain
// value either. Errors are worded for the user.
func (b Binding) Keep(value string, isSecret, stored bool) (keep bool, err error) {
	masked := Masked(value)
	switch {
	case !isSecret && masked:
		return false, errors.New("a masked secret cannot become a plain value, so enter the value again")
	case !isSecret || (value != "" && !masked):
		return false, nil
	case !stored:
		return false, errors.New("no secret value is stored under this name, so enter one")
	case !SameOrigin(b.Old, b.New):
		return false, fmt.Errorf("the %s changed, so enter the secret value again", b.Name)
	}
	return true, nil
}

// SameOrigin reports whether two URLs reach the same scheme, host and port;
// the case of the host and an explicit default port make no difference.
func SameOrigin(a, b string) bool {
	oa, ok := origin(a)
	ob, okb := origin(b)
	return ok && okb && oa == ob
}

func origin(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return scheme + "://" + host + ":" + port, true
}

// credentialHeaders always carry credentials (lower case).
var credentialHeaders = []string{"authorization", "x-api-key", "api-key", "cookie"}

// CredentialHeader reports whether a header always carries a credential, so
// its value is stored as a secret whatever the user said.
func CredentialHeader(key string) bool {
	return slices.Contains(credentialHeaders, strings.ToLower(strings.TrimSpace(key)))
}
