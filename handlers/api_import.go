package handlers

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/importer"
	"tribunal/store"
)

// upload is a task file sent to be imported, with its options.
type upload struct {
	name       string
	file       string // the file's own name (multipart filename or ?filename=), never the run name of ?name=
	data       []byte
	format     importer.Format
	collection string
	tags       []string
	dryRun     bool
}

// errNoUpload is an upload without a file or text; the import page words
// it for a person.
var errNoUpload = badRequest("no file: send it as the multipart field \"file\", or as the request body with ?format=&collection=")

// readUpload reads a task file from a multipart form (field file, or text
// with filename) or from the raw body, and the options from the form or the
// query (format, collection, tags, name, dry_run).
func readUpload(c echo.Context) (*upload, error) {
	r := c.Request()
	u := &upload{}
	param := func(name string) string {
		if v := c.QueryParam(name); v != "" {
			return v
		}
		return c.FormValue(name)
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	switch ct {
	case echo.MIMEMultipartForm, echo.MIMEApplicationForm:
		if fh, err := c.FormFile("file"); err == nil && fh.Size > 0 {
			if fh.Size > importer.MaxFileSize {
				return nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge,
					fmt.Sprintf("the file is %d bytes, more than the %d MB limit", fh.Size, importer.MaxFileSize>>20))
			}
			f, err := fh.Open()
			if err != nil {
				return nil, badRequest("unreadable upload: %v", err)
			}
			defer f.Close()
			if u.data, err = io.ReadAll(f); err != nil {
				return nil, badRequest("unreadable upload: %v", err)
			}
			u.name, u.file = fh.Filename, fh.Filename
		} else if err != nil && !errors.Is(err, http.ErrMissingFile) && ct == echo.MIMEMultipartForm {
			return nil, badRequest("unreadable form: %v", err)
		}
		if r.MultipartForm != nil {
			if err := nulParam(r.MultipartForm.Value); err != nil {
				return nil, err
			}
		}
		if len(u.data) == 0 {
			u.data = []byte(cmpOr(c.FormValue("content"), c.FormValue("text")))
		}
	default:
		data, err := io.ReadAll(r.Body)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, err // 413 (limitBody set the limit)
			}
			return nil, badRequest("unreadable body: %v", err)
		}
		u.data = data
	}
	if u.name == "" {
		u.file = param("filename")
		u.name = cmpOr(u.file, param("name"))
	}
	u.format = importer.Format(strings.ToLower(strings.TrimSpace(param("format"))))
	if u.format == "auto" {
		u.format = ""
	}
	if u.format != "" && !slices.Contains(importer.Formats, u.format) {
		return nil, badRequest("format %q is not supported; use one of csv, jsonl, yaml, promptfoo, mtbench, openai_evals (or none to detect it)", u.format)
	}
	u.collection = strings.TrimSpace(param("collection"))
	u.tags = store.ParseTags(param("tags"))
	u.dryRun, _ = strconv.ParseBool(param("dry_run"))
	if len(strings.TrimSpace(string(u.data))) == 0 {
		return nil, errNoUpload
	}
	return u, nil
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// RowErrorJSON is one bad row of an import.
type RowErrorJSON struct {
	Row     int    `json:"row,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func rowErrorsJSON(es importer.Errors) []RowErrorJSON {
	out := make([]RowErrorJSON, len(es))
	for i, re := range es {
		out[i] = RowErrorJSON{Row: re.Row, Line: re.Line, Column: re.Column, Field: re.Field, Message: re.Message}
	}
	return out
}

// ImportedJSON is a task import's result with the file's warnings (what
// imported but may not be what the file meant).
type ImportedJSON struct {
	store.ImportResult
	Warnings []RowErrorJSON `json:"warnings"`
}

// ImportErrorJSON answers an import with bad rows: nothing was imported.
type ImportErrorJSON struct {
	Error  string         `json:"error"`
	Errors []RowErrorJSON `json:"errors"`
}

// importProblems is a file that cannot be imported: a 422 whose API reply
// lists every bad row (see handleError).
type importProblems struct {
	name string
	errs importer.Errors
}

func (e *importProblems) Error() string {
	return fmt.Sprintf("%s has %d problem(s); nothing was imported", cmpOr(e.name, "the file"), len(e.errs))
}

func (e *importProblems) reply() ImportErrorJSON {
	return ImportErrorJSON{Error: e.Error(), Errors: rowErrorsJSON(e.errs)}
}

// readTasks reads an upload's tasks. A file that names no category takes
// the collection's name as the category, or else the file's.
func readTasks(u *upload) *importer.Result {
	return importer.Read(u.name, u.data, importer.Options{Format: u.format, Category: u.collection})
}

// apiImport is POST /api/import: a task file as multipart field "file" or as
// the raw body, with ?format=&collection=&tags=&dry_run=. All or nothing: it
// answers {created, updated, task_ids, collection, …} or 422 listing every
// bad row. With ?kind=outputs the file holds answers instead (see
// apiImportOutputs).
func (h *Handler) apiImport(c echo.Context) error {
	switch kind := c.QueryParam("kind"); kind {
	case "", "tasks":
	case "outputs":
		return h.apiImportOutputs(c)
	default:
		return badRequest("kind %q is not an import; use tasks (the default) or outputs", kind)
	}
	u, err := readUpload(c)
	if err != nil {
		return err
	}
	r := readTasks(u)
	if len(r.Errors) > 0 {
		return &importProblems{name: u.name, errs: r.Errors}
	}
	res, err := h.store.UpsertTasks(withoutCancel(c), store.ImportInput{Tasks: r.Tasks, Collection: u.collection,
		CollectionTags: u.tags, DryRun: u.dryRun})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ImportedJSON{ImportResult: *res, Warnings: rowErrorsJSON(r.Warnings)})
}
