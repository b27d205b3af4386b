// Package spreadsheet keeps CSV cells from running as formulas when a file
// is opened in a spreadsheet, and reads such cells back as written.
//
// Text a model or a user wrote that starts with = + @ a tab or a carriage
// return, or with - and not a "- " list item or "--", would run as a
// formula (CSV injection). Defuse puts an apostrophe before it, as
// spreadsheets themselves do; Restore takes it away again, so that a file
// Tribunal exports imports back to the same text: Restore(Defuse(s)) == s
// for every s, including text that already starts with apostrophes.
package spreadsheet

import "strings"

// Defuse returns s, with an apostrophe before it when a spreadsheet would
// read it as a formula, or when it is such text behind apostrophes of its
// own (which Restore would otherwise take for Defuse's).
func Defuse(s string) string {
	if formula(strings.TrimLeft(s, "'")) {
		return "'" + s
	}
	return s
}

// Restore is the text Defuse, or a spreadsheet's own export, was given: a
// cell that starts with an apostrophe before formula text loses it. Other
// text is kept as written.
func Restore(s string) string {
	if rest, ok := strings.CutPrefix(s, "'"); ok && formula(strings.TrimLeft(rest, "'")) {
		return rest
	}
	return s
}

// formula says whether a spreadsheet would take s for a formula.
func formula(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '=', '+', '@', '\t', '\r':
		return true
	case '-':
		return len(s) > 1 && s[1] != ' ' && s[1] != '-'
	}
	return false
}
