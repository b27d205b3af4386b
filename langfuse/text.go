package langfuse

import (
	"bytes"
	"encoding/json"
	"strings"
)

// textFields are the fields that commonly hold an input's or an output's
// text, in the order they are looked for.
var textFields = []string{"content", "text", "output", "answer", "response", "completion", "question", "input", "query", "prompt"}

// wrapperFields may sit beside a text field without adding to what a judge
// should read (a chat message's role, a part's type).
var wrapperFields = map[string]bool{"role": true, "type": true, "name": true, "id": true}

// Text turns a trace's or a dataset item's input or output into the text a
// judge reads: a JSON string is its text; an object that only wraps a text
// field ({"content": …}, {"role": "assistant", "content": …}, {"answer": …})
// is that field's text; a list of text parts ([{"type": "text", "text": …}])
// is their texts, one per line; anything else is compact JSON, so that no
// part of it is lost. Null or nothing is "".
func Text(raw json.RawMessage) string {
	return text(raw, 0)
}

// maxDepth bounds how deep Text unwraps nested text fields.
const maxDepth = 8

func text(raw json.RawMessage, depth int) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if !json.Valid(raw) {
		return string(raw)
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '{':
		if depth < maxDepth {
			if s, ok := wrapped(raw, depth); ok {
				return s
			}
		}
	case '[':
		if depth < maxDepth {
			if s, ok := parts(raw, depth); ok {
				return s
			}
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// wrapped is the text of an object holding one text field and otherwise
// only wrapper fields.
func wrapped(raw json.RawMessage, depth int) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return "", false
	}
	field := ""
	for k := range obj {
		switch {
		case wrapperFields[k]:
		case field == "" && isTextField(k):
			field = k
		default:
			return "", false
		}
	}
	if field == "" {
		return "", false
	}
	v := bytes.TrimSpace(obj[field])
	if len(v) == 0 || (v[0] != '"' && v[0] != '{' && v[0] != '[') {
		return "", false // a number or a bool is no text: keep the JSON
	}
	return text(v, depth+1), true
}

// parts is the text of a list of text parts ({"type": "text", "text": …}),
// one per line; a list of chat messages stays JSON, keeping who said what.
func parts(raw json.RawMessage, depth int) (string, bool) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return "", false
	}
	texts := make([]string, len(list))
	for i, el := range list {
		var part struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(el, &part) != nil || part.Type != "text" {
			return "", false
		}
		s, ok := wrapped(el, depth+1)
		if !ok {
			return "", false
		}
		texts[i] = s
	}
	return strings.Join(texts, "\n"), true
}

func isTextField(k string) bool {
	for _, f := range textFields {
		if k == f {
			return true
		}
	}
	return false
}
