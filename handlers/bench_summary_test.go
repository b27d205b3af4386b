package handlers_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // raw SQL to fill the run's results
	_ "modernc.org/sqlite"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// BenchmarkRunPageScored100k: the run page and GET /api/runs/{id} of a
// finished 100,000-item run whose items all carry a judge score (and 1 % a
// check), first view (nothing cached) and cached. Run:
//
//	go test -run '^$' -bench RunPageScored -benchtime 1x ./handlers/   (TEST_DATABASE_URL for PostgreSQL)
func BenchmarkRunPageScored100k(b *testing.B) {
	for _, dbName := range []string{"sqlite", "postgres"} {
		b.Run(dbName, func(b *testing.B) {
			cfg := store.Config{Box: storetest.Box(b)}
			driver, dsn := "sqlite", ""
			if dbName == "sqlite" {
				cfg.DataDir = b.TempDir()
				dsn = filepath.Join(cfg.DataDir, "tribunal.db")
			} else {
				if os.Getenv("TEST_DATABASE_URL") == "" {
					b.Skip("TEST_DATABASE_URL not set")
				}
				cfg.DatabaseURL = storetest.PostgresURL(b)
				driver, dsn = "pgx", cfg.DatabaseURL
			}
			st, err := store.Open(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			pid, cid := bigFixture(b, st)
			r, _ := newBigRun(b, st, pid, cid)
			db, err := sql.Open(driver, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			fillScores(b, db, r.runID)
			views := func(when string) {
				for _, path := range []string{fmt.Sprintf("/runs/%d", r.runID), fmt.Sprintf("/api/runs/%d", r.runID)} {
					if when == "computed" { // what the first view stored must not serve the next path's
						if _, err := db.Exec(`DELETE FROM run_summaries`); err != nil {
							b.Fatal(err)
						}
					}
					// A fresh server has empty caches: its first request is the first view.
					eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
					srv := httptest.NewServer(handlers.New(st, eng, slog.New(slog.DiscardHandler)))
					first := timeGet(b, srv.URL+path)
					var cached time.Duration
					const n = 5
					for range n {
						cached += timeGet(b, srv.URL+path)
					}
					srv.Close()
					b.Logf("%s %s %s: first view %v, cached %v", dbName, path, when, first.Round(time.Millisecond),
						(cached / n).Round(100*time.Microsecond))
				}
			}
			views("computed")
			run, err := st.Run(context.Background(), r.runID)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := db.Exec(`DELETE FROM run_summaries`); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if _, err := runs.Snapshot(context.Background(), st, run); err != nil { // what the evaluator does as a run ends
				b.Fatal(err)
			}
			b.Logf("%s snapshot of the summary: %v", dbName, time.Since(start).Round(time.Millisecond))
			views("after the snapshot")
		})
	}
}

func timeGet(b *testing.B, url string) time.Duration {
	b.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Host = "localhost"
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("GET %s: %d", url, res.StatusCode)
	}
	return time.Since(start)
}

// fillScores finishes every item of a run as a judge would: a score 1–10
// on each item, and a check on 1 % of them.
func fillScores(b *testing.B, db *sql.DB, runID int64) {
	b.Helper()
	var judgeID int64
	if err := db.QueryRow(`SELECT id FROM run_judges WHERE run_id = $1`, runID).Scan(&judgeID); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	for _, q := range []string{
		`UPDATE items SET status = 'COMPLETED', score = 1 + (id % 10), response = 'an answer', time_ms = 100 + id % 50,
			completion_tokens = 20 WHERE run_id = $1`,
		fmt.Sprintf(`INSERT INTO scores (run_id, item_id, run_target_id, answer_length, run_judge_id, source, metric, score, reasoning, raw, created_at)
			SELECT run_id, id, run_target_id, LENGTH(response), %d, 'judge:%d', 'score', score, 'fine', '', $2 FROM items WHERE run_id = $1`, judgeID, judgeID),
		`INSERT INTO scores (run_id, item_id, run_target_id, source, metric, score, reasoning, raw, created_at)
			SELECT run_id, id, run_target_id, 'check:contains', 'check_contains', 0, '', '', $2 FROM items WHERE run_id = $1 AND id % 100 = 0`,
		`UPDATE runs SET status = 'FINISHED', phase = 'JUDGING', finished_at = $2 WHERE id = $1`,
	} {
		args := []any{runID}
		if strings.Contains(q, "$2") {
			args = append(args, now)
		}
		if _, err := db.Exec(q, args...); err != nil {
			b.Fatalf("%v\n%s", err, q)
		}
	}
}
