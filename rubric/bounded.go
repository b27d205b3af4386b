package rubric

import (
	"context"
	"fmt"
	"strings"
	"text/template"
)

// ParseBounded compiles another user-written template (a task's
// prompt_template) under the bounds of a judge's: no {{template}}, ranges
// that count to maxRangeInt at most, limited nesting and loop work.
func ParseBounded(name, text string) (*template.Template, error) {
	if len(text) > maxTemplate {
		return nil, fmt.Errorf("the template is longer than %d bytes", maxTemplate)
	}
	t, err := template.New(name).Option("missingkey=error").Parse(strings.TrimSpace(text))
	if err != nil {
		return nil, err
	}
	if err := checkTree(t); err != nil {
		return nil, err
	}
	return t, nil
}

// RenderBounded renders a template from ParseBounded within MaxOutput and
// RenderTimeout.
func RenderBounded(ctx context.Context, t *template.Template, data any) (string, error) {
	return render(ctx, t, data)
}
