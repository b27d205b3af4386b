package rubric

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"text/template"
	"time"
)

func TestParseRefusesUnboundedTemplates(t *testing.T) {
	for name, tc := range map[string]struct{ tmpl, want string }{
		"the issue's template": {`{{range 10000000}}xxxxxxxxxxxxxxxxxxxx{{end}}{{.Response}}`, "counts to 1000 at most"},
		"nested ranges":        {`{{range 1000}}{{range 1000}}{{end}}{{end}}{{.Response}}`, "more than 20000 actions"},
		"ranges over fields":   {`{{range 100}}{{range $.Turns}}{{range $.Metrics}}{{.Name}}{{end}}{{end}}{{end}}{{.Response}}`, "more than 20000 actions"},
		"a computed count":     {`{{range inc 999999}}{{end}}{{.Response}}`, "range over a field"},
		"too much output":      {`{{range 1000}}` + strings.Repeat("x", 300) + `{{end}}{{.Response}}`, "longer than 256 KB"},
		"deep nesting":         {strings.Repeat("{{if true}}", 11) + strings.Repeat("{{end}}", 11) + "{{.Response}}", "nested more than 10 deep"},
		"recursion":            {`{{define "a"}}{{range 2}}{{template "a"}}{{end}}{{end}}{{template "a"}}{{.Response}}`, "not supported"},
		"a template call":      {`{{template "x"}}{{.Response}}`, "not supported"},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse(t.Context(), tc.tmpl)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error = %v; want %q", err, tc.want)
			}
			t.Logf("refused in %v: %v", time.Since(start), err)
		})
	}
	// Ranges a real template uses still parse.
	ok := `{{range $i, $t := .Turns}}{{$t}} {{index $.Answers $i}}{{range $.Metrics}}{{.Name}}{{end}}{{end}}{{range 5}}.{{end}}{{.Response}}`
	if _, err := Parse(t.Context(), ok); err != nil {
		t.Fatalf("Parse(%q): %v", ok, err)
	}
}

// TestRenderCaps runs templates the parse-time checks would refuse, to show
// the writer alone bounds memory and time.
func TestRenderCaps(t *testing.T) {
	big := template.Must(template.New("x").Parse(`{{range 10000000}}xxxxxxxxxxxxxxxxxxxx{{end}}`))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := render(t.Context(), big, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooBig) || out != "" {
		t.Fatalf("render = %d bytes, %v; want ErrTooBig", len(out), err)
	}
	// The issue measured 943 MB for this template; the cap keeps it to the
	// buffer's growth (≈ 2 × 256 KB).
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("render allocated %d MB", alloc>>20)
	}
	t.Logf("allocated %d KB", (after.TotalAlloc-before.TotalAlloc)>>10)

	slow := template.Must(template.New("x").Parse(`{{range 10000000}}{{range 10}}{{if eq . -1}}{{end}}{{end}}.{{end}}`))
	start := time.Now()
	if _, err := render(t.Context(), slow, nil); !errors.Is(err, ErrTooSlow) {
		t.Fatalf("render error = %v; want ErrTooSlow", err)
	}
	t.Logf("stopped after %v", time.Since(start))
}

// FuzzRenderBounds checks that no template, however crafted, makes Parse or
// Render panic, write more than MaxOutput or run far beyond RenderTimeout.
func FuzzRenderBounds(f *testing.F) {
	for _, s := range []string{DefaultTemplate, "{{.Response}}", `{{range 1000}}{{$.Response}}{{end}}`,
		`{{range $.Turns}}{{range $.Metrics}}{{$.Question}}{{end}}{{end}}{{.Response}}`,
		`{{range 10000000}}x{{end}}`, `{{with .ScaleMax}}{{range .}}{{range $.Answers}}{{.}}{{end}}{{end}}{{end}}{{.Response}}`,
		`{{printf "%999999d" 1}}{{.Response}}`} {
		f.Add(s, "an answer")
	}
	f.Fuzz(func(t *testing.T, text, answer string) {
		start := time.Now()
		tmpl, err := Parse(t.Context(), text)
		// Parse renders two samples, each within RenderTimeout; the slack
		// is for a loaded machine.
		if d := time.Since(start); d > 2*RenderTimeout+time.Second {
			t.Fatalf("Parse took %v", d)
		}
		if err != nil {
			return
		}
		in := Input{Question: answer, Turns: []string{answer, answer}, Answers: []string{answer, answer}, Response: answer,
			Metrics: BuiltinMetrics, ScaleMin: 0, ScaleMax: 1000}
		start = time.Now()
		out, err := Render(t.Context(), tmpl, in)
		if d := time.Since(start); d > RenderTimeout+time.Second {
			t.Fatalf("Render took %v", d)
		}
		if len(out) > MaxOutput || (err != nil && out != "") {
			t.Fatalf("Render = %d bytes, %v", len(out), err)
		}
	})
}

// TestStringBuiltinsBounded: printf and its kin build their result in
// memory before the writer sees it, so a variable doubled by printf grew to
// gigabytes (1.8 GB RSS for nine doublings) within the step bound.
func TestStringBuiltinsBounded(t *testing.T) {
	double := `{{$x = printf "%s%s" $x $x}}`
	for name, tmpl := range map[string]string{
		"printf doubling": `{{$x := printf "%999999d" 1}}` + strings.Repeat(double, 12) + `{{len $x}}{{.Response}}`,
		"print doubling":  `{{$x := printf "%200000d" 1}}` + strings.Repeat(`{{$x = print $x $x}}`, 12) + `{{.Response}}`,
		"many arguments":  `{{$x := printf "%200000d" 1}}{{$y := print` + strings.Repeat(" $x", 5000) + `}}{{.Response}}`,
		"star widths":     `{{$x := printf "` + strings.Repeat("%*d", 2000) + `"` + strings.Repeat(" 1000000 1", 2000) + `}}{{.Response}}`,
		"js expansion":    `{{$x := printf "%250000s" "<"}}{{$x = js $x $x $x $x $x $x $x $x}}{{$x = js $x $x}}{{.Response}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Parse(t.Context(), tmpl)
			runtime.ReadMemStats(&after)
			if err == nil || !(errors.Is(err, ErrTooBig) || errors.Is(err, ErrTooSlow)) {
				t.Fatalf("Parse error = %v; want ErrTooBig or ErrTooSlow", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("Parse allocated %d MB", alloc>>20)
			}
			t.Logf("allocated %d KB: %v", (after.TotalAlloc-before.TotalAlloc)>>10, err)
		})
	}
	// Ordinary uses still work.
	ok := `{{printf "%.1f" 2.25}} {{print .ScaleMin "-" .ScaleMax}} {{js .Question}} {{html .Question}} {{urlquery "a b"}} {{printf "%s" .Response}}`
	if _, err := Parse(t.Context(), ok); err != nil {
		t.Fatalf("Parse(%q): %v", ok, err)
	}
}
