package cli

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"tribunal/bench"
)

const benchUsage = `Usage: tribunal bench [--db postgres://…] [--tasks N --models N --repeats N] [--workers N]
                       [--latency D] [--duration D] [--keep]

Builds a large run against a fake OpenAI-compatible LLM served by this
process and prints each figure with its scale target (a million-item run on
PostgreSQL, 200k on SQLite) and PASS or MISS:

  1. creates the tasks, a collection and the run (tasks × models × repeats
     items) as the API does, and times it (target < 10 s);
  2. runs --workers real 'tribunal worker' processes on it for --duration
     (on SQLite one 'tribunal serve', SQLite being one process), sampling
     each one's memory (peak RSS < 300 MB) and counting the items they did;
  3. completes the items they left with a bulk fill of synthetic answers,
     verdicts and scores, as the engine writes them;
  4. starts 'tribunal serve' on the finished run and times the statistics
     (< 3 s each), the run's pages (< 150 ms each) and the CSV and JSON
     exports (≥ 100k rows/s, the server's memory flat).

Without --db it uses a SQLite database in a temporary directory (removed
afterwards unless --keep) and 10,000 tasks (200k items); with --db it uses
that PostgreSQL database and 50,000 tasks (1M items). Name a scratch
database: the bench's tasks and run stay in it. Exits 1 when a target was
missed.
`

func (e *env) bench(args []string) error {
	fs := newFlagSet("bench", benchUsage, e.stderr)
	db := fs.String("db", "", "postgres://… database to use (default: a temporary SQLite database)")
	tasks := fs.Int("tasks", 0, "tasks in the run (default 50000 on PostgreSQL, 10000 on SQLite)")
	models := fs.Int("models", 10, "models (targets) in the run")
	repeats := fs.Int("repeats", 2, "repeats of each task and model")
	workers := fs.Int("workers", 2, "worker processes on PostgreSQL (SQLite: one server process)")
	latency := fs.Duration("latency", 0, "how long the fake LLM takes to answer")
	duration := fs.Duration("duration", 30*time.Second, "how long the workers work before the bulk fill completes the run")
	keep := fs.Bool("keep", false, "keep the temporary directory (SQLite database and the processes' logs)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *models < 1 || *repeats < 1 || *workers < 1 || *tasks < 0 || *duration < 0 {
		return usageErr("--models, --repeats and --workers must be at least 1, --tasks and --duration not negative")
	}
	exe, err := os.Executable()
	if err != nil {
		return failErr("find the tribunal binary: %v", err)
	}
	dir, err := os.MkdirTemp("", "tribunal-bench-")
	if err != nil {
		return failErr("%v", err)
	}
	if *keep {
		fmt.Fprintf(e.stderr, "bench: keeping %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	defaultTasks := 10_000
	if *db != "" {
		defaultTasks = 50_000
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, bench.Config{DatabaseURL: *db, Dir: dir, Exe: exe,
		Tasks: cmp.Or(*tasks, defaultTasks), Models: *models, Repeats: *repeats, Workers: *workers,
		Latency: *latency, Duration: *duration,
		Progress: func(s string) { fmt.Fprintf(e.stderr, "bench: %s: %s\n", time.Now().Format("15:04:05"), s) }})
	if rep != nil {
		if perr := rep.Print(e.stdout); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return failErr("%v", err)
	}
	if rep.Misses() > 0 {
		return &exitError{code: ExitGateFailed}
	}
	return nil
}
