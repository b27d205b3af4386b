package importer

import (
	"regexp"
	"slices"
	"strings"

	"tribunal/checks"
	"tribunal/store"
)

// GSM8K answers (openai/grade-school-math) end with the final number after
// "####": "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\n… #### 18".
// A reference of that shape, in any format, is split:
//   - the number after #### becomes the reference, without thousands
//     separators ("1,234" → "1234"), so a numeric check can compare it;
//   - the worked solution before #### becomes the task's excellent answer
//     (the judge sees it as "Reference: excellent answer"), or
//     Metadata["rationale"] when the row has its own excellent answer (and
//     no rationale key); the calculator annotations GSM8K's authors added
//     for training ("<<48/2=24>>") are removed, since they repeat the
//     arithmetic next to them and no model or judge should read them;
//   - a numeric check is added unless the task has one.
//
// A "####" followed by anything but one number is left as it is.
var (
	gsm8kFinal      = regexp.MustCompile(`^[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$`)
	gsm8kAnnotation = regexp.MustCompile(`<<[^<>\n]*>>`)
)

// gsm8k rewrites t when its reference is a GSM8K answer, and reports whether it was.
func gsm8k(t *store.TaskInput) bool {
	i := strings.LastIndex(t.Reference, "####")
	if i < 0 {
		return false
	}
	final := strings.TrimSpace(t.Reference[i+len("####"):])
	if !gsm8kFinal.MatchString(final) {
		return false
	}
	rationale := strings.TrimSpace(gsm8kAnnotation.ReplaceAllString(t.Reference[:i], ""))
	t.Reference = strings.ReplaceAll(final, ",", "")
	switch {
	case rationale == "":
	case t.Excellent == "":
		t.Excellent = rationale
	default:
		if _, taken := t.Metadata["rationale"]; !taken {
			if t.Metadata == nil {
				t.Metadata = map[string]string{}
			}
			t.Metadata["rationale"] = rationale
		}
	}
	if !slices.ContainsFunc(t.Checks, func(c store.Check) bool { return strings.TrimSpace(c.Type) == checks.Numeric }) {
		t.Checks = append(t.Checks, store.Check{Type: checks.Numeric})
	}
	return true
}
