package handlers

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/engine"
	"tribunal/report"
	"tribunal/store"
	"tribunal/store/storetest"
)

func newEcho(t *testing.T) *echo.Echo {
	t.Helper()
	st := storetest.SQLite(t)
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	return New(st, eng, slog.New(slog.DiscardHandler))
}

// TestOpenAPICoversRoutes fails when an /api/ route is registered without
// being documented (say with api.GET instead of an apiRoutes entry), or
// documented without being registered.
func TestOpenAPICoversRoutes(t *testing.T) {
	e := newEcho(t)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil)
	req.Host = "localhost" // httptest's example.com is not an allowed host
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/openapi.json: status %d: %s", rec.Code, rec.Body)
	}
	var doc struct {
		OpenAPI    string                               `json:"openapi"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	var documented []string
	for p, ops := range doc.Paths {
		for method, op := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+p)
			if resp, _ := op["responses"].(map[string]any); len(resp) == 0 {
				t.Errorf("%s %s has no response", method, p)
			}
		}
	}
	var registered []string
	for _, r := range e.Routes() {
		if strings.HasPrefix(r.Path, "/api/") && r.Path != "/api/*" {
			registered = append(registered, r.Method+" "+openAPIPath(r.Path))
		}
	}
	slices.Sort(documented)
	slices.Sort(registered)
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			t.Errorf("%s is registered but not in /api/openapi.json: add it to apiRoutes", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(registered, d) {
			t.Errorf("%s is documented but not registered", d)
		}
	}
	refs := regexp.MustCompile(`"#/components/schemas/([^"]+)"`).FindAllStringSubmatch(rec.Body.String(), -1)
	for _, m := range refs {
		if doc.Components.Schemas[m[1]] == nil {
			t.Errorf("$ref to missing schema %s", m[1])
		}
	}
}

var marshaler = reflect.TypeFor[json.Marshaler]()

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestJSONSnakeCase walks every type the API reads or writes and fails on
// an exported field whose JSON key is not snake_case (Go names it Mean
// without a tag).
func TestJSONSnakeCase(t *testing.T) {
	types := []reflect.Type{reflect.TypeFor[ErrorJSON](), reflect.TypeFor[ProgressEventJSON](), reflect.TypeFor[store.RunLog](),
		// The JSON export (report.WriteJSON) writes these under its own keys.
		reflect.TypeFor[store.Run](), reflect.TypeFor[report.Judge](), reflect.TypeFor[store.Progress](), reflect.TypeFor[store.RunSummary](),
		reflect.TypeFor[store.RunMetrics](), reflect.TypeFor[report.Task](), reflect.TypeFor[report.Item]()}
	for _, r := range (&Handler{}).apiRoutes() {
		for _, v := range []any{r.in, r.out, r.invalid} {
			if v != nil {
				types = append(types, reflect.TypeOf(v))
			}
		}
	}
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		if typ.Implements(marshaler) || reflect.PointerTo(typ).Implements(marshaler) {
			return // it writes its own JSON (TagList, TaskRef)
		}
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map: // map keys are data
			walk(typ.Elem(), path)
		case reflect.Struct:
			if typ == reflect.TypeFor[time.Time]() {
				return
			}
			for i := range typ.NumField() {
				f := typ.Field(i)
				tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				switch {
				case tag == "-" || !f.IsExported() && !f.Anonymous:
				case f.Anonymous && tag == "":
					walk(f.Type, path)
				case !snakeCase.MatchString(tag):
					t.Errorf("%s.%s (in %s): JSON key %q is not snake_case; tag it", typ, f.Name, path, cmpOr(tag, f.Name))
				default:
					walk(f.Type, path+"."+tag)
				}
			}
		}
	}
	for _, typ := range types {
		walk(typ, typ.String())
	}
}
