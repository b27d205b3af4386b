package schedule

import (
	"testing"
	"time"
)

// FuzzParse: no expression panics or hangs the parser, and a spec that
// parses yields occurrences that move strictly forward.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0 0 9 * * *", "*/5 * * * * *", "0 0 9 * * MON-FRI", "30 9 * * 1-7/2", "@every 1h",
		"0 0 12 ? * SUN", "5-59/7 0,30 */2 1-15 JAN-JUN 0-7", "TZ=", "0-", "@every -1s", "1-1/0 * * * *", "7-1 * * * * *"} {
		f.Add(s, "UTC")
	}
	f.Add("0 30 2 * * *", "Europe/Rome")
	f.Fuzz(func(t *testing.T, expr, tz string) {
		spec, err := Parse(expr, tz)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q, %q) error of type %T", expr, tz, err)
			}
			return
		}
		at := time.Date(2026, 1, 22, 7, 30, 0, 0, time.UTC)
		for range 3 {
			n := spec.Next(at)
			if n.IsZero() {
				return
			}
			if !n.After(at) {
				t.Fatalf("Parse(%q, %q).Next(%v) = %v, not later", expr, tz, at, n)
			}
			at = n
		}
	})
}
