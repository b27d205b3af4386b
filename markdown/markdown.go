// Package markdown renders text a model or a user wrote as HTML that is safe
// to put in a page: raw HTML never passes (goldmark without WithUnsafe
// replaces it with a comment), links keep only http, https, mailto and
// relative destinations, every link opens in a new tab without an opener or
// a referrer, and images become links (a reply must not make the browser
// fetch anything).
package markdown

import (
	"bytes"
	"html"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxBytes is how much of a text Render renders; the rest is cut, so one
// huge reply cannot stall a page.
const MaxBytes = 256 << 10

// md is safe for concurrent use once built.
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 100))),
)

// Render renders src as HTML, the first MaxBytes of it; cut says the rest
// was left out.
func Render(src string) (html string, cut bool) {
	if len(src) > MaxBytes {
		src, cut = clip(src, MaxBytes), true
	}
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b); err != nil {
		// Convert fails only when writing fails, which a buffer does not.
		panic("markdown: " + err.Error())
	}
	return b.String(), cut
}

// clip cuts s to at most n bytes without splitting a UTF-8 character.
func clip(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// safeLinks rewrites links and images as the package doc says.
type safeLinks struct{}

// Transform implements parser.ASTTransformer.
func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var links, images []ast.Node
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.Link, *ast.AutoLink:
			links = append(links, n)
		case *ast.Image:
			images = append(images, n)
		}
		return ast.WalkContinue, nil
	})
	// Images first: one inside a link becomes a link in a link, so its
	// outer link must see it as a child, then keep it as text.
	for _, n := range images {
		img := n.(*ast.Image)
		link := ast.NewLink()
		link.Destination, link.Title = img.Destination, img.Title
		for c := img.FirstChild(); c != nil; {
			next := c.NextSibling()
			link.AppendChild(link, c)
			c = next
		}
		if !link.HasChildren() {
			link.AppendChild(link, ast.NewString([]byte("image")))
		}
		img.Parent().ReplaceChild(img.Parent(), img, link)
		links = append(links, link)
	}
	for _, n := range links {
		var dest []byte
		switch l := n.(type) {
		case *ast.Link:
			dest = l.Destination
		case *ast.AutoLink:
			dest = l.URL(src)
			if l.AutoLinkType == ast.AutoLinkEmail {
				dest = append([]byte("mailto:"), dest...)
			}
		}
		if n.Parent() == nil {
			continue // an image link already unwrapped
		}
		if !allowed(string(dest)) || inLink(n) {
			unwrap(n, src)
			continue
		}
		n.SetAttributeString("rel", []byte("noopener noreferrer"))
		n.SetAttributeString("target", []byte("_blank"))
	}
}

// allowed reports whether a link destination may stay: http, https, mailto
// or no scheme at all (a relative link or a fragment). It judges the
// destination as a browser would read it: entities decoded, and the tabs,
// newlines and control characters a browser skips taken out.
func allowed(dest string) bool {
	dest = strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, html.UnescapeString(dest))
	i := strings.IndexAny(dest, ":/?#")
	if i < 0 || dest[i] != ':' {
		return true // no scheme
	}
	switch strings.ToLower(dest[:i]) {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// inLink reports whether n sits inside another link.
func inLink(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.(type) {
		case *ast.Link, *ast.AutoLink:
			return true
		}
	}
	return false
}

// unwrap replaces a link with its text.
func unwrap(n ast.Node, src []byte) {
	parent := n.Parent()
	if al, ok := n.(*ast.AutoLink); ok {
		parent.ReplaceChild(parent, n, ast.NewString(al.Label(src)))
		return
	}
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}
