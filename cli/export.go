package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"tribunal/report"
	"tribunal/runs"
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
	runList := fs.String("runs", "", "comma-separated run ids (instead of, or besides, the arguments)")
	maxItems := fs.Int("max-items", 0, "items listed per run in the HTML report (default 2000; the charts cover all)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	ids, err := runIDs(append(pos, strings.FieldsFunc(*runList, func(r rune) bool { return r == ',' || r == ' ' })...))
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fs.Usage()
		return usageErr("name a run to export")
	}
	name := strings.ToLower(*format)
	if name == "" {
		name = strings.TrimPrefix(strings.ToLower(filepath.Ext(*out)), ".")
		if name != string(report.CSV) && name != string(report.HTML) && name != "htm" {
			name = string(report.JSON)
		}
	}
	if name == "htm" {
		name = string(report.HTML)
	}
	f, err := report.ParseFormat(name, report.JSON, report.CSV, report.HTML)
	if err != nil {
		return usageErr("--format: %v", err)
	}
	if f == report.CSV && len(ids) > 1 {
		return usageErr("CSV exports one run at a time; use --format json or html for several")
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
	svc := runs.New(st, nil)
	write := func(w io.Writer) error {
		switch f {
		case report.CSV:
			return exportCSV(ctx, svc, w, ids[0])
		case report.JSON:
			return report.WriteJSON(ctx, w, svc, ids...)
		}
		return report.WriteHTML(ctx, w, svc, report.Options{MaxItems: *maxItems}, ids...)
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

// exportCSV writes a run's CSV, the same file GET /api/runs/{id}/export?format=csv gives.
func exportCSV(ctx context.Context, svc *runs.Service, w io.Writer, id int64) error {
	run, err := svc.Store().Run(ctx, id)
	if err != nil {
		return err
	}
	_, err = svc.WriteCSV(ctx, w, run)
	return err
}
