package analysis

// DiffOp is one run of a word diff: equal, deleted (only in A) or inserted (only in B).
type DiffOp struct {
	Kind string `json:"kind"` // "=", "-", "+"
	Text string `json:"text"`
}

// maxDiffWords bounds each side of a diff: LCS is quadratic, and answers
// longer than this are rare and diffed on their first words only.
const maxDiffWords = 3000

// WordDiff diffs two texts word by word (whitespace kept with the word
// before it), by longest common subsequence.
func WordDiff(a, b string) (ops []DiffOp, truncated bool) {
	wa, wb := words(a), words(b)
	if len(wa) > maxDiffWords {
		wa, truncated = wa[:maxDiffWords], true
	}
	if len(wb) > maxDiffWords {
		wb, truncated = wb[:maxDiffWords], true
	}
	// lcs[i][j] is the LCS length of wa[i:] and wb[j:], in one flat slice.
	n, m := len(wa), len(wb)
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return lcs[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := max(at(i+1, j), at(i, j+1))
			if wa[i] == wb[j] {
				v = at(i+1, j+1) + 1
			}
			lcs[i*(m+1)+j] = v
		}
	}
	add := func(kind, text string) {
		if k := len(ops); k > 0 && ops[k-1].Kind == kind {
			ops[k-1].Text += text
			return
		}
		ops = append(ops, DiffOp{Kind: kind, Text: text})
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case wa[i] == wb[j]:
			add("=", wa[i])
			i, j = i+1, j+1
		case at(i+1, j) >= at(i, j+1):
			add("-", wa[i])
			i++
		default:
			add("+", wb[j])
			j++
		}
	}
	for ; i < n; i++ {
		add("-", wa[i])
	}
	for ; j < m; j++ {
		add("+", wb[j])
	}
	return ops, truncated
}

// words splits text into words that keep their trailing whitespace, so the
// diff joins back into the original text.
func words(s string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range s {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if inSpace && !space {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
