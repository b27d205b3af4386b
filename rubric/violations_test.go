package rubric

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseVerdictViolations(t *testing.T) {
	long := strings.Repeat("é", MaxViolationDetail+20)
	many := make([]string, MaxViolations+3)
	for i := range many {
		many[i] = `{"category": "format", "detail": "d"}`
	}
	for _, tc := range []struct {
		name, violations string
		want             []Violation
		note             string
	}{
		{"listed", `[{"category": "under_min", "detail": "80 words, 100 asked"}, {"category": "missing_field", "detail": "no \"title\""}]`,
			[]Violation{{ViolationUnderMin, "80 words, 100 asked"}, {ViolationMissingField, `no "title"`}}, ""},
		{"none", `[]`, nil, ""},
		{"unknown category", `[{"category": "tone", "detail": "rude"}]`, []Violation{{ViolationOther, "rude"}}, ""},
		{"category spelt loosely", `[{"category": " Over-Max ", "detail": "x"}]`, []Violation{{ViolationOverMax, "x"}}, ""},
		{"no category", `[{"detail": "x"}]`, []Violation{{ViolationOther, "x"}}, ""},
		{"bare strings as TaskBench writes them", `["Segment 3 is 9 minutes"]`, []Violation{{ViolationOther, "Segment 3 is 9 minutes"}}, ""},
		{"detail not text", `[{"category": "format", "detail": 42}]`, []Violation{{ViolationFormat, "42"}}, ""},
		{"item of no kind", `[7, {"category": "format", "detail": "x"}]`, []Violation{{ViolationFormat, "x"}}, "violation 1 was neither an object nor text; skipped"},
		{"not a list", `"none"`, nil, "the judge's violations were not a list; none were kept"},
		{"null", `null`, nil, "the judge gave no violations list"},
		{"long detail", `[{"category": "other", "detail": "` + long + `"}]`,
			[]Violation{{ViolationOther, strings.Repeat("é", MaxViolationDetail-1) + "…"}}, ""},
		{"too many", "[" + strings.Join(many, ",") + "]", slices.Repeat([]Violation{{ViolationFormat, "d"}}, MaxViolations),
			"3 more violations were dropped (at most 50 are kept)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply := `{"score": 7, "reasoning": "ok", "violations": ` + tc.violations + `}`
			v, err := ParseVerdict(reply, one, 1, 10, true)
			if err != nil {
				t.Fatalf("ParseVerdict: %v (a violations list never fails a verdict)", err)
			}
			if v.Overall != 7 || !slices.Equal(v.Violations, tc.want) || v.Note != tc.note {
				t.Fatalf("got %+v note %q; want %+v note %q", v.Violations, v.Note, tc.want, tc.note)
			}
		})
	}
	t.Run("absent", func(t *testing.T) {
		v, err := ParseVerdict(`{"score": 7, "reasoning": "ok"}`, one, 1, 10, true)
		if err != nil || v.Violations != nil || v.Note != "the judge gave no violations list" {
			t.Fatalf("got %+v, %v", v, err)
		}
	})
	t.Run("beside several metrics", func(t *testing.T) {
		metrics := []Metric{{Name: "accuracy", Weight: 0.4}, {Name: "format", Weight: 0.3}, {Name: "compliance", Weight: 0.3}}
		v, err := ParseVerdict(`{"accuracy": {"score": 80, "reasoning": "a"}, "format": {"score": 90, "reasoning": "f"},
			"compliance": {"score": 60, "reasoning": "c"}, "violations": [{"category": "over_max", "detail": "too long"}]}`, metrics, 0, 100, true)
		if err != nil || len(v.Violations) != 1 || v.Violations[0].Category != ViolationOverMax || v.Overall < 76.999 || v.Overall > 77.001 {
			t.Fatalf("got %+v, %v; want overall 77 and one over_max", v, err)
		}
	})
	t.Run("not asked", func(t *testing.T) {
		v, err := ParseVerdict(`{"score": 7, "reasoning": "ok", "violations": [{"category": "format", "detail": "x"}]}`, one, 1, 10, false)
		if err != nil || v.Violations != nil || v.Note != "" {
			t.Fatalf("a style that does not ask keeps no violations: %+v, %v", v, err)
		}
	})
}

func TestSchemaAndPromptAskForViolations(t *testing.T) {
	metrics := BuiltinMetrics[:2]
	for _, ms := range [][]Metric{one, metrics} {
		var s struct {
			Required   []string `json:"required"`
			Properties map[string]struct {
				Items struct {
					Properties struct {
						Category struct {
							Enum []string `json:"enum"`
						} `json:"category"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(Schema(ms, 0, 100, true), &s); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(s.Required, "violations") || !slices.Equal(s.Properties["violations"].Items.Properties.Category.Enum, ViolationCategories) {
			t.Errorf("schema of %d metric(s) = %+v; want a required violations list with the five categories", len(ms), s)
		}
		if strings.Contains(string(Schema(ms, 0, 100, false)), "violations") {
			t.Errorf("a style that does not ask for violations has them in its schema")
		}
		p := SystemPrompt("", "", ms, 0, 100, true)
		for _, c := range ViolationCategories {
			if !strings.Contains(p, "- "+c+": ") {
				t.Errorf("the prompt does not explain category %s:\n%s", c, p)
			}
		}
		if !strings.Contains(p, `"violations": [{"category"`) || strings.Contains(SystemPrompt("", "", ms, 0, 100, false), "violations") {
			t.Errorf("the reply format asks for violations only when the style does:\n%s", p)
		}
	}
}

// FuzzParseVerdict checks the parser never panics and never accepts a
// verdict outside the schema, whatever a model replies, and that a
// violations list, however malformed, neither changes the scores nor
// escapes its bounds.
func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{`{"score": 7, "reasoning": "ok"}`, "```json\n{\"score\":1,\"reasoning\":\"x\"}```",
		`{"score": "10", "reasoning": "\u00e9"}`, `{{{`, `{"a":"}"}`, `{"score": 1e400, "reasoning":"x"}`, ``,
		`{"accuracy": {"score": 3, "reasoning": "r"}, "coherence": {"score": 5, "reasoning": "r"}}`,
		`{"score": 7, "reasoning": "ok", "violations": [{"category": "format", "detail": "x"}, "y", 3, null, {"category": 5}]}`,
		`{"score": 7, "reasoning": "ok", "violations": {"category": "format"}}`,
		`{"score": 7, "reasoning": "ok", "violations": [{"category": "under_min", "detail": "\xff\xfe"}]}`} {
		f.Add(s)
	}
	two := []Metric{{Name: "accuracy", Weight: 1}, {Name: "coherence", Weight: 2}}
	f.Fuzz(func(t *testing.T, in string) {
		for _, metrics := range [][]Metric{one, two} {
			v, err := ParseVerdict(in, metrics, 1, 10, false)
			asked, askErr := ParseVerdict(in, metrics, 1, 10, true)
			if (err == nil) != (askErr == nil) {
				t.Fatalf("violations decided whether %q scores: %v vs %v", in, err, askErr)
			}
			if err != nil {
				if !errors.Is(err, ErrBadVerdict) || !errors.Is(askErr, ErrBadVerdict) {
					t.Fatalf("error %v / %v is not ErrBadVerdict", err, askErr)
				}
				continue
			}
			if len(v.Scores) != len(metrics) || v.Overall < 1 || v.Overall > 10 {
				t.Fatalf("accepted out-of-schema verdict %+v from %q", v, in)
			}
			for _, s := range v.Scores {
				if s.Score < 1 || s.Score > 10 || strings.TrimSpace(s.Reasoning) == "" {
					t.Fatalf("accepted out-of-schema score %+v from %q", s, in)
				}
			}
			if v.Violations != nil || v.Note != "" {
				t.Fatalf("violations read when not asked: %+v", v)
			}
			if asked.Overall != v.Overall || !slices.Equal(asked.Scores, v.Scores) {
				t.Fatalf("violations changed the scores of %q: %+v vs %+v", in, asked, v)
			}
			if len(asked.Violations) > MaxViolations {
				t.Fatalf("%d violations kept", len(asked.Violations))
			}
			for _, x := range asked.Violations {
				if !IsViolationCategory(x.Category) || utf8.RuneCountInString(x.Detail) > MaxViolationDetail || !utf8.ValidString(x.Detail) {
					t.Fatalf("violation out of bounds: %+v from %q", x, in)
				}
			}
		}
	})
}
