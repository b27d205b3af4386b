package kpi

import (
	"errors"
	"fmt"
	"math"

	"github.com/expr-lang/expr"
)

// function describes one seed function (seed 002 §6.1). Arity is checked by
// the translator so that the error names the function and points at it;
// expr then checks that every argument is a number.
type function struct {
	name    string // canonical upper-case name, also the expr function name
	minArgs int
	maxArgs int // -1: no upper bound
	usage   string
	impl    func(args []float64) (float64, error)
}

var functions = map[string]*function{
	"AVERAGE": {name: "AVERAGE", minArgs: 1, maxArgs: -1, usage: "AVERAGE(a, b, …)", impl: average},
	"MIN":     {name: "MIN", minArgs: 1, maxArgs: -1, usage: "MIN(a, b, …)", impl: minimum},
	"MAX":     {name: "MAX", minArgs: 1, maxArgs: -1, usage: "MAX(a, b, …)", impl: maximum},
	// THRESHOLD(metric, value) = 1 if metric >= value else 0 (seed §6.2).
	"THRESHOLD": {name: "THRESHOLD", minArgs: 2, maxArgs: 2, usage: "THRESHOLD(metric, value)", impl: threshold},
	// WEIGHTED_SUM(m1:w1, m2:w2, …) = m1*w1 + m2*w2 + … ; the weights are
	// not normalised (the seed calls it a sum, its examples add up to 1).
	// The translator passes the pairs flattened: WEIGHTED_SUM(m1, w1, m2, w2).
	"WEIGHTED_SUM": {name: "WEIGHTED_SUM", minArgs: 1, maxArgs: -1, usage: "WEIGHTED_SUM(metric:weight, …)", impl: weightedSum},
}

// aliases maps accepted alternative spellings to canonical names.
var aliases = map[string]string{"AVG": "AVERAGE"}

// lookupFunction finds a function by name, case-insensitively.
func lookupFunction(upper string) *function {
	if c, ok := aliases[upper]; ok {
		upper = c
	}
	return functions[upper]
}

// divFunc replaces expr's "/" on numbers: expr would return ±Inf or NaN,
// which a KPI must never silently carry into a comparison or THRESHOLD.
const divFunc = "DIV"

var errDivZero = errors.New("division by zero")

func average(a []float64) (float64, error) {
	s := 0.0
	for _, v := range a {
		s += v
	}
	return s / float64(len(a)), nil
}

func minimum(a []float64) (float64, error) {
	m := a[0]
	for _, v := range a[1:] {
		m = math.Min(m, v)
	}
	return m, nil
}

func maximum(a []float64) (float64, error) {
	m := a[0]
	for _, v := range a[1:] {
		m = math.Max(m, v)
	}
	return m, nil
}

func threshold(a []float64) (float64, error) {
	if a[0] >= a[1] {
		return 1, nil
	}
	return 0, nil
}

func weightedSum(a []float64) (float64, error) {
	s := 0.0
	for i := 0; i+1 < len(a); i += 2 {
		s += a[i] * a[i+1]
	}
	return s, nil
}

// exprOptions are the expr options every formula is compiled with: only the
// given variables and our functions exist (no builtins, no Go values).
func exprOptions(env map[string]any) []expr.Option {
	opts := []expr.Option{
		expr.Env(env),
		expr.DisableAllBuiltins(),
		expr.DisableIfOperator(),
		expr.MaxNodes(maxNodes),
		expr.Function(divFunc, wrap("/", func(a []float64) (float64, error) {
			if a[1] == 0 {
				return 0, errDivZero
			}
			return a[0] / a[1], nil
		}), new(func(float64, float64) float64)),
		expr.Operator("/", divFunc),
	}
	for _, f := range functions {
		var typ any = new(func(...float64) float64)
		if f.maxArgs == 2 {
			typ = new(func(float64, float64) float64)
		}
		opts = append(opts, expr.Function(f.name, wrap(f.name, f.impl), typ))
	}
	return opts
}

// wrap adapts impl to expr's calling convention and rejects non-finite
// inputs and results (e.g. an overflow to +Inf inside a product).
func wrap(name string, impl func([]float64) (float64, error)) func(...any) (any, error) {
	return func(params ...any) (any, error) {
		args := make([]float64, len(params))
		for i, p := range params {
			v, ok := p.(float64)
			if !ok {
				return nil, fmt.Errorf("%s: argument %d is not a number", name, i+1)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: argument %d is not a finite number", name, i+1)
			}
			args[i] = v
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("%s: no arguments", name)
		}
		r, err := impl(args)
		if err != nil {
			return nil, err
		}
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("%s: result is not a finite number", name)
		}
		return r, nil
	}
}
