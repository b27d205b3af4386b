package main

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"tribunal/cli"
	"tribunal/store/storetest"
)

// asTribunal, set in a process's environment, makes this test binary run
// as tribunal itself: the worker and server processes `tribunal bench`
// starts (os.Executable) are then this binary.
const asTribunal = "TRIBUNAL_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asTribunal) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestBenchCommand runs `tribunal bench` on a 300-item run (50 tasks × 3
// models × 2 repeats) and checks that it completes, prints every figure,
// and that the workers' and the fill's items add up to the run.
func TestBenchCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts tribunal processes")
	}
	t.Setenv(asTribunal, "1")
	for _, tc := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return storetest.PostgresURL(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"bench", "--tasks", "50", "--models", "3", "--repeats", "2", "--duration", "1s"}
			if db := tc.db(t); db != "" {
				args = append(args, "--db", db)
			}
			var out, errOut bytes.Buffer
			code := cli.Main(args, &out, &errOut)
			if code != cli.ExitOK && code != cli.ExitGateFailed {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
			}
			checkBenchOutput(t, out.String())
		})
	}
}

// checkBenchOutput checks that every figure is printed with a value and
// that the item counts add up.
func checkBenchOutput(t *testing.T, out string) {
	t.Helper()
	for _, figure := range []string{"created", "workers: items answered", "workers: completed items/s", "worker", "peak RSS",
		"bulk fill", "summary: computed and stored as the run ended", "analysis: computed and stored after the summary", "summary: GET /api/runs/{id}", "analysis", "run page", "items: deep page", "items: model",
		"API items: first page", "item page", "grading page", "export csv", "export json",
		"export csv: server RSS growth", "export json: server RSS growth", "server: peak RSS"} {
		if !strings.Contains(out, figure) {
			t.Errorf("no figure %q in:\n%s", figure, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "export csv ") || strings.HasPrefix(line, "export json ") {
			// On SQLite the export rate is shown against PostgreSQL's target, without a verdict.
			if !regexp.MustCompile(`(PASS|MISS|on PostgreSQL)$`).MatchString(strings.TrimSpace(line)) {
				t.Errorf("a target without its verdict: %q", line)
			}
		}
	}
	m := regexp.MustCompile(`(\d+) items = (\d+) by the workers \+ (\d+) by the bulk fill`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no item counts in:\n%s", out)
	}
	total, workers, filled := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3])
	if total != 300 || workers+filled != total {
		t.Errorf("%d items = %d by the workers + %d filled, want 300 that add up", total, workers, filled)
	}
	lines := regexp.MustCompile(`export csv: lines\s+(\d+) lines`).FindStringSubmatch(out)
	if lines == nil || atoi(t, lines[1]) != total+1 {
		t.Errorf("the CSV export's lines: %v, want a header and %d rows", lines, total)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
