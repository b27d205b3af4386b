package analysis

import "strings"

// Joined rebuilds one side of a diff: "-" for A, "+" for B.
func Joined(ops []DiffOp, side string) string {
	var b strings.Builder
	for _, op := range ops {
		if op.Kind == "=" || op.Kind == side {
			b.WriteString(op.Text)
		}
	}
	return b.String()
}
