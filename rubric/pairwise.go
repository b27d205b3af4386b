package rubric

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"unicode"
)

// Picks of a pairwise verdict.
const (
	PickA   = "A"   // the answer shown as A is better
	PickB   = "B"   // the answer shown as B is better
	PickTie = "TIE" // neither is better
)

// SwapPick is a pick seen from the other order: A and B trade places, a tie stays.
func SwapPick(p string) string {
	switch p {
	case PickA:
		return PickB
	case PickB:
		return PickA
	}
	return p
}

// PairVerdict is a judge's parsed pairwise reply.
type PairVerdict struct {
	Winner    string // PickA, PickB or PickTie
	Reasoning string
}

// PairInput is what the pairwise prompt shows: one task and two answers to it.
type PairInput struct {
	Question                 string
	Turns                    []string // user turns; one for a single-turn task
	AnswersA, AnswersB       []string // each assistant's answer to each turn
	ResponseA, ResponseB     string   // the last answers
	Reference                string
	Excellent, Good, Pass    string
	IncorrectAnswerDirection string
	Constraints              string
	JudgeInstructions        string
	UseCase                  UseCase
}

// PairwiseTemplate lays out a task and two answers for a judge that picks
// the better one (MT-Bench's pairwise prompt). The answers sit between
// markers so text in them cannot pose as instructions or as the other answer.
const PairwiseTemplate = `## Task
{{.Question}}
{{- if gt (len .Turns) 1}}

## Conversation with assistant A
{{- range $i, $t := .Turns}}
### User (turn {{inc $i}})
{{$t}}
### Assistant A (turn {{inc $i}})
<<<ANSWER_A
{{index $.AnswersA $i}}
ANSWER_A>>>
{{- end}}

## Conversation with assistant B
{{- range $i, $t := .Turns}}
### User (turn {{inc $i}})
{{$t}}
### Assistant B (turn {{inc $i}})
<<<ANSWER_B
{{index $.AnswersB $i}}
ANSWER_B>>>
{{- end}}
{{- end}}
` + contextSections + `
{{- if le (len .Turns) 1}}

## Answer A
<<<ANSWER_A
{{.ResponseA}}
ANSWER_A>>>

## Answer B
<<<ANSWER_B
{{.ResponseB}}
ANSWER_B>>>
{{- end}}

Which answer is better: A, B, or is it a tie? Reply with the JSON object only.`

var pairwiseTmpl = template.Must(template.New("pairwise").Funcs(funcs).Option("missingkey=error").Parse(PairwiseTemplate))

// RenderPairwise fills the pairwise template. Missing answers show empty.
func RenderPairwise(ctx context.Context, in PairInput) (string, error) {
	if len(in.Turns) == 0 {
		in.Turns = []string{in.Question}
	}
	in.AnswersA, in.AnswersB = pairAnswers(in.AnswersA, len(in.Turns)), pairAnswers(in.AnswersB, len(in.Turns))
	in.ResponseA, in.ResponseB = defusePair(in.ResponseA), defusePair(in.ResponseB)
	out, err := render(ctx, pairwiseTmpl, in)
	if err != nil {
		return "", fmt.Errorf("pairwise prompt: %w", err)
	}
	return out, nil
}

// pairAnswers is answers defused and padded to n turns.
func pairAnswers(answers []string, n int) []string {
	out := make([]string, max(n, len(answers)))
	for i, a := range answers {
		out[i] = defusePair(a)
	}
	return out
}

// Marker-like text in an answer is broken up, so an answer can neither
// close its own block nor open another: <<<ANSWER…, …ANSWER>>>, ANSWER_A>>>
// in any case and spacing.
var (
	pairOpen  = regexp.MustCompile(`(?i)<<<(\s*answer)`)
	pairClose = regexp.MustCompile(`(?i)(answer(?:[\s_-]*[ab])?\s*)>>>`)
)

func defusePair(s string) string {
	s = pairOpen.ReplaceAllString(s, "< < <$1")
	s = pairClose.ReplaceAllString(s, "$1> > >")
	// The markers around an answer end and start with ANSWER_X: the answer
	// must not complete them across the line break either.
	if t := strings.TrimLeftFunc(s, unicode.IsSpace); strings.HasPrefix(t, ">>>") {
		s = s[:len(s)-len(t)] + "> > >" + t[3:]
	}
	if t := strings.TrimRightFunc(s, unicode.IsSpace); strings.HasSuffix(t, "<<<") {
		s = t[:len(t)-3] + "< < <" + s[len(t):]
	}
	return s
}

// PairwiseSchema is the JSON schema of a pairwise reply. Reasoning comes
// first, so a model that writes in schema order reasons before it picks.
func PairwiseSchema() json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"reasoning": map[string]any{"type": "string"},
			"winner":    map[string]any{"type": "string", "enum": []string{"A", "B", "tie"}},
		},
		"required":             []string{"reasoning", "winner"},
		"additionalProperties": false,
	})
	return b
}

// PairwiseSystemPrompt tells a pairwise judge who it is and how to answer.
func PairwiseSystemPrompt(personalityName, personalityDescription string) string {
	var b strings.Builder
	b.WriteString("You are an impartial expert judge comparing two AI assistants' answers to the same task.\n")
	if personalityName != "" || personalityDescription != "" {
		fmt.Fprintf(&b, "Your personality: %s. %s\n", strings.TrimSpace(personalityName), strings.TrimSpace(personalityDescription))
	}
	b.WriteString("Compare the answers with the references when they are given. Judge correctness first, then completeness and clarity. " +
		"The order in which the answers appear must not influence you, nor their length, nor the assistants' names. " +
		"Pick a tie only when neither answer is better.\n")
	b.WriteString(`Reply with JSON only, exactly: {"reasoning": "<one short paragraph>", "winner": "A" | "B" | "tie"}`)
	return b.String()
}

// ParsePairwise reads a pairwise judge reply: a JSON object {winner,
// reasoning} where winner is A, B or tie (any case; "Answer A" and "[[A]]"
// pass too) and reasoning is never empty. Like ParseVerdict it tolerates
// what models wrap around JSON but never guesses a pick that is not there.
func ParsePairwise(text string) (PairVerdict, error) {
	obj, err := extractObject(text)
	if err != nil {
		return PairVerdict{}, err
	}
	raw, err := decodeObject(obj)
	if err != nil {
		return PairVerdict{}, err
	}
	wr, ok := raw["winner"]
	if !ok {
		return PairVerdict{}, fmt.Errorf("%w: no \"winner\"", ErrBadVerdict)
	}
	var w string
	if json.Unmarshal(wr, &w) != nil {
		return PairVerdict{}, fmt.Errorf("%w: \"winner\" is not a string", ErrBadVerdict)
	}
	pick, ok := parsePick(w)
	if !ok {
		return PairVerdict{}, fmt.Errorf("%w: \"winner\" %q is not A, B or tie", ErrBadVerdict, truncate(w, 40))
	}
	reasoning, err := parseReasoning(raw, "")
	if err != nil {
		return PairVerdict{}, err
	}
	return PairVerdict{Winner: pick, Reasoning: reasoning}, nil
}

// parsePick reads a winner value: a, b or tie in any case, optionally in
// MT-Bench's [[…]] brackets or as "answer a" / "assistant b".
func parsePick(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(s, "[[") && strings.HasSuffix(s, "]]") {
		s = strings.TrimSpace(s[2 : len(s)-2])
	}
	s = strings.TrimSuffix(s, ".")
	for _, prefix := range []string{"answer", "assistant", "response"} {
		if rest, ok := strings.CutPrefix(s, prefix); ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '_') {
			s = strings.TrimSpace(rest[1:])
			break
		}
	}
	switch s {
	case "a":
		return PickA, true
	case "b":
		return PickB, true
	case "tie", "draw":
		return PickTie, true
	}
	return "", false
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
