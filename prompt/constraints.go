package prompt

import (
	"fmt"
	"strconv"
	"strings"
)

// Constraint is one "key: value" line of a task's constraints.
type Constraint struct {
	Key, Value string
}

// ConstraintsOf reads the "key: value" lines of a task's constraints (as the
// importer writes a constraints mapping), after its output format; lines
// that are not "key: value" are free text and left out.
func ConstraintsOf(constraints string) []Constraint {
	_, rest := splitFormat(constraints)
	var out []Constraint
	for _, line := range strings.Split(rest, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		key, val, ok := strings.Cut(line, ":")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			continue
		}
		out = append(out, Constraint{Key: key, Value: strings.TrimSpace(val)})
	}
	return out
}

// BoundConflict is a min/max pair of constraints whose minimum is above its
// maximum: Min and Max index the constraints given to BoundConflicts.
type BoundConflict struct {
	Min, Max int
	Message  string
}

// BoundConflicts finds every pair min_X/max_X (or X_min/X_max) whose two
// values are numbers and whose minimum is above its maximum. A bound that is
// not a number is not compared: TaskBench's constraints may hold any value.
func BoundConflicts(cs []Constraint) []BoundConflict {
	at := make(map[string]int, len(cs))
	for i, c := range cs {
		at[strings.ToLower(c.Key)] = i
	}
	var out []BoundConflict
	for i, c := range cs {
		k := strings.ToLower(c.Key)
		var partner string
		switch {
		case strings.HasPrefix(k, "min_"):
			partner = "max_" + k[len("min_"):]
		case strings.HasSuffix(k, "_min"):
			partner = k[:len(k)-len("_min")] + "_max"
		default:
			continue
		}
		j, ok := at[partner]
		if !ok {
			continue
		}
		lo, err1 := strconv.ParseFloat(strings.TrimSpace(c.Value), 64)
		hi, err2 := strconv.ParseFloat(strings.TrimSpace(cs[j].Value), 64)
		if err1 == nil && err2 == nil && lo > hi {
			out = append(out, BoundConflict{Min: i, Max: j,
				Message: fmt.Sprintf("%s (%s) is more than %s (%s): no answer can meet both", c.Key, c.Value, cs[j].Key, cs[j].Value)})
		}
	}
	return out
}

// WordedKeys describes the constraint keys Build writes out as sentences.
const WordedKeys = "min_…, max_…, must_… and required_fields"

// InWords is the line a "key: value" constraint becomes in the prompt, and
// whether its key is one Build writes out as a sentence (see WordedKeys)
// rather than passing on as written.
func InWords(c Constraint) (line string, worded bool) {
	return sentence(c.Key + ": " + c.Value)
}
