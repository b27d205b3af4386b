package trajectory_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"tribunal/trajectory"
)

// TestArgsRoundTrip: valid JSON arguments are kept as JSON, broken ones as
// the string sent, and OpenAI's string form decodes to the same arguments.
func TestArgsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in   trajectory.Args
		want string
	}{
		{`{"city": "Paris"}`, `{"city":"Paris"}`},
		{`{"query": "unterminated`, `"{\"query\": \"unterminated"`},
		{``, `""`},
		{`[1, 2]`, `[1,2]`},
	} {
		b, err := json.Marshal(trajectory.Call{Name: "t", Arguments: tc.in})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"arguments":`+tc.want) {
			t.Errorf("%q marshals to %s, want arguments %s", tc.in, b, tc.want)
		}
		var back trajectory.Call
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(b) {
			t.Errorf("round trip of %q: %s then %s", tc.in, b, again)
		}
	}
	var c trajectory.Call
	if err := json.Unmarshal([]byte(`{"name":"calc","arguments":"{\"x\": 1}"}`), &c); err != nil {
		t.Fatal(err)
	}
	if m, ok := c.Arguments.Object(); !ok || m["x"] != 1.0 {
		t.Errorf("string-form arguments = %q, object %v %v", c.Arguments, m, ok)
	}
}

// TestCompact: one line per call, errors marked, long results clipped on a
// rune boundary.
func TestCompact(t *testing.T) {
	calls := trajectory.Calls{
		{Turn: 1, Name: "search", Arguments: `{"q":"x"}`, Result: "found\nthree"},
		{Turn: 2, Name: "fail", Arguments: ``, Result: "no such city", IsError: true},
		{Turn: 3, Name: "big", Arguments: `{}`, Result: strings.Repeat("é", 600)},
	}
	got := calls.Compact()
	lines := strings.Split(got, "\n")
	if len(lines) != 3 || lines[0] != `1. [turn 1] search({"q":"x"}) → found three` || !strings.Contains(lines[1], "→ ERROR: no such city") {
		t.Fatalf("compact =\n%s", got)
	}
	if !strings.Contains(lines[2], "more bytes)") || !json.Valid([]byte(`"`+strings.ReplaceAll(lines[2], `"`, `\"`)+`"`)) {
		t.Errorf("long result not clipped cleanly: %q", lines[2][len(lines[2])-40:])
	}
	if calls.Errors() != 1 || strings.Join(calls.Names(), ",") != "search,fail,big" {
		t.Errorf("errors %d, names %v", calls.Errors(), calls.Names())
	}
	if (trajectory.Calls{}).Compact() != "" {
		t.Error("no calls should compact to nothing")
	}
}

// FuzzArgs: whatever a model writes as arguments survives a round trip
// through the stored JSON unchanged in meaning.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":`, ``, `null`, `"x"`, "\xff", `[{"b":[1,2,{"c":null}]}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := json.Marshal(trajectory.Call{Arguments: trajectory.Args(s)})
		if err != nil {
			t.Fatalf("marshal %q: %v", s, err)
		}
		var back trajectory.Call
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		again, err := json.Marshal(back)
		if err != nil || string(again) != string(b) {
			t.Fatalf("%q: %s then %s (%v)", s, b, again, err)
		}
	})
}

// TestCompactWithin: a long trajectory is cut on a rune boundary with a
// note; a short one is left as it is.
func TestCompactWithin(t *testing.T) {
	var calls trajectory.Calls
	for range 400 {
		calls = append(calls, trajectory.Call{Turn: 1, Name: "read", Arguments: `{"path": "/x"}`, Result: strings.Repeat("é", 400)})
	}
	const limit = 64 << 10
	got := calls.CompactWithin(limit)
	if len(got) > limit+100 || !strings.Contains(got, "more bytes of tool calls not shown") || !strings.HasPrefix(got, "1. [turn 1] read") || !utf8.ValidString(got) {
		t.Errorf("clipped trajectory of %d bytes ends %q", len(got), got[max(0, len(got)-80):])
	}
	if short := calls[:2].CompactWithin(limit); short != calls[:2].Compact() {
		t.Errorf("a short trajectory changed: %q", short)
	}
}
