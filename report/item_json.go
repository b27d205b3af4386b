package report

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendItemJSON appends it as json.Marshal writes it, byte for byte, but
// without reflection or an allocation per field: at a million items
// encoding/json was most of the JSON export's own time. An agent's item
// (a trajectory, rare) goes through json.Marshal as it is. The tests
// compare the two on items of every shape.
func appendItemJSON(b []byte, it *Item) []byte {
	if it.Agent != nil || it.ToolCalls != nil || it.Turns != nil {
		return append(b, mustJSON(it)...)
	}
	v := &it.ItemView
	b = strconv.AppendInt(append(b, `{"id":`...), v.ID, 10)
	b = appendJSONString(append(b, `,"task_id":`...), v.TaskID)
	b = appendJSONString(append(b, `,"category":`...), v.Category)
	b = appendJSONString(append(b, `,"subcategory":`...), v.Subcategory)
	b = appendJSONString(append(b, `,"question":`...), v.Question)
	b = appendJSONString(append(b, `,"reference":`...), v.Reference)
	b = appendJSONString(append(b, `,"provider":`...), v.Provider)
	b = appendJSONString(append(b, `,"model":`...), v.Model)
	b = appendJSONString(append(b, `,"status":`...), string(v.Status))
	b = strconv.AppendInt(append(b, `,"repeat":`...), int64(v.RepeatIndex), 10)
	b = appendJSONFloatPtr(append(b, `,"score":`...), v.Score)
	b = appendJSONString(append(b, `,"judge":`...), v.Judge)
	b = appendJSONString(append(b, `,"reasoning":`...), v.Reasoning)
	b = appendJSONStringPtr(append(b, `,"response":`...), v.Response)
	b = appendJSONString(append(b, `,"error":`...), v.Error)
	b = appendJSONIntPtr(append(b, `,"time_ms":`...), v.TimeMs)
	b = appendJSONIntPtr(append(b, `,"prompt_tokens":`...), v.PromptTokens)
	b = appendJSONIntPtr(append(b, `,"tokens":`...), v.CompletionTokens)
	b = appendJSONFloatPtr(append(b, `,"tps":`...), v.TokensPerS)
	b = appendJSONFloatPtr(append(b, `,"cost_usd":`...), v.CostUSD)
	b = appendJSONString(append(b, `,"cost_source":`...), string(v.CostSource))
	b = appendJSONString(append(b, `,"judge_cost_source":`...), string(v.JudgeCostSource))
	b = appendJSONStringPtr(append(b, `,"grade":`...), v.Grade)
	b = strconv.AppendInt(append(b, `,"answer_attempts":`...), int64(v.AnswerAttempts), 10)
	b = strconv.AppendInt(append(b, `,"judge_attempts":`...), int64(v.JudgeAttempts), 10)
	if v.FailedPhase != "" {
		b = appendJSONString(append(b, `,"failed_phase":`...), v.FailedPhase)
	}
	b = appendJSONTime(append(b, `,"updated_at":`...), v.UpdatedAt)
	b = append(b, `,"tool_calls":null,"scores":`...)
	b = appendScoresJSON(b, it.Scores)
	b = append(b, `,"violations":`...)
	if it.Violations == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, x := range it.Violations {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, `{"judge":`...), x.Judge)
			b = appendJSONString(append(b, `,"category":`...), x.Category)
			b = appendJSONString(append(b, `,"detail":`...), x.Detail)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if it.GradeNotes != "" {
		b = appendJSONString(append(b, `,"grade_notes":`...), it.GradeNotes)
	}
	return append(b, '}')
}

// appendScoresJSON appends an item's scores as json.Marshal writes them.
func appendScoresJSON(b []byte, scores []Score) []byte {
	if scores == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range scores {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, `{"judge":`...), s.Judge)
		b = appendJSONString(append(b, `,"metric":`...), s.Metric)
		b = appendJSONFloat(append(b, `,"score":`...), s.Score)
		if s.Reasoning != "" {
			b = appendJSONString(append(b, `,"reasoning":`...), s.Reasoning)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendJSONStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

func appendJSONIntPtr(b []byte, n *int64) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *n, 10)
}

func appendJSONFloatPtr(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return appendJSONFloat(b, *f)
}

// appendJSONFloat writes f as encoding/json does (ES6 number formatting).
// NaN and ±Inf never reach it: json.Marshal refuses them, and the
// store holds none.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 → e-9, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONTime writes t as time.Time's MarshalJSON does.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendJSONString writes s quoted as encoding/json does with its default
// HTML escaping: <, > and & as \u003c…, control bytes escaped, invalid
// UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
