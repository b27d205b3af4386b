package checks_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"tribunal/checks"
)

// runCase is one Run call and what it must give.
type runCase struct {
	name     string
	typ      string
	response string
	ref      string
	want     float64
	detail   string // substring the detail must contain, if set
}

func runTable(t *testing.T, cases []runCase, tol float64) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checks.Run(tc.typ, checks.Answer{Text: tc.response}, tc.ref)
			if err != nil {
				t.Fatalf("Run(%q, %q, %q) error: %v", tc.typ, tc.response, tc.ref, err)
			}
			if math.Abs(got.Score-tc.want) > tol {
				t.Errorf("Run(%q, %q, %q) score = %.10f, want %.10f (detail %q)", tc.typ, tc.response, tc.ref, got.Score, tc.want, got.Detail)
			}
			if !strings.Contains(got.Detail, tc.detail) {
				t.Errorf("detail = %q, want it to contain %q", got.Detail, tc.detail)
			}
		})
	}
}

func TestExactMatch(t *testing.T) {
	runTable(t, []runCase{
		{"same", checks.ExactMatch, "Paris", "Paris", 1, "exact match"},
		{"case and outer space", checks.ExactMatch, "  PARIS\n", "paris", 1, ""},
		{"inner whitespace", checks.ExactMatch, "New \t York", "new york", 1, ""},
		{"unicode fold", checks.ExactMatch, "ÄRGER ΟΔΟΣ", "ärger οδος", 1, ""},
		{"kelvin sign folds to k", checks.ExactMatch, "\u212Aelvin", "kelvin", 1, ""},
		{"extra words", checks.ExactMatch, "Paris, France", "Paris", 0, `expected "Paris", got "Paris, France"`},
		{"punctuation counts", checks.ExactMatch, "Paris.", "Paris", 0, ""},
	}, 0)
}

func TestContains(t *testing.T) {
	runTable(t, []runCase{
		{"substring any case", checks.Contains, "The capital is PARIS.", "paris", 1, `contains "paris"`},
		{"across line break", checks.Contains, "It is New\nYork.", "new york", 1, ""},
		{"unicode case", checks.Contains, "ÉCOLE normale", "école", 1, ""},
		{"absent", checks.Contains, "The capital is Lyon.", "Paris", 0, `does not contain "Paris"`},
	}, 0)
}

func TestRegex(t *testing.T) {
	runTable(t, []runCase{
		{"anchored digits", checks.Regex, "123", `^\d{3}$`, 1, `matched "123"`},
		{"anchored too long", checks.Regex, "1234", `^\d{3}$`, 0, "no match"},
		{"searched anywhere", checks.Regex, "answer: B) 42", `[A-D]\)`, 1, `matched "B)"`},
		{"case flag", checks.Regex, "PARIS", `(?i)paris`, 1, ""},
		{"case sensitive by default", checks.Regex, "PARIS", `paris`, 0, ""},
		{"empty match still matches", checks.Regex, "anything", `x*`, 1, ""},
	}, 0)
}

func TestRunErrors(t *testing.T) {
	for _, tc := range []struct{ name, typ, response, ref string }{
		{"unknown type", "bogus", "a", "a"},
		{"unknown type empty ref", "bogus", "a", ""},
		{"bad regex", checks.Regex, "a", "("},
		{"regex too long", checks.Regex, "a", strings.Repeat("a", checks.MaxPatternLen+1)},
		{"numeric ref without number", checks.Numeric, "42", "no digits here"},
		{"schema not JSON", checks.JSONSchema, "{}", "{not json"},
		{"schema invalid", checks.JSONSchema, "{}", `{"type": 5}`},
		{"schema remote ref", checks.JSONSchema, "{}", `{"$ref": "other.json"}`},
		{"schema file ref", checks.JSONSchema, "{}", `{"$ref": "file:///etc/passwd"}`},
		{"empty reference", checks.Contains, "a", "  "},
		{"empty reference exact", checks.ExactMatch, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checks.Run(tc.typ, checks.Answer{Text: tc.response}, tc.ref)
			if !errors.Is(err, checks.ErrInvalid) {
				t.Fatalf("Run(%q, %q, %.30q) error = %v, want ErrInvalid", tc.typ, tc.response, tc.ref, err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name, typ, ref string
		ok             bool
	}{
		{"every type with empty ref", checks.F1, "", true},
		{"unknown", "rouge_2", "", false},
		{"regex ok", checks.Regex, `^\d+$`, true},
		{"regex bad", checks.Regex, `(?P<`, false},
		{"regex too long", checks.Regex, strings.Repeat("x", checks.MaxPatternLen+1), false},
		{"numeric gsm8k", checks.Numeric, "so 9*2=18\n#### 18", true},
		{"numeric plain", checks.Numeric, "-3/4", true},
		{"numeric no number", checks.Numeric, "eighteen", false},
		{"schema ok", checks.JSONSchema, `{"type":"object","required":["a"]}`, true},
		{"schema fenced", checks.JSONSchema, "```json\n{\"type\":\"array\"}\n```", true},
		{"schema bad keyword value", checks.JSONSchema, `{"type":"objekt"}`, false},
		{"schema not json", checks.JSONSchema, `type: object`, false},
		{"json_valid ignores ref", checks.JSONValid, "anything", true},
		{"bleu any ref", checks.BLEU, "The cat.", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checks.Validate(tc.typ, tc.ref)
			if tc.ok && err != nil {
				t.Fatalf("Validate(%q, %q) = %v, want nil", tc.typ, tc.ref, err)
			}
			if !tc.ok && !errors.Is(err, checks.ErrInvalid) {
				t.Fatalf("Validate(%q, %q) = %v, want ErrInvalid", tc.typ, tc.ref, err)
			}
		})
	}
}

// Every listed type must run; a type added to Types but not to Run fails here.
func TestTypesAllRun(t *testing.T) {
	refs := map[string]string{checks.Regex: "a", checks.Numeric: "1", checks.JSONSchema: "{}",
		checks.ToolArgs: `{"tool": "a", "args": {}}`, checks.MaxToolCalls: "1"}
	for _, typ := range checks.Types {
		ref := refs[typ]
		if ref == "" {
			ref = "a"
		}
		if _, err := checks.Run(typ, checks.Answer{Text: "a 1 {}"}, ref); err != nil {
			t.Errorf("Run(%q) error: %v", typ, err)
		}
		if err := checks.Validate(typ, ref); err != nil {
			t.Errorf("Validate(%q) error: %v", typ, err)
		}
	}
	if len(checks.Types) != 16 {
		t.Errorf("len(Types) = %d, want 16", len(checks.Types))
	}
}
