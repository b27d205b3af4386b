package rubric

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

// Bounds on rendering a prompt template. A template is user input: without
// them one `{{range 10000000}}` fills the server's memory, and nested loops
// burn CPU long after the client has gone.
const (
	MaxOutput     = 256 << 10              // bytes a rendered prompt may have
	RenderTimeout = 200 * time.Millisecond // time a render may take
	maxRangeInt   = 1000                   // largest integer a range may count to
	maxNesting    = 10                     // if/with/range inside one another
	// maxSteps bounds the actions a template may run, counting each action
	// once per iteration of the ranges around it (a few µs each).
	maxSteps = 20_000
)

// ErrTooBig and ErrTooSlow end a render that passes MaxOutput or RenderTimeout.
var (
	ErrTooBig  = fmt.Errorf("the prompt would be longer than %d KB", MaxOutput>>10)
	ErrTooSlow = fmt.Errorf("the prompt takes longer than %v to render", RenderTimeout)
)

// rangeBounds are the most items a range over a field of Input can see
// (tasks have at most 50 turns, styles at most 20 metrics); a range over
// anything else is counted as maxRangeInt.
var rangeBounds = map[string]int{"Turns": 50, "Answers": 50, "Metrics": 20}

// checkTree refuses, before anything runs, what a render could not survive:
// templates that call templates (they may recurse), ranges over large or
// computed integers, over-deep nesting and loops whose work multiplies
// beyond maxSteps.
func checkTree(t *template.Template) error {
	if len(t.Templates()) > 1 {
		return errors.New("{{define}}, {{block}} and {{template}} are not supported")
	}
	steps := 0
	var walk func(n parse.Node, mult, depth int) error
	walkList := func(l *parse.ListNode, mult, depth int) error {
		if l == nil {
			return nil
		}
		for _, n := range l.Nodes {
			if err := walk(n, mult, depth); err != nil {
				return err
			}
		}
		return nil
	}
	walk = func(n parse.Node, mult, depth int) error {
		steps += mult
		if steps > maxSteps {
			return fmt.Errorf("the loops would run more than %d actions", maxSteps)
		}
		var b *parse.BranchNode
		inner := mult
		switch n := n.(type) {
		case *parse.TemplateNode:
			return errors.New("{{template}} is not supported")
		case *parse.IfNode:
			b = &n.BranchNode
		case *parse.WithNode:
			b = &n.BranchNode
		case *parse.RangeNode:
			b = &n.BranchNode
			count, err := rangeCount(n.Pipe)
			if err != nil {
				return err
			}
			inner = mult * count
			steps += inner // an empty iteration costs too
			if steps > maxSteps {
				return fmt.Errorf("the loops would run more than %d actions", maxSteps)
			}
		default:
			return nil
		}
		if depth+1 > maxNesting {
			return fmt.Errorf("blocks are nested more than %d deep", maxNesting)
		}
		if err := walkList(b.List, inner, depth+1); err != nil {
			return err
		}
		return walkList(b.ElseList, mult, depth) // {{else if}} chains are not nesting
	}
	return walkList(t.Tree.Root, 1, 0)
}

// rangeCount is the most iterations a range can make: an integer literal up
// to maxRangeInt, or a field, variable or dot (at most maxRangeInt, less for
// the fields in rangeBounds). A function's result may be any integer.
func rangeCount(p *parse.PipeNode) (int, error) {
	if p == nil || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return 0, errors.New("range over a field (such as .Turns) or a number up to " + strconv.Itoa(maxRangeInt))
	}
	var idents []string
	switch a := p.Cmds[0].Args[0].(type) {
	case *parse.NumberNode:
		if !a.IsInt || a.Int64 > maxRangeInt {
			return 0, fmt.Errorf("range %s: a range counts to %d at most", a.Text, maxRangeInt)
		}
		return max(int(a.Int64), 1), nil
	case *parse.FieldNode:
		idents = a.Ident
	case *parse.VariableNode:
		idents = a.Ident[1:]
	case *parse.ChainNode:
		return maxRangeInt, nil
	case *parse.DotNode:
		return maxRangeInt, nil
	default:
		return 0, fmt.Errorf("range %s: range over a field (such as .Turns) or a number up to %d", a, maxRangeInt)
	}
	if len(idents) == 1 {
		if n, ok := rangeBounds[idents[0]]; ok {
			return n, nil
		}
	}
	return maxRangeInt, nil
}

// render executes t within MaxOutput and RenderTimeout; the timeout runs on
// ctx, so a render also ends with the request or item that asked for it.
func render(ctx context.Context, t *template.Template, data any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, RenderTimeout)
	defer cancel()
	// The builtins that build strings (printf and its kin) hold their result
	// in memory, out of the writer's sight: a variable doubled ten times by
	// printf "%s%s" $x $x reaches a gigabyte without writing a byte. Bound
	// them too, on a clone so concurrent renders keep their own context.
	t, err := t.Clone()
	if err != nil {
		return "", err
	}
	t.Funcs(boundedFuncs(ctx))
	w := &cappedWriter{ctx: ctx}
	if err := t.Execute(w, data); err != nil {
		return "", err // a write error comes back as it is: ErrTooBig, ErrTooSlow
	}
	return w.b.String(), nil
}

// cappedWriter is where a render writes. text/template takes no context, so
// the writer is where a render learns its time is up: failing a write
// aborts Execute.
type cappedWriter struct {
	ctx context.Context
	b   strings.Builder
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if err := w.ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, ErrTooSlow
		}
		return 0, err
	}
	if w.b.Len()+len(p) > MaxOutput {
		return 0, ErrTooBig
	}
	return w.b.Write(p)
}

// maxFuncBytes bounds what one call of a string builtin may allocate while
// it builds its result (fmt formats the whole result before returning it);
// the result itself may not pass MaxOutput.
const maxFuncBytes = 16 * MaxOutput

// expansion is the most a builtin's output grows over its input: %q, %x and
// "% x" on a string, or js, html and urlquery escapes (\u003C for <).
const expansion = 10

// boundedFuncs replaces text/template's string builtins with ones that
// estimate their output before building it, refuse what would pass
// maxFuncBytes or MaxOutput, and stop once ctx ends.
func boundedFuncs(ctx context.Context) template.FuncMap {
	guard := func(format string, args []any, build func() string) (string, error) {
		if err := ctx.Err(); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return "", ErrTooSlow
			}
			return "", err
		}
		if estimate(format, args) > maxFuncBytes {
			return "", ErrTooBig
		}
		out := build()
		if len(out) > MaxOutput {
			return "", ErrTooBig
		}
		return out, nil
	}
	return template.FuncMap{
		"printf": func(format string, args ...any) (string, error) {
			return guard(format, args, func() string { return fmt.Sprintf(format, args...) })
		},
		"print": func(args ...any) (string, error) {
			return guard("", args, func() string { return fmt.Sprint(args...) })
		},
		"println": func(args ...any) (string, error) {
			return guard("", args, func() string { return fmt.Sprintln(args...) })
		},
		"html": func(args ...any) (string, error) {
			return guard("", args, func() string { return template.HTMLEscaper(args...) })
		},
		"js": func(args ...any) (string, error) {
			return guard("", args, func() string { return template.JSEscaper(args...) })
		},
		"urlquery": func(args ...any) (string, error) {
			return guard("", args, func() string { return template.URLQueryEscaper(args...) })
		},
	}
}

// estimate is an upper bound on the bytes a print of args with format
// builds, stopping as soon as it passes maxFuncBytes: the format, each
// width or precision in it (fmt refuses those above 1e6, and * takes one
// from the arguments), and each argument printed on its own, grown by expansion.
func estimate(format string, args []any) int {
	const fmtMaxWidth = 1e6
	n := len(format) + len(args) // println's spaces
	for i := 0; i < len(format); i++ {
		switch c := format[i]; {
		case c == '*':
			n += fmtMaxWidth
		case c >= '0' && c <= '9':
			v := 0
			for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
				v = min(v*10+int(format[i]-'0'), fmtMaxWidth)
			}
			i--
			n += v
		}
		if n > maxFuncBytes {
			return n
		}
	}
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += expansion * len(v)
		case []byte:
			n += expansion * len(v)
		default:
			// Values other than strings come from the task and the answer
			// (a template cannot build large ones), so printing one is bounded.
			n += expansion * len(fmt.Sprint(v))
		}
		if n > maxFuncBytes {
			return n
		}
	}
	return n
}
