package checks_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"tribunal/checks"
)

// fuzzType maps a fuzzed byte to a check type, with a few unknown names.
func fuzzType(b byte) string {
	all := append(append([]string{}, checks.Types...), "", "EXACT_MATCH", "rouge")
	return all[int(b)%len(all)]
}

// FuzzRun: Run never panics, a score is always in [0,1], an error is always
// ErrInvalid with a zero Result, a definition Validate accepts always runs,
// and the symmetric metrics (f1, rouge_l) are symmetric.
func FuzzRun(f *testing.F) {
	for i := range checks.Types {
		f.Add(byte(i), "The answer is $1,234.50 (3/4)", "#### 1234.5")
		f.Add(byte(i), "```json\n{\"a\": [1, -2e3, \"x\"]}\n```", `{"type":"object","properties":{"a":{"type":"array"}}}`)
		f.Add(byte(i), "İstanbul &amp; the cat\x1csat -- 2019-2020.", `The (cat) sat, 3.14 \boxed{\frac{1}{2}}`)
		f.Add(byte(i), "", "")
		f.Add(byte(i), "a a a a", "(?i)^a+$")
	}
	f.Fuzz(func(t *testing.T, tb byte, response, ref string) {
		typ := fuzzType(tb)
		got, err := checks.Run(typ, response, ref)
		if err != nil {
			if !errors.Is(err, checks.ErrInvalid) {
				t.Fatalf("Run(%q) error %v does not wrap ErrInvalid", typ, err)
			}
			if got != (checks.Result{}) {
				t.Fatalf("Run(%q) returned %+v with error %v", typ, got, err)
			}
			if strings.TrimSpace(ref) != "" && checks.Validate(typ, ref) == nil {
				t.Fatalf("Validate(%q, %q) accepted a definition Run rejects: %v", typ, ref, err)
			}
			return
		}
		if math.IsNaN(got.Score) || got.Score < 0 || got.Score > 1 {
			t.Fatalf("Run(%q, %q, %q) score %v out of [0,1]", typ, response, ref, got.Score)
		}
		if got.Detail == "" && typ != checks.Regex {
			t.Fatalf("Run(%q) gave an empty detail", typ)
		}
		if (typ == checks.F1 || typ == checks.RougeL) && strings.TrimSpace(response) != "" {
			back, err := checks.Run(typ, ref, response)
			if err != nil || math.Abs(back.Score-got.Score) > 1e-12 {
				t.Fatalf("%s not symmetric: %v vs %v (%v)", typ, got.Score, back.Score, err)
			}
		}
	})
}

// FuzzSelfMatch: an answer identical to the reference gets full marks from
// every check that compares text, whatever the text.
func FuzzSelfMatch(f *testing.F) {
	f.Add("The cat sat on the mat.")
	f.Add("  MiXeD\tcase\n")
	f.Add("İ\x1c“the”")
	f.Fuzz(func(t *testing.T, s string) {
		if strings.TrimSpace(s) == "" {
			return
		}
		for _, typ := range []string{checks.ExactMatch, checks.Contains, checks.F1, checks.BLEU, checks.RougeL} {
			got, err := checks.Run(typ, s, s)
			if err != nil {
				t.Fatalf("Run(%q) on %q: %v", typ, s, err)
			}
			if got.Score == 1 {
				continue
			}
			// BLEU and ROUGE-L give 0 when the text has no tokens at all.
			if got.Score == 0 && (typ == checks.BLEU && strings.Contains(got.Detail, "0/0") ||
				typ == checks.RougeL && strings.Contains(got.Detail, "no tokens")) {
				continue
			}
			t.Fatalf("Run(%q, s, s) = %+v for s = %q, want 1", typ, got, s)
		}
	})
}
