package markdown

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // substrings of the output
		notWant []string
	}{
		{name: "emphasis and lists", in: "**bold** and *it*\n\n- a\n- b",
			want: []string{"<strong>bold</strong>", "<em>it</em>", "<li>a</li>"}},
		{name: "raw HTML block", in: "<div onclick=\"x()\">hi</div>", notWant: []string{"<div", "onclick"}},
		{name: "script", in: "<script>alert(1)</script>\n\ntext <script>alert(2)</script>", want: []string{"text"}, notWant: []string{"<script"}},
		{name: "img onerror", in: `<img src=x onerror=alert(1)>`, notWant: []string{"<img", "onerror="}},
		{name: "inline HTML", in: `a <b onmouseover="x">b</b> c`, notWant: []string{"<b ", "onmouseover"}},
		{name: "javascript link", in: "[x](javascript:alert(1))", want: []string{"<p>x</p>"}, notWant: []string{"javascript", "<a"}},
		{name: "javascript link in capitals", in: "[x](JaVaScRiPt:alert(1))", notWant: []string{"<a", "alert"}},
		{name: "entity-encoded javascript link", in: "[x](javascript&colon;alert(1))", notWant: []string{"<a"}},
		{name: "data link", in: "[x](data:text/html;base64,PHNjcmlwdD4=)", notWant: []string{"<a", "data:"}},
		{name: "data image", in: "![pic](data:image/png;base64,AAAA)", want: []string{"pic"}, notWant: []string{"<img", "data:"}},
		{name: "remote image becomes a link", in: "![a cat](https://example.com/cat.png)",
			want: []string{`<a href="https://example.com/cat.png" rel="noopener noreferrer" target="_blank">a cat</a>`}, notWant: []string{"<img"}},
		{name: "https link", in: "[site](https://example.com/a?b=1&c=2)",
			want: []string{`href="https://example.com/a?b=1&amp;c=2"`, `rel="noopener noreferrer"`, `target="_blank"`}},
		{name: "autolink", in: "<https://example.com>", want: []string{`<a href="https://example.com" rel="noopener noreferrer" target="_blank">`}},
		{name: "bare URL", in: "see www.example.com now", want: []string{`rel="noopener noreferrer"`}},
		{name: "javascript autolink", in: "<javascript:alert(1)>", notWant: []string{"<a"}},
		{name: "email autolink", in: "<me@example.com>", want: []string{`href="mailto:me@example.com"`}},
		{name: "relative link", in: "[r](/runs/1)", want: []string{`href="/runs/1"`}},
		{name: "code block keeps HTML as text", in: "```html\n<script>alert(1)</script>\n```",
			want: []string{"<pre><code", "&lt;script&gt;alert(1)&lt;/script&gt;"}, notWant: []string{"<script"}},
		{name: "inline code", in: "`<b>`", want: []string{"<code>&lt;b&gt;</code>"}},
		{name: "table", in: "| a | b |\n|---|---|\n| 1 | 2 |", want: []string{"<table>", "<td>1</td>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := Render(tt.in)
			if cut {
				t.Errorf("Render(%q) says it was cut", tt.in)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Render(%q) = %q, want it to contain %q", tt.in, got, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(strings.ToLower(got), strings.ToLower(w)) {
					t.Errorf("Render(%q) = %q, want no %q", tt.in, got, w)
				}
			}
			if bad := unsafeTag(got); bad != "" {
				t.Errorf("Render(%q) = %q holds %s", tt.in, got, bad)
			}
		})
	}
}

func TestRenderCutsLongText(t *testing.T) {
	long := strings.Repeat("é", MaxBytes) // two bytes each: the cut falls inside one
	got, cut := Render(long)
	if !cut {
		t.Fatal("a text past MaxBytes was not cut")
	}
	if n := strings.Count(got, "é"); n == 0 || n > MaxBytes/2 {
		t.Errorf("rendered %d characters of %d, want at most %d", n, len(long)/2, MaxBytes/2)
	}
	if strings.Contains(got, "\uFFFD") {
		t.Error("the cut split a character")
	}
	if _, cut := Render(long[:MaxBytes]); cut {
		t.Error("a text of exactly MaxBytes was cut")
	}
}

// FuzzRender checks that no input makes Render write a script element, an
// event-handler attribute or a javascript:/data: link.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"<script>alert(1)</script>", `<img src=x onerror=alert(1)>`, "[x](javascript:alert(1))",
		"<javascript:alert(1)>", "![x](data:image/png;base64,AA)", "```\n<script>\n```", `[a](<java script:x> "t")`,
		"<a href=\"javascript:x\" onclick=y>z</a>", "*<svg onload=alert(1)>*", "www.example.com/<script>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, _ := Render(in)
		if bad := unsafeTag(got); bad != "" {
			t.Fatalf("Render(%q) = %q holds %s", in, got, bad)
		}
	})
}

// unsafeTag names the first script element, on… attribute or
// javascript:/data: link in an HTML fragment, or "".
func unsafeTag(fragment string) string {
	z := html.NewTokenizer(strings.NewReader(fragment))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if tok.Data == "script" {
				return "a <script> element"
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					return "an " + a.Key + " attribute"
				}
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if (a.Key == "href" || a.Key == "src") && (strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "data:")) {
					return "a " + a.Key + " of " + a.Val
				}
			}
		}
	}
}
