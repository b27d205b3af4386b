package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolOf is a listed tool as the model will be told of it.
func toolOf(server string, t *mcp.Tool) (Tool, error) {
	schema := json.RawMessage(`{"type":"object"}`)
	if t.InputSchema != nil {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return Tool{}, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		schema = b
	}
	return Tool{Server: server, Name: t.Name, Description: t.Description, InputSchema: schema}, nil
}

// resultOf is what the model reads of a tool's answer: the structured
// content as JSON when there is some, then every other content block as
// text, cut to maxOutput bytes.
func resultOf(res *mcp.CallToolResult, maxOutput int) Result {
	var parts []string
	var structured []byte
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			structured = b
			parts = append(parts, string(b))
		}
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && structured != nil && sameJSON(t.Text, structured) {
			continue // the text copy servers send of their structured content
		}
		parts = append(parts, contentText(c))
	}
	text, truncated := truncate(strings.Join(parts, "\n"), maxOutput)
	return Result{Text: text, IsError: res.IsError, Truncated: truncated}
}

// sameJSON reports whether text is the JSON document want (compact, keys
// sorted, as json.Marshal writes a decoded value).
func sameJSON(text string, want []byte) bool {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return false
	}
	b, err := json.Marshal(v)
	return err == nil && bytes.Equal(b, want)
}

// contentText is one content block as text; media the model cannot see
// here are described, not inlined.
func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %s bytes]", c.MIMEType, thousands(len(c.Data)))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %s bytes]", c.MIMEType, thousands(len(c.Data)))
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource: %s]", c.URI)
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return "[resource]"
		}
		if c.Resource.Text != "" {
			return c.Resource.Text
		}
		return fmt.Sprintf("[resource: %s, %s bytes]", c.Resource.URI, thousands(len(c.Resource.Blob)))
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// truncate keeps at most max bytes of s, cut at a character boundary, and
// says how much was cut.
func truncate(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: %s bytes, %s kept]", thousands(len(s)), thousands(cut)), true
}

// thousands writes n with thousands separators: 53,211.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
