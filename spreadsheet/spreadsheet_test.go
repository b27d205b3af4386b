package spreadsheet

import "testing"

func TestDefuse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"=HYPERLINK(\"http://evil\")", "'=HYPERLINK(\"http://evil\")"},
		{"+1", "'+1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"-2+3", "'-2+3"},
		{"- a list item", "- a list item"},
		{"-- a rule", "-- a rule"},
		{"-", "-"},
		{"'=already quoted by hand", "''=already quoted by hand"},
		{"'quoted text", "'quoted text"},
		{"a = b", "a = b"},
	} {
		if got := Defuse(tc.in); got != tc.want {
			t.Errorf("Defuse(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Restore(tc.want); got != tc.in {
			t.Errorf("Restore(%q) = %q, want %q", tc.want, got, tc.in)
		}
	}
	// A spreadsheet's own export defuses the same way.
	if got := Restore("'=1+1"); got != "=1+1" {
		t.Errorf("Restore('=1+1) = %q", got)
	}
}

// FuzzRoundTrip: whatever the text, Restore gives back what Defuse was
// given, and Defuse's output never starts a formula.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "=1", "''=1", "'x", "-x", "- x", "@", "\t", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := Defuse(s)
		if Restore(d) != s {
			t.Fatalf("Restore(Defuse(%q)) = %q", s, Restore(d))
		}
		if formula(d) {
			t.Fatalf("Defuse(%q) = %q starts a formula", s, d)
		}
	})
}
