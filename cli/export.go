package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/report"
	"tribunal/store"
)

const exportUsage = `Usage: tribunal export RUN_ID... [--format csv|json|html] [--out FILE]

Writes a run's results: csv (one row per item, as the web export), json
(everything about the run: settings snapshot, targets, judges, tasks, every
item with its scores and grade, aggregates) or html (a self-contained report
with charts that opens from disk). Several runs (or --runs 3,4) make one JSON
document or one HTML comparison. Without --out it writes to stdout.
`

func (e *env) export(args []string) error {
	fs := newFlagSet("export", exportUsage, e.stderr)
	var db dbFlags
	e.addDBFlags(fs, &db)
	format := fs.String("format", "", "csv, json or html (default: from --out's extension, else json)")
	out := fs.String("out", "", "file to write (default: stdout)")
	runs := fs.String("runs", "", "comma-separated run ids (instead of, or besides, the arguments)")
	maxItems := fs.Int("max-items", 0, "items listed per run in the HTML report (default 2000; the charts cover all)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	ids, err := runIDs(append(pos, strings.FieldsFunc(*runs, func(r rune) bool { return r == ',' || r == ' ' })...))
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fs.Usage()
		return usageErr("name a run to export")
	}
	f := strings.ToLower(*format)
	if f == "" {
		f = strings.TrimPrefix(strings.ToLower(filepath.Ext(*out)), ".")
		if f != "csv" && f != "html" {
			f = "json"
		}
	}
	if f == "htm" {
		f = "html"
	}
	switch f {
	case "csv":
		if len(ids) > 1 {
			return usageErr("CSV exports one run at a time; use --format json or html for several")
		}
	case "json", "html":
	default:
		return usageErr("--format %q: use csv, json or html", *format)
	}
	ctx := context.Background()
	st, err := e.openStore(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, id := range ids {
		if _, err := st.Run(ctx, id); err != nil {
			return storeError(err)
		}
	}
	write := func(w io.Writer) error {
		switch f {
		case "csv":
			return exportCSV(ctx, st, w, ids[0])
		case "json":
			return report.WriteJSON(ctx, w, st, ids...)
		}
		return report.WriteHTML(ctx, w, st, report.Options{MaxItems: *maxItems}, ids...)
	}
	if *out == "" || *out == "-" {
		bw := bufio.NewWriter(e.stdout)
		if err = write(bw); err == nil {
			err = bw.Flush()
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			return failErr("create %s: %v", filepath.Dir(*out), err)
		}
		err = writeAtomic(*out, write)
	}
	if err != nil {
		return failErr("export: %v", err)
	}
	if *out != "" {
		fmt.Fprintf(e.stderr, "wrote %s\n", *out)
	}
	return nil
}

func runIDs(args []string) ([]int64, error) {
	var ids []int64
	for _, a := range args {
		a = strings.TrimPrefix(strings.TrimSpace(a), "#")
		if a == "" {
			continue
		}
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return nil, usageErr("%q is not a run id", a)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// writeAtomic writes path through fn into a temp file beside it, renamed
// into place on success, so nobody sees half a file.
func writeAtomic(path string, fn func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(tmp, 64<<10)
	err = fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644) // CreateTemp makes 0600; results are for sharing
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// exportCSV writes the run's CSV through the web export's own handler, so
// the file is byte for byte what GET /api/runs/{id}/export?format=csv gives.
func exportCSV(ctx context.Context, st *store.Store, w io.Writer, id int64) error {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := handlers.New(st, engine.New(engine.Config{}, st, engine.NewBroker(), log), log)
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("/api/runs/%d/export?format=csv", id), nil)
	req.Host = "localhost" // not httptest's example.com, which the server does not answer to
	rw := &streamResponse{header: http.Header{}, w: w}
	h.ServeHTTP(rw, req)
	if rw.status != 0 && rw.status != http.StatusOK {
		return fmt.Errorf("CSV export answered %d", rw.status)
	}
	return rw.err
}

// streamResponse is an http.ResponseWriter that writes the body through.
type streamResponse struct {
	header http.Header
	w      io.Writer
	status int
	err    error
}

func (r *streamResponse) Header() http.Header { return r.header }

func (r *streamResponse) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *streamResponse) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.status != http.StatusOK {
		return len(b), nil
	}
	n, err := r.w.Write(b)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}
