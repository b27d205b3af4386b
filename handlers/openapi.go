package handlers

import (
	"cmp"
	"encoding/json"
	"maps"
	"net/http"
	"path"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/trajectory"
)

// apiRoute is one route of the JSON API. routes.go registers it and
// GET /api/openapi.json describes it from the same entry, so neither can
// drift from the other.
type apiRoute struct {
	method  string
	path    string // under /api, in Echo's syntax (/runs/:run)
	handler echo.HandlerFunc
	summary string
	query   string // the query parameters' names, space-separated
	// in is the JSON body's type (nil: no body); out the reply's (nil: 204,
	// unless media names what is sent instead of JSON).
	in, out any
	media   []string // the reply's media types when it is not JSON
	status  int      // on success; 200 when zero (204 without a reply)
	errs    []int    // error statuses the entry does not imply (409, 422, 502, …)
	upload  bool     // the body is a task file (multipart field "file", or raw)
	maybe   bool     // the body may be left out
	gzips   bool     // the handler gzips its reply itself (startExport)
	invalid any      // the 422 reply when it says more than ErrorJSON
	// also are further successful replies by status (an import of outputs
	// answers 201 with another body than a task import's 200).
	also map[int]any
}

// ErrorJSON is every error reply of the API.
type ErrorJSON struct {
	Error string `json:"error"`
}

// queryTypes gives the query parameters that are not plain strings their type.
var queryTypes = map[string]string{"page": "integer", "per_page": "integer", "limit": "integer", "after": "integer",
	"a": "integer", "b": "integer", "baseline": "integer", "alert_id": "integer", "schedule_id": "integer",
	"run_id": "integer", "collection_id": "integer", "agent_id": "integer", "dry_run": "boolean", "unread": "boolean",
	"budget_usd_per_1k": "number", "min_overall": "number", "max_latency_ms": "number", "min_items": "integer"}

// pathEnums lists the values of the path parameters that are not ids.
var pathEnums = map[string][]string{"action": {"pause", "resume", "cancel"}}

var echoParam = regexp.MustCompile(`:(\w+)`)

// openAPIPath turns Echo's /runs/:run into OpenAPI's /runs/{run}.
func openAPIPath(p string) string { return echoParam.ReplaceAllString(p, "{$1}") }

// openAPI describes the routes as an OpenAPI 3.1 document.
func openAPI(routes []apiRoute) map[string]any {
	g := &schemaGen{schemas: map[string]any{}, names: map[schemaKey]string{}}
	paths := map[string]map[string]any{}
	ids := map[string]bool{}
	for _, r := range routes {
		p := "/api" + openAPIPath(r.path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		op := g.operation(r)
		// A handler serving two routes (PUT and PATCH) names both operations.
		id := operationID(r.handler)
		for n := 2; ids[id]; n++ {
			id = operationID(r.handler) + strconv.Itoa(n)
		}
		ids[id] = true
		op["operationId"] = id
		paths[p][strings.ToLower(r.method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Tribunal API", "version": "1",
			"description": "Tribunal's JSON API. Bodies and replies are JSON with snake_case keys; every error is {\"error\": \"…\"}. " +
				"Request fields may be left out (they take their zero value, or with PUT/PATCH on schedules, KPIs and alerts keep the current one)."},
		"paths":      paths,
		"components": map[string]any{"schemas": g.schemas},
	}
}

func (g *schemaGen) operation(r apiRoute) map[string]any {
	op := map[string]any{"summary": r.summary}
	var params []any
	for _, m := range echoParam.FindAllStringSubmatch(r.path, -1) {
		s := map[string]any{"type": "integer", "format": "int64", "minimum": 1}
		if enum, ok := pathEnums[m[1]]; ok {
			s = map[string]any{"type": "string", "enum": enum}
		}
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": s})
	}
	for _, q := range strings.Fields(r.query) {
		params = append(params, map[string]any{"name": q, "in": "query", "schema": map[string]any{"type": cmp.Or(queryTypes[q], "string")}})
	}
	if params != nil {
		op["parameters"] = params
	}
	errs := slices.Clone(r.errs)
	if strings.Contains(r.path, ":") {
		errs = append(errs, http.StatusNotFound)
	}
	if r.query != "" {
		errs = append(errs, http.StatusBadRequest)
	}
	if r.method != http.MethodGet {
		errs = append(errs, http.StatusForbidden) // another site's Origin
	}
	switch {
	case r.in != nil:
		schema := g.schema(reflect.TypeOf(r.in), false)
		op["requestBody"] = map[string]any{"required": !r.maybe, "content": map[string]any{"application/json": map[string]any{"schema": schema}}}
		errs = append(errs, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)
	case r.upload:
		file := map[string]any{"type": "string", "contentMediaType": "application/octet-stream"}
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
			"multipart/form-data":      map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{"file": file}}},
			"application/octet-stream": map[string]any{"schema": file}}}
		errs = append(errs, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity)
	}
	status := cmp.Or(r.status, http.StatusOK)
	resp := map[string]any{}
	switch {
	case r.out != nil:
		resp[strconv.Itoa(status)] = map[string]any{"description": http.StatusText(status),
			"content": map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(r.out), true)}}}
	case r.media != nil:
		content := map[string]any{}
		for _, m := range r.media {
			content[m] = map[string]any{"schema": map[string]any{"type": "string"}}
		}
		resp[strconv.Itoa(status)] = map[string]any{"description": http.StatusText(status), "content": content}
	default:
		resp["204"] = map[string]any{"description": http.StatusText(http.StatusNoContent)}
	}
	for code, out := range r.also {
		resp[strconv.Itoa(code)] = map[string]any{"description": http.StatusText(code),
			"content": map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(out), true)}}}
	}
	errRef := g.schema(reflect.TypeFor[ErrorJSON](), true)
	for _, code := range errs {
		schema := errRef
		if code == http.StatusUnprocessableEntity && r.invalid != nil {
			schema = g.schema(reflect.TypeOf(r.invalid), true)
		}
		resp[strconv.Itoa(code)] = map[string]any{"description": http.StatusText(code),
			"content": map[string]any{"application/json": map[string]any{"schema": schema}}}
	}
	op["responses"] = resp
	return op
}

// operationID names an operation after its handler method (apiListRuns → listRuns).
func operationID(h echo.HandlerFunc) string {
	name := runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
	name = strings.TrimSuffix(name[strings.LastIndex(name, ".")+1:], "-fm")
	name = strings.TrimPrefix(name, "api")
	return strings.ToLower(name[:1]) + name[1:]
}

// schemaKey tells a type's schema as a reply (fields the encoder always
// writes are required) from its schema as a body (no field is required).
type schemaKey struct {
	t     reflect.Type
	reply bool
}

// schemaGen derives JSON Schemas from Go types the way encoding/json
// writes them; named structs become components.
type schemaGen struct {
	schemas map[string]any
	names   map[schemaKey]string
}

// customSchemas are the schemas of the types that write their own JSON
// unlike their fields would.
var customSchemas = map[reflect.Type]map[string]any{
	reflect.TypeFor[time.Time]():       {"type": "string", "format": "date-time"},
	reflect.TypeFor[json.RawMessage](): {},
	reflect.TypeFor[store.TaskRef]():   {"type": []string{"integer", "string"}, "description": "a task's numeric id or its task_id"},
	reflect.TypeFor[trajectory.Args](): {"description": "the call's arguments: the JSON the model wrote, or the string it sent when that was no JSON"},
}

func (g *schemaGen) schema(t reflect.Type, reply bool) map[string]any {
	if s, ok := customSchemas[t]; ok {
		return maps.Clone(s)
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := g.schema(t.Elem(), reply)
		if typ, ok := s["type"].(string); ok {
			s = maps.Clone(s)
			s["type"] = []string{typ, "null"}
			return s
		}
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": g.schema(t.Elem(), reply)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem(), reply)}
	case reflect.Struct:
		if t.Name() == "" || strings.Contains(t.Name(), "[") {
			return g.object(t, reply) // anonymous or generic: inline
		}
		return g.ref(t, reply)
	}
	return map[string]any{} // interfaces: any JSON value
}

// ref answers a $ref to the component of a named struct, made on first use.
func (g *schemaGen) ref(t reflect.Type, reply bool) map[string]any {
	key := schemaKey{t, reply}
	name, ok := g.names[key]
	if !ok {
		name = path.Base(t.PkgPath()) + "." + t.Name()
		if _, taken := g.names[schemaKey{t, !reply}]; taken {
			name += map[bool]string{true: "Reply", false: "Body"}[reply]
		}
		g.names[key] = name
		g.schemas[name] = g.object(t, reply)
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func (g *schemaGen) object(t reflect.Type, reply bool) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range jsonFields(t) {
		s := g.schema(f.typ, reply)
		if f.asString {
			s = map[string]any{"type": "string"}
		}
		props[f.name] = s
		if reply && !f.omit {
			required = append(required, f.name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// jsonField is a field as encoding/json writes it.
type jsonField struct {
	name     string
	typ      reflect.Type
	omit     bool // omitempty or omitzero: it may be absent
	asString bool // ,string
}

// jsonFields lists a struct's fields as encoding/json sees them: tags
// respected, untagged embedded structs flattened, shallower fields hiding
// deeper ones of the same name.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	seen := map[string]bool{}
	current := []reflect.Type{t}
	for len(current) > 0 {
		var next []reflect.Type
		found := map[string]bool{}
		for _, st := range current {
			for i := range st.NumField() {
				f := st.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				ft := f.Type
				if f.Anonymous && name == "" {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if ft.Kind() == reflect.Struct {
						next = append(next, ft)
						continue
					}
				}
				if !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				if seen[name] {
					continue
				}
				found[name] = true
				out = append(out, jsonField{name: name, typ: f.Type,
					omit:     strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero"),
					asString: strings.Contains(opts, "string")})
			}
		}
		for n := range found {
			seen[n] = true
		}
		current = next
	}
	return out
}

// apiOpenAPI answers the OpenAPI document of the API routes.
func (h *Handler) apiOpenAPI(c echo.Context) error {
	return c.JSON(http.StatusOK, h.openAPI())
}
