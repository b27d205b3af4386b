package rubric

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// MetricScore is a judge's score of one metric.
type MetricScore struct {
	Metric    string
	Score     float64
	Reasoning string
}

// Verdict is a judge's parsed reply: a score per metric, the overall score
// and, when the style asks for them, the violations the judge listed.
type Verdict struct {
	Scores     []MetricScore
	Overall    float64
	Violations []Violation
	// Note says what of the violations could not be read (the verdict
	// scores all the same); empty when they were read in full.
	Note string
}

// Reasoning is the verdict's reasoning: the only metric's, or each metric's in turn.
func (v Verdict) Reasoning() string {
	if len(v.Scores) == 1 {
		return v.Scores[0].Reasoning
	}
	parts := make([]string, len(v.Scores))
	for i, s := range v.Scores {
		parts[i] = fmt.Sprintf("%s %g: %s", s.Metric, s.Score, s.Reasoning)
	}
	return strings.Join(parts, "\n")
}

// ErrBadVerdict means the judge's reply does not fit the schema.
var ErrBadVerdict = errors.New("judge reply does not fit the schema")

// ParseVerdict reads a judge reply against a style: for one metric a JSON
// object {score, reasoning}; for several, {metric: {score, reasoning}}. Scores
// are whole numbers within the scale and reasoning is never empty. It
// tolerates what models wrap around JSON (code fences, a sentence before or
// after) but never guesses a score that is not there. With violations (the
// style asks for them) it also reads the reply's "violations" list, leniently:
// a list it cannot read leaves a Note, never an error.
func ParseVerdict(text string, metrics []Metric, scaleMin, scaleMax int, violations bool) (Verdict, error) {
	obj, err := extractObject(text)
	if err != nil {
		return Verdict{}, err
	}
	raw, err := decodeObject(obj)
	if err != nil {
		return Verdict{}, err
	}
	v, err := parseScores(raw, metrics, scaleMin, scaleMax)
	if err != nil {
		return Verdict{}, err
	}
	if violations {
		v.Violations, v.Note = parseViolations(raw)
	}
	return v, nil
}

// parseScores reads the scores of a decoded reply and weighs the overall.
func parseScores(raw map[string]json.RawMessage, metrics []Metric, scaleMin, scaleMax int) (Verdict, error) {
	var v Verdict
	if len(metrics) == 1 {
		s, err := parseScore(raw, "", scaleMin, scaleMax)
		if err != nil {
			return Verdict{}, err
		}
		s.Metric = metrics[0].Name
		v.Scores = []MetricScore{s}
		v.Overall = s.Score
		return v, nil
	}
	var sum, weights float64
	for _, m := range metrics {
		part, ok := raw[m.Name]
		if !ok {
			return Verdict{}, fmt.Errorf("%w: no %q", ErrBadVerdict, m.Name)
		}
		inner, err := decodeObject(part)
		if err != nil {
			return Verdict{}, fmt.Errorf("%w: %q is not an object", ErrBadVerdict, m.Name)
		}
		s, err := parseScore(inner, m.Name+".", scaleMin, scaleMax)
		if err != nil {
			return Verdict{}, err
		}
		s.Metric = m.Name
		v.Scores = append(v.Scores, s)
		sum += m.Weight * s.Score
		weights += m.Weight
	}
	if weights > 0 {
		v.Overall = sum / weights
	} else {
		for _, s := range v.Scores {
			v.Overall += s.Score / float64(len(v.Scores))
		}
	}
	return v, nil
}

func decodeObject(b []byte) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrBadVerdict)
	}
	return raw, nil
}

func parseScore(raw map[string]json.RawMessage, prefix string, scaleMin, scaleMax int) (MetricScore, error) {
	scoreRaw, ok := raw["score"]
	if !ok {
		return MetricScore{}, fmt.Errorf("%w: no \"%sscore\"", ErrBadVerdict, prefix)
	}
	var num json.Number
	if err := json.Unmarshal(scoreRaw, &num); err != nil {
		// Some models quote numbers: accept "7" but nothing else.
		var s string
		if json.Unmarshal(scoreRaw, &s) != nil {
			return MetricScore{}, fmt.Errorf("%w: \"%sscore\" is not a number", ErrBadVerdict, prefix)
		}
		num = json.Number(strings.TrimSpace(s))
	}
	f, err := num.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return MetricScore{}, fmt.Errorf("%w: \"%sscore\" is not a number", ErrBadVerdict, prefix)
	}
	if f != math.Trunc(f) {
		return MetricScore{}, fmt.Errorf("%w: \"%sscore\" %s is not an integer", ErrBadVerdict, prefix, num)
	}
	if f < float64(scaleMin) || f > float64(scaleMax) {
		return MetricScore{}, fmt.Errorf("%w: \"%sscore\" %s is outside %d-%d", ErrBadVerdict, prefix, num, scaleMin, scaleMax)
	}
	reasoning, err := parseReasoning(raw, prefix)
	if err != nil {
		return MetricScore{}, err
	}
	return MetricScore{Score: f, Reasoning: reasoning}, nil
}

// parseReasoning reads the non-empty "reasoning" string of a reply object,
// trimmed; prefix names the object in errors.
func parseReasoning(raw map[string]json.RawMessage, prefix string) (string, error) {
	var reasoning string
	if r, ok := raw["reasoning"]; !ok || json.Unmarshal(r, &reasoning) != nil {
		return "", fmt.Errorf("%w: no \"%sreasoning\" string", ErrBadVerdict, prefix)
	}
	if reasoning = strings.TrimSpace(reasoning); reasoning == "" {
		return "", fmt.Errorf("%w: \"%sreasoning\" is empty", ErrBadVerdict, prefix)
	}
	return reasoning, nil
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
