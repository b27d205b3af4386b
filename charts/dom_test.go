package charts

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// node is a tiny DOM for checking chart output.
type node struct {
	name string
	attr map[string]string
	kids []*node
	text string // direct character data
	up   *node
}

// parseSVG parses s strictly as XML; any error means the markup is not
// well-formed.
func parseSVG(s string) (*node, error) {
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	root := &node{name: "#root"}
	cur := root
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{name: t.Name.Local, attr: map[string]string{}, up: cur}
			for _, a := range t.Attr {
				n.attr[a.Name.Local] = a.Value
			}
			cur.kids = append(cur.kids, n)
			cur = n
		case xml.EndElement:
			cur = cur.up
		case xml.CharData:
			cur.text += string(t)
		case xml.ProcInst, xml.Directive:
			return nil, errors.New("unexpected processing instruction or directive")
		}
	}
	if len(root.kids) != 1 || root.kids[0].name != "svg" {
		return nil, errors.New("want exactly one root <svg> element")
	}
	if strings.TrimSpace(root.text) != "" {
		return nil, errors.New("text outside the root element")
	}
	return root.kids[0], nil
}

func mustParse(t testing.TB, s string) *node {
	t.Helper()
	n, err := parseSVG(s)
	if err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, s)
	}
	return n
}

// all returns n and its descendants matching pred, in document order.
func (n *node) all(pred func(*node) bool) []*node {
	var out []*node
	var walk func(*node)
	walk = func(m *node) {
		if pred(m) {
			out = append(out, m)
		}
		for _, k := range m.kids {
			walk(k)
		}
	}
	walk(n)
	return out
}

func (n *node) byName(name string) []*node {
	return n.all(func(m *node) bool { return m.name == name })
}

func (n *node) byClass(class string) []*node {
	return n.all(func(m *node) bool { return hasClass(m, class) })
}

func hasClass(n *node, class string) bool {
	for _, c := range strings.Fields(n.attr["class"]) {
		if c == class {
			return true
		}
	}
	return false
}

// allText is all character data under n.
func (n *node) allText() string {
	var b strings.Builder
	for _, m := range n.all(func(*node) bool { return true }) {
		b.WriteString(m.text)
	}
	return b.String()
}

// tooltip is the text of n's <title> child ("" if none).
func (n *node) tooltip() string {
	for _, k := range n.kids {
		if k.name == "title" {
			return k.text
		}
	}
	return ""
}

func (n *node) f(t testing.TB, attr string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.attr[attr], 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.name, attr, n.attr[attr], err)
	}
	return v
}

// tickScale derives the pixel mapping of a chart's axis from its tick
// labels (independent of the package's own scale code). horizontal picks
// ticks laid out along x (bottom axis) rather than y.
func tickScale(t testing.TB, svg *node, horizontal bool) func(float64) float64 {
	t.Helper()
	var vals, px []float64
	for _, tk := range svg.byClass("tb-tick") {
		v, err := strconv.ParseFloat(strings.TrimSpace(tk.text), 64)
		if err != nil {
			continue
		}
		if horizontal && tk.up != nil && tk.up.attr["text-anchor"] == "middle" {
			vals = append(vals, v)
			px = append(px, tk.f(t, "x"))
		}
		if !horizontal && tk.up != nil && tk.up.attr["text-anchor"] == "end" {
			vals = append(vals, v)
			px = append(px, tk.f(t, "y"))
		}
	}
	if len(vals) < 2 {
		t.Fatalf("need 2 numeric ticks, got %v", vals)
	}
	i, j := 0, len(vals)-1
	k := (px[j] - px[i]) / (vals[j] - vals[i])
	return func(v float64) float64 { return px[i] + (v-vals[i])*k }
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
