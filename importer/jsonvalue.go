package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxDepth bounds nesting in JSON and YAML: task files are a few levels
// deep, and deeper input only costs time (and stack).
const maxDepth = 200

var errTooDeep = fmt.Errorf("nested more than %d levels deep", maxDepth)

// parseJSONValue decodes one JSON document into a value whose lines count
// from firstLine.
func parseJSONValue(data []byte, firstLine int) (*value, error) {
	p := &jsonParser{dec: json.NewDecoder(bytes.NewReader(data)), data: data, firstLine: firstLine, lastNL: -1}
	p.dec.UseNumber()
	v, err := p.value(0)
	if err == nil {
		if _, err = p.dec.Token(); err == io.EOF {
			return v, nil
		}
		err = fmt.Errorf("line %d: unexpected data after the JSON value", p.lineAt(int(p.dec.InputOffset())))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("line %d: %v", p.lineAt(int(se.Offset)), err)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("unexpected end of JSON")
	}
	return nil, err
}

type jsonParser struct {
	dec       *json.Decoder
	data      []byte
	firstLine int
	// Offsets only grow, so lines are counted from the last position and
	// not from the start (which made big files quadratic); lastNL is the
	// offset of the last newline before lastOff (-1: none).
	lastOff, lastLine, lastNL int
}

// lineAt is the line of the next token at or after offset.
func (p *jsonParser) lineAt(off int) int {
	l, _ := p.posAt(off)
	return l
}

// posAt is the line and column (in bytes, 1-based) of the next token at or
// after offset.
func (p *jsonParser) posAt(off int) (line, col int) {
	off = min(max(off, 0), len(p.data))
	for off < len(p.data) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
		off++
	}
	if off < p.lastOff {
		p.lastOff, p.lastLine, p.lastNL = 0, 0, -1
	}
	if i := bytes.LastIndexByte(p.data[p.lastOff:off], '\n'); i >= 0 {
		p.lastNL = p.lastOff + i
	}
	p.lastLine += bytes.Count(p.data[p.lastOff:off], []byte("\n"))
	p.lastOff = off
	return p.firstLine + p.lastLine, off - p.lastNL
}

func (p *jsonParser) value(depth int) (*value, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	line, col := p.posAt(int(p.dec.InputOffset()))
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			v := &value{kind: list, line: line, col: col, size: 1}
			for p.dec.More() {
				it, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.push(it)
			}
			_, err := p.dec.Token()
			return v, err
		case '{':
			v := &value{kind: object, line: line, col: col, size: 1}
			seen := map[string]bool{}
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				if seen[key] {
					return nil, fmt.Errorf("line %d: key %q repeats", line, key)
				}
				seen[key] = true
				child, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.add(key, child)
			}
			_, err := p.dec.Token()
			return v, err
		}
	case string:
		return at(newScalar(t, true, line), col), nil
	case json.Number:
		return at(newScalar(t.String(), false, line), col), nil
	case bool:
		return at(newScalar(strconv.FormatBool(t), false, line), col), nil
	case nil:
		return &value{kind: null, line: line, col: col, size: 1}, nil
	}
	return nil, fmt.Errorf("line %d: unexpected JSON token %v", line, tok)
}
