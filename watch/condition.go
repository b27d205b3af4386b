package watch

import (
	"fmt"
	"math"
	"strconv"
)

// Verdict is the outcome of checking an alert condition.
type Verdict struct {
	// Fired is true when the condition holds.
	Fired bool
	// Skipped says why the condition could not be checked (no baseline, a
	// baseline of 0 for a percentage); empty when it was checked.
	Skipped string
	// Baseline, SD and N describe the previous runs compared with.
	Baseline *float64
	SD       *float64
	N        int
	// Detail explains the comparison in words.
	Detail string
}

// needsBaseline reports whether a condition compares with previous runs.
func needsBaseline(cond string) bool {
	return cond == "PERCENTAGE_DROP" || cond == "PERCENTAGE_RISE" || cond == "ANOMALY_DETECTED"
}

// Check evaluates a condition (seed 002 §7.4) on a value. threshold is the
// value compared with, a percentage for PERCENTAGE_DROP and _RISE, and k
// for ANOMALY_DETECTED (outside mean ± k·sd). baseline holds the previous
// runs' values: their mean is the baseline of the percentages (at least one
// needed), their mean and sample standard deviation that of an anomaly (at
// least two).
func Check(cond string, value, threshold float64, baseline []float64) Verdict {
	v := Verdict{N: len(baseline)}
	if needsBaseline(cond) && len(baseline) > 0 {
		mean, sd := meanSD(baseline)
		v.Baseline = &mean
		if len(baseline) > 1 {
			v.SD = &sd
		}
	}
	f := num
	switch cond {
	case "LESS_THAN":
		v.Fired = value < threshold
		v.Detail = fmt.Sprintf("%s < %s", f(value), f(threshold))
	case "GREATER_THAN":
		v.Fired = value > threshold
		v.Detail = fmt.Sprintf("%s > %s", f(value), f(threshold))
	case "EQUALS":
		v.Fired = near(value, threshold)
		v.Detail = fmt.Sprintf("%s = %s", f(value), f(threshold))
	case "NOT_EQUALS":
		v.Fired = !near(value, threshold)
		v.Detail = fmt.Sprintf("%s ≠ %s", f(value), f(threshold))
	case "PERCENTAGE_DROP", "PERCENTAGE_RISE":
		if v.Baseline == nil {
			v.Skipped = "no earlier run to compare with"
			return v
		}
		b := *v.Baseline
		if b == 0 {
			v.Skipped = "the baseline is 0, so a percentage change is undefined"
			return v
		}
		change := (value - b) / math.Abs(b) * 100
		if cond == "PERCENTAGE_DROP" {
			v.Fired = change < 0 && (-change >= threshold || near(-change, threshold)) && !near(value, b)
			v.Detail = fmt.Sprintf("%s is %s%% below the baseline %s (mean of the last %d run(s)); alert at a drop of %s%%",
				f(value), f(-change), f(b), len(baseline), f(threshold))
		} else {
			v.Fired = change > 0 && (change >= threshold || near(change, threshold)) && !near(value, b)
			v.Detail = fmt.Sprintf("%s is %s%% above the baseline %s (mean of the last %d run(s)); alert at a rise of %s%%",
				f(value), f(change), f(b), len(baseline), f(threshold))
		}
		if !v.Fired {
			v.Detail = fmt.Sprintf("%s against the baseline %s: a change of %s%%", f(value), f(b), f(change))
		}
	case "ANOMALY_DETECTED":
		if len(baseline) < 2 {
			v.Skipped = fmt.Sprintf("%d earlier run(s): an anomaly needs at least 2 to measure the spread", len(baseline))
			return v
		}
		mean, sd := *v.Baseline, *v.SD
		v.Fired = math.Abs(value-mean) > threshold*sd && !near(value, mean)
		v.Detail = fmt.Sprintf("%s is outside the normal range %s ± %s·%s = [%s, %s] (mean ± k·sd of the last %d runs)",
			f(value), f(mean), f(threshold), f(sd), f(mean-threshold*sd), f(mean+threshold*sd), len(baseline))
		if !v.Fired {
			v.Detail = fmt.Sprintf("%s is within %s ± %s·%s", f(value), f(mean), f(threshold), f(sd))
		}
	default:
		v.Skipped = "unknown condition " + cond
	}
	return v
}

// near compares floats with a relative tolerance, so 0.1+0.2 equals 0.3.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// num formats a value for messages: up to 4 significant decimals.
func num(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
