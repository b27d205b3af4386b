package rubric

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A Violation is one thing a judge says the answer broke: a category and,
// in the judge's words, what and where.
type Violation struct {
	Category string `json:"category"`
	Detail   string `json:"detail"`
}

// The categories of a violation (TaskBench's, seed 004 §7). A judge's
// category outside these is read as ViolationOther.
const (
	ViolationUnderMin     = "under_min"
	ViolationOverMax      = "over_max"
	ViolationFormat       = "format"
	ViolationMissingField = "missing_field"
	ViolationOther        = "other"
)

// ViolationCategories lists the categories in the order pages show them.
var ViolationCategories = []string{ViolationUnderMin, ViolationOverMax, ViolationFormat, ViolationMissingField, ViolationOther}

// violationMeaning is what the judge is told each category means.
var violationMeaning = map[string]string{
	ViolationUnderMin:     "below a minimum the task sets (too few words, items, sections…)",
	ViolationOverMax:      "beyond a maximum the task sets (too many words, too long…)",
	ViolationFormat:       "the output format is not the one asked for (not valid JSON or CSV, wrong layout…)",
	ViolationMissingField: "a required field, column or part is absent",
	ViolationOther:        "any other constraint or instruction not respected",
}

// Bounds of what a verdict keeps: a judge that writes an essay per
// violation, or hundreds of them, cannot bloat the store or the pages.
const (
	MaxViolations      = 50
	MaxViolationDetail = 500 // characters
)

// violationsKey is the reply's field holding the violations, beside the scores.
const violationsKey = "violations"

// IsViolationCategory reports whether c is one of ViolationCategories.
func IsViolationCategory(c string) bool {
	_, ok := violationMeaning[c]
	return ok
}

// violationsSchema is the JSON schema of the violations list.
func violationsSchema() map[string]any {
	return map[string]any{
		"type": "array",
		"items": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"category": map[string]any{"type": "string", "enum": ViolationCategories},
				"detail":   map[string]any{"type": "string"},
			},
			"required":             []string{"category", "detail"},
			"additionalProperties": false,
		},
	}
}

// violationsPrompt tells the judge how to list violations.
func violationsPrompt() string {
	var b strings.Builder
	b.WriteString("Also list every constraint or instruction the answer violated, as \"violations\": an array of {\"category\", \"detail\"} objects (an empty array when it violated none). ")
	b.WriteString("Each detail says in one sentence what was violated and where. Categories:\n")
	for _, c := range ViolationCategories {
		fmt.Fprintf(&b, "- %s: %s\n", c, violationMeaning[c])
	}
	return b.String()
}

// violationsExample is the violations field in the reply format the prompt shows.
const violationsExample = `"violations": [{"category": "<under_min|over_max|format|missing_field|other>", "detail": "<what and where>"}]`

// parseViolations reads a reply's violations leniently: they never decide
// whether a verdict scores. An unknown category becomes "other", a bare
// string is an "other" with that detail, details are clipped, and what
// cannot be read is skipped with a note saying so.
func parseViolations(raw map[string]json.RawMessage) ([]Violation, string) {
	field, ok := raw[violationsKey]
	if !ok || string(field) == "null" {
		return nil, "the judge gave no violations list"
	}
	var items []json.RawMessage
	if err := json.Unmarshal(field, &items); err != nil {
		return nil, "the judge's violations were not a list; none were kept"
	}
	var out []Violation
	var notes []string
	for i, item := range items {
		if len(out) == MaxViolations {
			notes = append(notes, fmt.Sprintf("%d more violations were dropped (at most %d are kept)", len(items)-i, MaxViolations))
			break
		}
		v, ok := violationOf(item)
		if !ok {
			notes = append(notes, fmt.Sprintf("violation %d was neither an object nor text; skipped", i+1))
			continue
		}
		out = append(out, v)
	}
	return out, strings.Join(notes, "; ")
}

// violationOf reads one violation: an object {category, detail} or, as
// TaskBench's own judge writes them, a bare string.
func violationOf(item json.RawMessage) (Violation, bool) {
	var text string
	if json.Unmarshal(item, &text) == nil {
		return Violation{Category: ViolationOther, Detail: clip(text)}, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(item, &obj) != nil || obj == nil {
		return Violation{}, false
	}
	var category, detail string
	_ = json.Unmarshal(obj["category"], &category) // absent or not text: other
	category = strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(category)), "-", "_"), " ", "_")
	if !IsViolationCategory(category) {
		category = ViolationOther
	}
	if d, ok := obj["detail"]; ok && json.Unmarshal(d, &detail) != nil {
		detail = string(d) // a number or an object: keep its JSON text
	}
	return Violation{Category: category, Detail: clip(detail)}, true
}

// clip trims a detail and bounds it to MaxViolationDetail characters.
func clip(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if utf8.RuneCountInString(s) <= MaxViolationDetail {
		return s
	}
	r := []rune(s)
	return string(r[:MaxViolationDetail-1]) + "…"
}
