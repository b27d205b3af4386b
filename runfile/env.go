package runfile

import (
	"regexp"
	"strings"
)

// envRefs matches ${NAME} and ${NAME:-default}.
var envRefs = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandEnv replaces ${NAME} (and ${NAME:-default}, used when NAME is unset
// or empty) from lookup; $${ writes a literal ${. It returns the variables
// that are missing and, for a malformed reference, what is wrong.
func expandEnv(s string, lookup func(string) (string, bool)) (out string, missing []string, bad string) {
	if !strings.Contains(s, "${") {
		return s, nil, ""
	}
	const escaped = "\x00dollar-brace\x00"
	s = strings.ReplaceAll(s, "$${", escaped)
	out = envRefs.ReplaceAllStringFunc(s, func(ref string) string {
		m := envRefs.FindStringSubmatch(ref)
		v, ok := lookup(m[1])
		if ok && v != "" {
			return v
		}
		if m[2] != "" {
			return m[3]
		}
		missing = append(missing, m[1])
		return ""
	})
	if strings.Contains(out, "${") {
		bad = "a ${ is not a valid reference: write ${NAME} with letters, digits and _ (or $${ for a literal ${)"
	}
	return strings.ReplaceAll(out, escaped, "${"), missing, bad
}
