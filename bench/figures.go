package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Figure is one measured number, with the target when it has one.
type Figure struct {
	Name  string
	Value float64
	Unit  string
	// Target reads like "< 10 s"; empty for a figure that only informs.
	Target string
	// Pass says whether Value meets Target; nil when there is no target.
	Pass *bool
}

// Verdict is PASS, MISS, or "" for a figure without a target.
func (f Figure) Verdict() string {
	switch {
	case f.Pass == nil:
		return ""
	case *f.Pass:
		return "PASS"
	default:
		return "MISS"
	}
}

// below is a figure whose target is a ceiling.
func below(name string, value float64, unit string, limit float64) Figure {
	pass := value < limit
	return Figure{Name: name, Value: value, Unit: unit, Target: fmt.Sprintf("< %s %s", num(limit), unit), Pass: &pass}
}

// atLeast is a figure whose target is a floor.
func atLeast(name string, value float64, unit string, floor float64) Figure {
	pass := value >= floor
	return Figure{Name: name, Value: value, Unit: unit, Target: fmt.Sprintf("≥ %s %s", num(floor), unit), Pass: &pass}
}

// postgresOnly is f, unless the bench runs on SQLite: there the issue
// sets the page and memory targets alone, so f's target is shown, named
// as PostgreSQL's, without a verdict.
func postgresOnly(postgres bool, f Figure) Figure {
	if postgres || f.Pass == nil {
		return f
	}
	f.Target, f.Pass = f.Target+" on PostgreSQL", nil
	return f
}

// info is a figure without a target.
func info(name string, value float64, unit string) Figure {
	return Figure{Name: name, Value: value, Unit: unit}
}

func num(v float64) string {
	switch {
	case v == float64(int64(v)):
		return fmt.Sprintf("%d", int64(v))
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// Report is what a bench measured.
type Report struct {
	Dialect string
	RunID   int64
	// Items is the run's size; ByWorkers of them the worker processes
	// completed or failed, Filled the bulk fill completed afterwards.
	Items, ByWorkers, Filled int64
	Figures                  []Figure
}

// Misses counts the figures that missed their target.
func (r *Report) Misses() int {
	n := 0
	for _, f := range r.Figures {
		if f.Pass != nil && !*f.Pass {
			n++
		}
	}
	return n
}

func (r *Report) add(f ...Figure) { r.Figures = append(r.Figures, f...) }

// Print writes the figures as a table, then the item counts.
func (r *Report) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FIGURE\tVALUE\tTARGET\t\n")
	for _, f := range r.Figures {
		fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\n", f.Name, num(f.Value), f.Unit, f.Target, f.Verdict())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nrun %d on %s: %d items = %d by the workers + %d by the bulk fill; %d of %d targets missed\n",
		r.RunID, r.Dialect, r.Items, r.ByWorkers, r.Filled, r.Misses(), r.targets())
	return err
}

func (r *Report) targets() int {
	n := 0
	for _, f := range r.Figures {
		if f.Pass != nil {
			n++
		}
	}
	return n
}
