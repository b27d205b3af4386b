package checks_test

import (
	"testing"

	"tribunal/checks"
)

func TestJSONValid(t *testing.T) {
	runTable(t, []runCase{
		{"object", checks.JSONValid, `{"a": 1}`, "", 1, "valid JSON"},
		{"scalar", checks.JSONValid, ` 42 `, "", 1, ""},
		{"fenced json", checks.JSONValid, "```json\n{\"a\": [1, 2]}\n```", "", 1, ""},
		{"fenced bare", checks.JSONValid, "\n```\n[true, null]\n```\n", "", 1, ""},
		{"fence on one line", checks.JSONValid, "```{\"a\":1}```", "", 1, ""},
		{"unclosed fence", checks.JSONValid, "```json\n{\"a\":1}", "", 1, ""},
		{"prose around", checks.JSONValid, "Here it is: {\"a\": 1}", "", 0, "invalid JSON: invalid character 'H'"},
		{"two values", checks.JSONValid, `{"a":1} {"b":2}`, "", 0, "extra data"},
		{"truncated", checks.JSONValid, `{"a": [1, 2`, "", 0, "unexpected end"},
		{"trailing comma", checks.JSONValid, `{"a": 1,}`, "", 0, "at byte"},
		{"empty", checks.JSONValid, "  ", "", 0, "empty"},
		{"only a fence", checks.JSONValid, "```json\n```", "", 0, "empty"},
		{"ref ignored", checks.JSONValid, `[]`, "not used", 1, ""},
	}, 0)
}

const personSchema = `{
  "type": "object",
  "required": ["name", "age"],
  "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer", "minimum": 0},
    "tags": {"type": "array", "items": {"type": "string"}}
  },
  "additionalProperties": false
}`

func TestJSONSchema(t *testing.T) {
	runTable(t, []runCase{
		{"valid", checks.JSONSchema, `{"name": "Ada", "age": 36}`, personSchema, 1, "valid against schema"},
		{"valid fenced", checks.JSONSchema, "```json\n{\"name\": \"Ada\", \"age\": 36, \"tags\": [\"x\"]}\n```", personSchema, 1, ""},
		{"wrong type", checks.JSONSchema, `{"name": "Ada", "age": "36"}`, personSchema, 0, "at '/age': got string, want integer"},
		{"missing property", checks.JSONSchema, `{"name": "Ada"}`, personSchema, 0, "missing property 'age'"},
		{"several errors listed briefly", checks.JSONSchema, `{"age": -1, "tags": [1, 2, 3], "x": 0}`, personSchema, 0, "more)"},
		{"big integer kept exact", checks.JSONSchema, `{"name": "A", "age": 12345678901234567890}`, personSchema, 1, ""},
		{"not json", checks.JSONSchema, `name: Ada`, personSchema, 0, "invalid JSON"},
		{"schema with local ref", checks.JSONSchema, `[1, 2]`, `{"$defs": {"n": {"type": "number"}}, "type": "array", "items": {"$ref": "#/$defs/n"}}`, 1, ""},
		{"draft-07 schema", checks.JSONSchema, `"abc"`, `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "maxLength": 2}`, 0, "maxLength"},
		{"boolean schema", checks.JSONSchema, `{"anything": 1}`, `true`, 1, ""},
	}, 0)
}
