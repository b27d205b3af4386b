package store

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// NULField is the path of the first string in v holding a NUL byte ("" if
// none), named as in JSON: question, turns[1], headers[0].value,
// metadata.key. PostgreSQL text cannot hold NUL, so input carrying one is
// refused before it reaches either database.
func NULField(v any) string {
	return nulIn(reflect.ValueOf(v), "")
}

// NULMessage says what is wrong with a field NULField names.
const NULMessage = "contains a NUL byte (\\u0000), which text fields cannot hold"

func nulIn(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.String:
		if strings.IndexByte(v.String(), 0) >= 0 {
			return cmp.Or(path, "(body)")
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nulIn(v.Elem(), path)
		}
	case reflect.Slice, reflect.Array:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			var decoded any
			if json.Unmarshal(v.Bytes(), &decoded) == nil {
				return nulIn(reflect.ValueOf(decoded), path)
			}
			return ""
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "" // bytes are not text
		}
		for i := range v.Len() {
			if p := nulIn(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			kp := join(path, fmt.Sprint(k))
			if p := nulIn(k, kp); p != "" {
				return p
			}
			if p := nulIn(v.MapIndex(k), kp); p != "" {
				return p
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			p := path
			if name != "" || !f.Anonymous { // an embedded struct's fields sit at its parent's level in JSON
				p = join(path, cmp.Or(name, f.Name))
			}
			if found := nulIn(v.Field(i), p); found != "" {
				return found
			}
		}
	}
	return ""
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
