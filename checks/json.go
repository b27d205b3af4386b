package checks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL names the one schema resource a check compiles. A relative $ref
// resolves under it and is refused by noLoader.
const schemaURL = "mem:///check-schema.json"

// maxSchemaErrors is how many validation errors the detail lists.
const maxSchemaErrors = 3

// jsonValid passes when the response, after stripping one surrounding code
// fence, is exactly one JSON value.
func jsonValid(response string) Result {
	if _, err := parseJSON(extractJSON(response)); err != nil {
		return Result{0, "invalid JSON: " + err.Error()}
	}
	return Result{1, "valid JSON"}
}

// jsonSchema passes when the extracted JSON validates against the schema.
func jsonSchema(response, schema string) (Result, error) {
	sch, err := compileSchema(schema)
	if err != nil {
		return Result{}, err
	}
	doc, err := parseJSON(extractJSON(response))
	if err != nil {
		return Result{0, "invalid JSON: " + err.Error()}, nil
	}
	err = sch.Validate(doc)
	if err == nil {
		return Result{1, "valid against schema"}, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Result{0, "schema validation failed: " + clip(err.Error(), 200)}, nil
	}
	var leaves []string
	collectLeaves(ve, &leaves)
	detail := strings.Join(leaves[:min(len(leaves), maxSchemaErrors)], "; ")
	if n := len(leaves) - maxSchemaErrors; n > 0 {
		detail += fmt.Sprintf(" (+%d more)", n)
	}
	return Result{0, "schema mismatch: " + detail}, nil
}

// collectLeaves gathers the innermost errors, which name the failing
// instance location ("at '/age': got string, want integer").
func collectLeaves(e *jsonschema.ValidationError, out *[]string) {
	if len(e.Causes) == 0 {
		msg := strings.Replace(e.Error(), "at '':", "at root:", 1)
		*out = append(*out, clip(msg, 120))
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, out)
	}
}

// extractJSON trims whitespace and one surrounding Markdown code fence
// (```json … ``` or ``` … ```), which models add even when told not to.
func extractJSON(s string) string {
	s = strings.TrimSpace(s)
	body, ok := strings.CutPrefix(s, "```")
	if !ok {
		return s
	}
	// Drop an info string such as "json" on the opening line.
	if i := strings.IndexByte(body, '\n'); i >= 0 && isInfoString(body[:i]) {
		body = body[i+1:]
	}
	body = strings.TrimSpace(body)
	body = strings.TrimSuffix(body, "```")
	return strings.TrimSpace(body)
}

func isInfoString(s string) bool {
	return !strings.ContainsFunc(strings.TrimSpace(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '+' || r == '.')
	})
}

// parseJSON decodes exactly one JSON value, keeping numbers exact
// (json.Number) as the schema validator expects.
func parseJSON(s string) (any, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%v at byte %d", se, se.Offset)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("unexpected end of input")
		}
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value at byte %d", dec.InputOffset())
	}
	return v, nil
}

// noLoader refuses every external schema, so a $ref can neither read files
// nor reach the network. The draft meta-schemas are built in and still work.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %q not allowed", url)
}

// schemaCache keeps compiled schemas: a benchmark run scores the same schema
// once per item. It is small and simply cleared when full.
var schemaCache = struct {
	sync.Mutex
	m map[string]*jsonschema.Schema
}{m: map[string]*jsonschema.Schema{}}

const schemaCacheSize = 64

// compileSchema compiles a JSON Schema given as text (draft 2020-12 unless
// it names another with $schema).
func compileSchema(src string) (*jsonschema.Schema, error) {
	schemaCache.Lock()
	sch, ok := schemaCache.m[src]
	schemaCache.Unlock()
	if ok {
		return sch, nil
	}
	doc, err := parseJSON(extractJSON(src))
	if err != nil {
		return nil, fmt.Errorf("checks: json_schema: schema is not JSON: %v: %w", err, ErrInvalid)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("checks: json_schema: %v: %w", err, ErrInvalid)
	}
	sch, err = c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("checks: json_schema: %s: %w", clip(err.Error(), 300), ErrInvalid)
	}
	schemaCache.Lock()
	if len(schemaCache.m) >= schemaCacheSize {
		clear(schemaCache.m)
	}
	schemaCache.m[src] = sch
	schemaCache.Unlock()
	return sch, nil
}
