package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"tribunal/store"
)

// JudgeContract names the judge prompt and output schema below; it is stored
// in each run's snapshot so results say which contract produced them.
const JudgeContract = "tribunal-judge-v1 (score 1-10 + reasoning)"

// judgeSystemPrompt tells the judge how to grade and how to answer.
const judgeSystemPrompt = `You are an impartial expert judge grading an AI model's answer to a task.
Compare the answer with the reference answers when they are given:
"excellent" describes an ideal answer, "good" an acceptable one and "pass" the minimum to pass.
An answer that goes in the "incorrect answer direction" is wrong and must score low.
Grade on correctness first, then completeness and clarity. Do not reward length.
Reply with JSON only, exactly: {"score": <integer 1-10>, "reasoning": "<one short paragraph>"}
where 1 is completely wrong and 10 is excellent.`

// JudgeSchema is the JSON schema the judge's reply must satisfy.
var JudgeSchema = json.RawMessage(`{"type":"object","properties":{"score":{"type":"integer","minimum":1,"maximum":10},"reasoning":{"type":"string"}},"required":["score","reasoning"],"additionalProperties":false}`)

// judgePrompt lays out the task, references and answer for the judge. The
// answer sits between markers so text in it cannot pose as instructions.
func judgePrompt(t store.RunTask, response string) string {
	var b strings.Builder
	section := func(title, body string) {
		if strings.TrimSpace(body) == "" {
			return
		}
		fmt.Fprintf(&b, "## %s\n%s\n\n", title, strings.TrimSpace(body))
	}
	section("Task", t.Question)
	section("Reference: excellent answer", t.Excellent)
	section("Reference: good answer", t.Good)
	section("Reference: pass answer", t.Pass)
	section("Incorrect answer direction", t.IncorrectAnswerDirection)
	b.WriteString("## Answer to grade\n<<<ANSWER\n")
	b.WriteString(response)
	b.WriteString("\nANSWER>>>\n\nGrade the answer. Reply with the JSON object only.")
	return b.String()
}

// Verdict is a judge's parsed reply.
type Verdict struct {
	Score     int
	Reasoning string
}

// ErrBadVerdict means the judge's reply does not fit the schema.
var ErrBadVerdict = errors.New("judge reply does not fit the schema")

// ParseVerdict reads a judge reply: a JSON object with an integer "score"
// from 1 to 10 and a non-empty "reasoning". It tolerates what models wrap
// around JSON (code fences, a sentence before or after) but never guesses a
// score that is not there.
func ParseVerdict(text string) (Verdict, error) {
	obj, err := extractObject(text)
	if err != nil {
		return Verdict{}, err
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Verdict{}, fmt.Errorf("%w: not a JSON object: %v", ErrBadVerdict, err)
	}
	scoreRaw, ok := raw["score"]
	if !ok {
		return Verdict{}, fmt.Errorf("%w: no \"score\"", ErrBadVerdict)
	}
	var num json.Number
	if err := json.Unmarshal(scoreRaw, &num); err != nil {
		// Some models quote numbers: accept "7" but nothing else.
		var s string
		if json.Unmarshal(scoreRaw, &s) != nil {
			return Verdict{}, fmt.Errorf("%w: \"score\" is not a number", ErrBadVerdict)
		}
		num = json.Number(strings.TrimSpace(s))
	}
	f, err := num.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return Verdict{}, fmt.Errorf("%w: \"score\" is not a number", ErrBadVerdict)
	}
	if f != math.Trunc(f) {
		return Verdict{}, fmt.Errorf("%w: \"score\" %s is not an integer", ErrBadVerdict, num)
	}
	if f < 1 || f > 10 {
		return Verdict{}, fmt.Errorf("%w: \"score\" %s is outside 1-10", ErrBadVerdict, num)
	}
	var reasoning string
	if r, ok := raw["reasoning"]; !ok || json.Unmarshal(r, &reasoning) != nil {
		return Verdict{}, fmt.Errorf("%w: no \"reasoning\" string", ErrBadVerdict)
	}
	if strings.TrimSpace(reasoning) == "" {
		return Verdict{}, fmt.Errorf("%w: \"reasoning\" is empty", ErrBadVerdict)
	}
	return Verdict{Score: int(f), Reasoning: strings.TrimSpace(reasoning)}, nil
}

// extractObject finds the first balanced top-level JSON object in text.
func extractObject(text string) ([]byte, error) {
	start := strings.IndexByte(text, '{')
	if start < 0 {
		return nil, fmt.Errorf("%w: no JSON object in the reply", ErrBadVerdict)
	}
	depth, inString, escaped := 0, false, false
	for i := start; i < len(text); i++ {
		c := text[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return []byte(text[start : i+1]), nil
			}
		}
	}
	return nil, fmt.Errorf("%w: the JSON object is not closed", ErrBadVerdict)
}
