package runfile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the run-file reader: it must never
// panic, every problem must name the run file (or a task file) with a line
// inside it, and a file it accepts must have targets, tasks and no literal
// secret.
func FuzzParse(f *testing.F) {
	f.Add([]byte(smallest))
	f.Add([]byte("targets: [{provider: p, model: m}]\nproviders: [{name: p, base_url: 'http://x'}]\ntasks: [{task_id: a, question: q}]\nmetrics: [check_exact_match]\n"))
	f.Add([]byte("providers:\n  - name: p\n    base_url: http://h\n    headers: {X-Api-Key: literal}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("gates: {per_model: {m: {min_score: 1}}, min_pass_rate: 2}\n"))
	f.Add([]byte("tasks:\n  - <<: {task_id: a}\n    question: ${HOME}\n"))
	f.Add([]byte("{\"targets\": [], \"judge\": null}"))
	f.Add([]byte("- just\n- a list\n"))
	f.Add([]byte("---\na: 1\n---\nb: 2\n"))
	lookup := env(map[string]string{"KEY": "secret-value"})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		dir := t.TempDir()
		file, err := Parse("run.yaml", data, dir, lookup)
		norm := bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
		lines := bytes.Count(norm, []byte("\n")) + 1
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error is not Problems: %v", err)
			}
			for _, p := range ps {
				if p.Message == "" {
					t.Errorf("problem without a message: %+v", p)
				}
				if p.File == "run.yaml" && (p.Line < 0 || p.Line > lines) {
					t.Errorf("line %d outside the file's %d lines: %s", p.Line, lines, p.Error())
				}
			}
			return
		}
		if len(file.Targets) == 0 {
			t.Fatal("accepted a run file without targets")
		}
		if len(file.Tasks) == 0 && len(file.Collections) == 0 {
			t.Fatal("accepted a run file without tasks or collections")
		}
		for _, p := range file.Providers {
			for _, h := range p.Input.Headers {
				if secretHeader(h.Key) && !h.IsSecret {
					t.Errorf("secret-looking header %q not stored as secret", h.Key)
				}
				if secretHeader(h.Key) && !strings.Contains(string(data), "${") {
					t.Errorf("secret-looking header %q accepted without an env reference", h.Key)
				}
			}
		}
	})
}
