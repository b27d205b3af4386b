package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"tribunal/importer"
	"tribunal/store"
)

const exportTasksUsage = `Usage: tribunal export-tasks [--format yaml|jsonl|csv] [--collection NAME]
                             [--category C] [--usecase U] [-o FILE]

Writes tasks back as a file that tribunal import (or the Import page) reads
to the same tasks, every field: YAML task definitions, JSON lines or CSV.
Every task, or a collection's, a category's or a use case's. The format
comes from --format, else from -o's extension, else YAML. Without -o it
writes to stdout. GET /api/tasks/export gives the same file.
`

func (e *env) exportTasks(args []string) error {
	fs := newFlagSet("export-tasks", exportTasksUsage, e.stderr)
	var db dbFlags
	e.addDBFlags(fs, &db)
	format := fs.String("format", "", "yaml, jsonl or csv (default: from -o's extension, else yaml)")
	var out string
	fs.StringVar(&out, "o", "", "file to write (default: stdout)")
	fs.StringVar(&out, "out", "", "the same as -o")
	collection := fs.String("collection", "", "only this collection's tasks (its name)")
	category := fs.String("category", "", "only this category's tasks")
	usecase := fs.String("usecase", "", "only this use case's tasks")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("export-tasks takes no arguments (got %q); name a collection with --collection", pos[0])
	}
	name := *format
	if name == "" {
		switch ext := strings.ToLower(filepath.Ext(out)); ext {
		case ".jsonl", ".ndjson":
			name = "jsonl"
		case ".csv":
			name = "csv"
		}
	}
	f, err := importer.ParseExportFormat(name)
	if err != nil {
		return usageErr("--format: %v", err)
	}
	ctx := context.Background()
	st, err := e.openStore(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	sel := store.TaskExport{Category: *category, UseCase: *usecase}
	if *collection != "" {
		if sel.CollectionID, err = collectionID(ctx, st, *collection); err != nil {
			return err
		}
	}
	n := 0
	write := func(w io.Writer) error {
		return importer.ExportTasks(ctx, st, countingWriter{w, &n}, f, sel)
	}
	if out == "" || out == "-" {
		bw := bufio.NewWriter(e.stdout)
		if err = write(bw); err == nil {
			err = bw.Flush()
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return failErr("create %s: %v", filepath.Dir(out), err)
		}
		err = writeAtomic(out, write)
	}
	if err != nil {
		return storeError(err)
	}
	if out != "" && out != "-" {
		fmt.Fprintf(e.stderr, "wrote %s (%d bytes, %s)\n", out, n, f)
	}
	return nil
}

// collectionID finds a collection by its name (exactly, else ignoring case).
func collectionID(ctx context.Context, st *store.Store, name string) (int64, error) {
	cols, err := st.Collections(ctx)
	if err != nil {
		return 0, failErr("%v", err)
	}
	var names []string
	for _, c := range cols {
		if c.Name == name {
			return c.ID, nil
		}
		names = append(names, fmt.Sprintf("%q", c.Name))
	}
	for _, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return c.ID, nil
		}
	}
	if len(names) == 0 {
		return 0, usageErr("no collection %q: there are no collections", name)
	}
	return 0, usageErr("no collection %q (collections: %s)", name, strings.Join(names, ", "))
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n *int
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += n
	return n, err
}
