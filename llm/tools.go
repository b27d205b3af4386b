package llm

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// Tool is a function the model may call, described by a JSON Schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is one call of a tool the model asked for. Arguments are the
// text the model wrote, which need not be valid JSON.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// messageParam is a message as the SDK sends it.
func messageParam(m Message) openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case "system":
		return openai.SystemMessage(m.Content)
	case "tool":
		return openai.ToolMessage(m.Content, m.ToolCallID)
	case "assistant":
		if len(m.ToolCalls) == 0 {
			return openai.AssistantMessage(m.Content)
		}
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments}}})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	}
	return openai.UserMessage(m.Content)
}

// toolParams adds the request's tools as OpenAI function tools.
func toolParams(params *openai.ChatCompletionNewParams, req Request) error {
	for _, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return fmt.Errorf("llm: tool %s: the input schema is not a JSON object: %w", t.Name, err)
			}
			def.Parameters = schema
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if req.ParallelToolCalls != nil && len(req.Tools) > 0 {
		params.ParallelToolCalls = openai.Bool(*req.ParallelToolCalls)
	}
	return nil
}

// toolCallsOf lists the function calls of a reply; other kinds of call
// (custom tools) are never offered, so never asked for.
func toolCallsOf(msg openai.ChatCompletionMessage) []ToolCall {
	var out []ToolCall
	for _, c := range msg.ToolCalls {
		if c.Type != "" && c.Type != "function" {
			continue
		}
		out = append(out, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return out
}

// reasoningOf reads the reasoning text providers add to the message under
// names of their own.
func reasoningOf(msg openai.ChatCompletionMessage) string {
	for _, key := range []string{"reasoning", "reasoning_content"} {
		f, ok := msg.JSON.ExtraFields[key] // extra fields are never Valid(): read the raw value
		if !ok || f.Raw() == "" {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}
