package assets

import (
	"regexp"
	"strings"
	"testing"
)

var comment = regexp.MustCompile(`(?s)/\*.*?\*/`)

// TestStylesheetBlocksClose guards app.css against a rule left open (a
// merge can drop a closing brace): the browser would then swallow every
// rule after it without a word.
func TestStylesheetBlocksClose(t *testing.T) {
	b, err := FS.ReadFile("app.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	var open []string // the selector of each block not closed yet
	line := 1
	for i := 0; i < len(css); i++ {
		switch c := css[i]; {
		case c == '\n':
			line++
		case strings.HasPrefix(css[i:], "/*"):
			end := strings.Index(css[i+2:], "*/")
			if end < 0 {
				t.Fatalf("line %d: a comment is never closed", line)
			}
			line += strings.Count(css[i:i+2+end], "\n")
			i += end + 3
		case c == '{':
			start := strings.LastIndexAny(css[:i], "{};") + 1
			sel := strings.TrimSpace(comment.ReplaceAllString(css[start:i], ""))
			if len(open) > 0 && !strings.HasPrefix(open[len(open)-1], "@") {
				t.Fatalf("line %d: %q opens inside the rule %q, which was never closed", line, sel, open[len(open)-1])
			}
			open = append(open, sel)
		case c == '}':
			if len(open) == 0 {
				t.Fatalf("line %d: a brace closes nothing", line)
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		t.Fatalf("%q is never closed", open[len(open)-1])
	}
}
