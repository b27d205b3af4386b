package importer

import (
	"fmt"
	"strings"
)

// parseOpenAIEvals reads OpenAI-evals samples: {"input": [messages] or
// "text", "ideal": "answer" or ["answer", …]}. System messages become the
// system prompt; the user messages after the last assistant message become
// the turns; a few-shot prefix (user/assistant pairs, or system messages named
// example_user / example_assistant) becomes Examples as a "User: … /
// Assistant: …" transcript. ideal becomes the reference (the first of a list,
// all of them in Metadata["references"]). No check is added: the sample does
// not say which eval class (Match, Includes, FuzzyMatch, model-graded) scores
// it. Other fields map as in JSONL.
func parseOpenAIEvals(data []byte) ([]row, Errors) {
	return eachJSONRecord(data, func(obj *value, b *builder) {
		for i, k := range obj.keys {
			v := obj.vals[i]
			if k != "input" {
				b.set(k, v)
				continue
			}
			if v.kind == scalar {
				b.setField("question", k, v)
				continue
			}
			if prev := b.from["question"]; prev != "" {
				b.fail(v, "question", "given twice (as %q and %q)", prev, k)
				continue
			}
			b.from["question"] = k
			if c, bad := splitMessages(v); bad != nil {
				b.fail(bad.at, "input", "%s", bad.msg)
			} else {
				c.apply(b)
			}
		}
		if b.from["question"] == "" {
			b.fail(nil, "input", "is required")
		}
	})
}

// chat is a message list split the way a task holds it.
type chat struct {
	system   []string
	turns    []string
	examples []string
}

type msgError struct {
	at  *value
	msg string
}

func (c chat) apply(b *builder) {
	b.t.SystemPrompt = joinText(c.system...)
	b.t.Turns = c.turns
	if len(c.turns) > 0 {
		b.t.Question = c.turns[0]
	}
	if len(c.examples) > 0 {
		b.t.Examples = joinText(b.t.Examples, strings.Join(c.examples, "\n\n"))
	}
}

// splitMessages maps a list of {role, content} messages (content as text or
// as a list of {type: text, text} parts).
func splitMessages(msgs *value) (chat, *msgError) {
	var c chat
	if msgs.kind != list || len(msgs.items) == 0 {
		return c, &msgError{msgs, "must be text or a non-empty list of {role, content} messages"}
	}
	type msg struct{ role, name, content string }
	parsed := make([]msg, 0, len(msgs.items))
	lastAssistant := -1
	for i, m := range msgs.items {
		if m.kind != object {
			return c, &msgError{m, fmt.Sprintf("message %d must be a {role, content} mapping", i+1)}
		}
		role := strings.ToLower(strings.TrimSpace(m.get("role").textOr("")))
		content, bad := messageText(m.get("content"))
		if bad != "" {
			return c, &msgError{m, fmt.Sprintf("message %d: %s", i+1, bad)}
		}
		switch role {
		case "system", "developer", "user":
		case "assistant":
			lastAssistant = i
		default:
			return c, &msgError{m, fmt.Sprintf("message %d: role %q is not supported (want system, user or assistant)", i+1, role)}
		}
		parsed = append(parsed, msg{role, strings.TrimSpace(m.get("name").textOr("")), content})
	}
	for i, m := range parsed {
		switch {
		case m.role == "system" && (m.name == "example_user" || m.name == "example_assistant"):
			c.examples = append(c.examples, speaker(strings.TrimPrefix(m.name, "example_"))+m.content)
		case m.role == "system" || m.role == "developer":
			c.system = append(c.system, m.content)
		case i < lastAssistant || m.role == "assistant":
			c.examples = append(c.examples, speaker(m.role)+m.content)
		default:
			c.turns = append(c.turns, m.content)
		}
	}
	if len(c.turns) == 0 {
		return c, &msgError{msgs, "has no user message after the last assistant message"}
	}
	return c, nil
}

func speaker(role string) string {
	if role == "assistant" {
		return "Assistant: "
	}
	return "User: "
}

func (v *value) textOr(def string) string {
	if v == nil || v.kind != scalar {
		return def
	}
	return v.text
}

// messageText reads content as text or a list of text parts; images and
// other parts cannot be stored in a task, so they are an error, not dropped.
func messageText(v *value) (string, string) {
	switch {
	case v.empty():
		return "", "content is empty"
	case v.kind == scalar:
		return strings.TrimSpace(v.text), ""
	case v.kind == list:
		var parts []string
		for _, p := range v.items {
			typ := p.get("type").textOr("")
			if p.kind == scalar {
				parts = append(parts, p.text)
				continue
			}
			if typ != "text" && typ != "input_text" {
				return "", fmt.Sprintf("content part of type %q is not supported (only text)", typ)
			}
			parts = append(parts, p.get("text").textOr(""))
		}
		s := strings.TrimSpace(strings.Join(parts, "\n"))
		if s == "" {
			return "", "content is empty"
		}
		return s, ""
	}
	return "", "content must be text or a list of text parts"
}
