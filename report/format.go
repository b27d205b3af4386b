package report

import (
	"fmt"
	"slices"
	"strings"
)

// Format is an export's file format, as the ?format= of the export routes
// names it and as its file name ends.
type Format string

// The export formats.
const (
	CSV  Format = "csv"
	JSON Format = "json"
	HTML Format = "html"
)

// ContentType is the format's media type.
func (f Format) ContentType() string {
	switch f {
	case CSV:
		return "text/csv; charset=utf-8"
	case JSON:
		return "application/json; charset=UTF-8"
	}
	return "text/html; charset=UTF-8"
}

// Attachment is the Content-Disposition of a download named base.f.
func (f Format) Attachment(base string) string {
	return fmt.Sprintf(`attachment; filename="%s.%s"`, base, f)
}

// ParseFormat reads a ?format= value among those a route offers; empty is
// the first of them.
func ParseFormat(s string, offered ...Format) (Format, error) {
	if s == "" {
		return offered[0], nil
	}
	if f := Format(s); slices.Contains(offered, f) {
		return f, nil
	}
	names := make([]string, len(offered))
	for i, f := range offered {
		names[i] = string(f)
	}
	return "", fmt.Errorf("format %q is not supported; use %s", s, strings.Join(names, ", "))
}
