package checks

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"
)

// MaxTokens caps each side of f1, bleu and rouge_l. ROUGE-L's longest common
// subsequence is O(n·m), so an unbounded response could stall a worker;
// 4096 tokens is far above a normal answer and costs a few milliseconds.
const MaxTokens = 4096

// maxInputBytes bounds the text handed to the tokenizers (and the tail of a
// response read by numeric). 64 KiB holds well over MaxTokens normal tokens
// and keeps the regex-based BLEU tokenizer to a few milliseconds.
const maxInputBytes = 64 << 10

// capText cuts s to maxInputBytes and reports whether it did.
func capText(s string) (string, bool) {
	if len(s) <= maxInputBytes {
		return s, false
	}
	return s[:maxInputBytes], true
}

// capTokens cuts toks to MaxTokens and reports whether it did.
func capTokens(toks []string, cut bool) ([]string, bool) {
	if len(toks) > MaxTokens {
		return toks[:MaxTokens], true
	}
	return toks, cut
}

// tokenPair tokenizes both sides within the input and token caps, and
// reports whether either was cut.
func tokenPair(response, ref string, tokenize func(string) []string) (pred, want []string, cut bool) {
	resp, cut1 := capText(response)
	gold, cut2 := capText(ref)
	pred, cut = capTokens(tokenize(resp), cut1 || cut2)
	want, cut = capTokens(tokenize(gold), cut)
	return pred, want, cut
}

func truncNote(cut bool) string {
	if cut {
		return fmt.Sprintf("; long input truncated (limit %d tokens, %d KiB)", MaxTokens, maxInputBytes>>10)
	}
	return ""
}

// --- f1, precision, recall ---------------------------------------------------

// overlap is the token overlap of a response with its reference, in SQuAD's
// tokens (squadTokens) compared as bags: f1, precision and recall are three
// readings of the one count, so they can never disagree on what a token is.
type overlap struct {
	same, pred, want int // shared tokens, response tokens, reference tokens
	cut              bool
}

func tokenOverlap(response, ref string) overlap {
	pred, want, cut := tokenPair(response, ref, squadTokens)
	counts := make(map[string]int, len(want))
	for _, t := range want {
		counts[t]++
	}
	same := 0
	for _, t := range pred {
		if counts[t] > 0 {
			counts[t]--
			same++
		}
	}
	return overlap{same: same, pred: len(pred), want: len(want), cut: cut}
}

// empty scores an overlap with an empty side as the evaluate-v2.0 script
// does: two empty sides agree (1), one empty side shares nothing (0).
func (o overlap) empty() (Result, bool) {
	switch {
	case o.pred == 0 && o.want == 0:
		return Result{1, "both empty after normalisation" + truncNote(o.cut)}, true
	case o.pred == 0 || o.want == 0:
		return Result{0, "no tokens to compare after normalisation" + truncNote(o.cut)}, true
	}
	return Result{}, false
}

// tokenF1 is SQuAD's token F1 (the official evaluate-v2.0 script): both sides
// are lowercased, stripped of ASCII punctuation and the articles a/an/the,
// split on whitespace, and compared as bags of tokens. Two empty sides score 1.
func tokenF1(response, ref string) Result {
	o := tokenOverlap(response, ref)
	if res, ok := o.empty(); ok {
		return res
	}
	if o.same == 0 {
		return Result{0, "F1 0.00 (no shared tokens)" + truncNote(o.cut)}
	}
	p, r := float64(o.same)/float64(o.pred), float64(o.same)/float64(o.want)
	f := clamp01(2 * p * r / (p + r))
	return Result{f, fmt.Sprintf("F1 %.2f (precision %.2f, recall %.2f)%s", f, p, r, truncNote(o.cut))}
}

// tokenPrecision is the share of the response's tokens found in the
// reference (the P of tokenF1): high when the answer says nothing extra.
func tokenPrecision(response, ref string) Result {
	o := tokenOverlap(response, ref)
	if res, ok := o.empty(); ok {
		return res
	}
	p := float64(o.same) / float64(o.pred)
	return Result{p, fmt.Sprintf("precision %.2f (%d of %d answer tokens in the reference)%s", p, o.same, o.pred, truncNote(o.cut))}
}

// tokenRecall is the share of the reference's tokens found in the response
// (the R of tokenF1): high when the answer leaves nothing out.
func tokenRecall(response, ref string) Result {
	o := tokenOverlap(response, ref)
	if res, ok := o.empty(); ok {
		return res
	}
	r := float64(o.same) / float64(o.want)
	return Result{r, fmt.Sprintf("recall %.2f (%d of %d reference tokens in the answer)%s", r, o.same, o.want, truncNote(o.cut))}
}

// asciiPunct is Python's string.punctuation, which SQuAD strips.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// squadTokens is SQuAD's normalize_answer followed by split().
func squadTokens(s string) []string {
	s = pyLower(s)
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(asciiPunct, r) {
			return -1
		}
		return r
	}, s)
	// Articles are removed as whole words (\b(a|an|the)\b in Python's Unicode
	// regex), which can split a token such as "“the" but not "éthe".
	var b strings.Builder
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' }
	for len(s) > 0 {
		i := strings.IndexFunc(s, func(r rune) bool { return !word(r) })
		if i < 0 {
			i = len(s)
		}
		if i == 0 {
			j := strings.IndexFunc(s, word)
			if j < 0 {
				j = len(s)
			}
			b.WriteString(s[:j])
			s = s[j:]
			continue
		}
		switch w := s[:i]; w {
		case "a", "an", "the":
			b.WriteByte(' ')
		default:
			b.WriteString(w)
		}
		s = s[i:]
	}
	return pyFields(b.String())
}

// --- bleu -------------------------------------------------------------------

// The mteval-v13a tokenizer as sacrebleu writes it (tokenizer_re.py): split
// off most ASCII symbols, periods and commas unless next to a digit, and a
// dash after a digit. Applied in order, like sacrebleu.
var bleu13a = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`([{-~\[-\x60 -&(-+:-@/])`), " ${1} "},
	{regexp.MustCompile(`([^0-9])([.,])`), "${1} ${2} "},
	{regexp.MustCompile(`([.,])([^0-9])`), " ${1} ${2}"},
	{regexp.MustCompile(`([0-9])(-)`), "${1} ${2} "},
}

// tokenize13a is sacrebleu's Tokenizer13a applied to line.rstrip().
func tokenize13a(line string) []string {
	line = strings.TrimRightFunc(line, pyIsSpace)
	line = strings.ReplaceAll(line, "<skipped>", "")
	line = strings.ReplaceAll(line, "-\n", "")
	line = strings.ReplaceAll(line, "\n", " ")
	if strings.Contains(line, "&") {
		// sacrebleu replaces these one after another, not in one pass.
		for _, pair := range [][2]string{{"&quot;", `"`}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}} {
			line = strings.ReplaceAll(line, pair[0], pair[1])
		}
	}
	line = " " + line + " "
	for _, step := range bleu13a {
		line = step.re.ReplaceAllString(line, step.repl)
	}
	return pyFields(line)
}

// bleu is sacrebleu's sentence_bleu with its defaults: 13a tokens, case kept,
// n-grams up to 4, 'exp' smoothing (Chen & Cherry method 3: the k-th order
// with no match counts as 1/(2^k·total)), effective order (orders longer than
// the hypothesis are skipped) and the brevity penalty. Returned as a fraction:
// sacrebleu's 48.53 is 0.4853 here.
func bleu(response, ref string) Result {
	hyp, want, cut := tokenPair(response, ref, tokenize13a)

	const maxOrder = 4
	refCounts := ngramCounts(want, maxOrder)
	var correct, total [maxOrder]int
	for g, c := range ngramCounts(hyp, maxOrder) {
		n := strings.Count(g, " ")
		total[n] += c
		correct[n] += min(c, refCounts[g])
	}

	bp := 1.0
	if len(hyp) < len(want) {
		bp = 0
		if len(hyp) > 0 {
			bp = math.Exp(1 - float64(len(want))/float64(len(hyp)))
		}
	}
	if correct == [maxOrder]int{} {
		// sacrebleu stops early with 0 when nothing matches (its issue #141).
		return Result{0, fmt.Sprintf("BLEU 0.00 (no matching tokens, %d/%d hyp/ref tokens)%s", len(hyp), len(want), truncNote(cut))}
	}
	var prec [maxOrder]float64
	smooth, order := 1.0, 0
	for n := range maxOrder {
		if total[n] == 0 {
			break
		}
		order = n + 1
		if correct[n] == 0 {
			smooth *= 2
			prec[n] = 1 / (smooth * float64(total[n]))
		} else {
			prec[n] = float64(correct[n]) / float64(total[n])
		}
	}
	logSum := 0.0
	for _, p := range prec[:order] {
		logSum += math.Log(p)
	}
	score := clamp01(bp * math.Exp(logSum/float64(order)))

	ps := make([]string, order)
	for i, p := range prec[:order] {
		ps[i] = fmt.Sprintf("%.1f", 100*p)
	}
	return Result{score, fmt.Sprintf("BLEU %.2f (precisions %s, BP %.3f, %d/%d hyp/ref tokens)%s",
		100*score, strings.Join(ps, "/"), bp, len(hyp), len(want), truncNote(cut))}
}

// ngramCounts counts every n-gram of 1..maxOrder tokens, keyed by the tokens
// joined with a space (tokens never contain whitespace).
func ngramCounts(toks []string, maxOrder int) map[string]int {
	counts := make(map[string]int, len(toks)*maxOrder)
	for n := 1; n <= maxOrder; n++ {
		for i := 0; i+n <= len(toks); i++ {
			counts[strings.Join(toks[i:i+n], " ")]++
		}
	}
	return counts
}

// --- rouge_l ----------------------------------------------------------------

// rougeL is the ROUGE-L F-measure of Google's rouge-score package with its
// defaults (no stemming): tokens are lowercase runs of [a-z0-9], and
// F = 2PR/(P+R) with P and R the longest common subsequence over the response
// and reference lengths.
func rougeL(response, ref string) Result {
	pred, want, cut := tokenPair(response, ref, rougeTokens)
	if len(pred) == 0 || len(want) == 0 {
		return Result{0, "ROUGE-L 0.00 (no tokens to compare)" + truncNote(cut)}
	}
	lcs := lcsLen(pred, want)
	p := float64(lcs) / float64(len(pred))
	r := float64(lcs) / float64(len(want))
	f := 0.0
	if p+r > 0 {
		f = clamp01(2 * p * r / (p + r))
	}
	return Result{f, fmt.Sprintf("ROUGE-L %.2f (LCS %d, precision %.2f, recall %.2f)%s", f, lcs, p, r, truncNote(cut))}
}

// rougeTokens is rouge-score's tokenize: lower(), every run of characters
// outside [a-z0-9] becomes a break. Python lowercases 'İ' to "i" plus a
// combining dot, which then breaks the word; that is kept here.
func rougeTokens(s string) []string {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		if r == 'İ' {
			cur.WriteByte('i')
			flush()
			continue
		}
		r = unicode.ToLower(r)
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			cur.WriteRune(r)
		} else {
			flush()
		}
	}
	flush()
	return toks
}

// lcsLen is the length of the longest common subsequence, with two DP rows.
func lcsLen(a, b []string) int {
	ids := make(map[string]int, len(a))
	ai := make([]int, len(a))
	for i, t := range a {
		id, ok := ids[t]
		if !ok {
			id = len(ids)
			ids[t] = id
		}
		ai[i] = id
	}
	bi := make([]int, len(b))
	for j, t := range b {
		id, ok := ids[t]
		if !ok {
			id = -1 // never equal to a token of a
		}
		bi[j] = id
	}
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range ai {
		for j := range bi {
			if ai[i] == bi[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// --- shared -----------------------------------------------------------------

// pyLower is Python's str.lower() where it differs from strings.ToLower:
// 'İ' becomes "i" plus a combining dot, and a word-final 'Σ' becomes 'ς'.
func pyLower(s string) string {
	if !strings.ContainsAny(s, "İΣ") {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ' && i > 0 && unicode.IsLetter(rs[i-1]) && (i+1 == len(rs) || !unicode.IsLetter(rs[i+1])):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// pyIsSpace is Python's str.isspace, which str.split() uses: Go's
// unicode.IsSpace plus the ASCII separators U+001C..U+001F.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || 0x1c <= r && r <= 0x1f
}

// pyFields is Python's str.split() with no arguments.
func pyFields(s string) []string {
	return strings.FieldsFunc(s, pyIsSpace)
}

func clamp01(x float64) float64 {
	if !(x > 0) { // also maps NaN to 0
		return 0
	}
	return min(x, 1)
}
