package kpi

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// metrics is the run used by the evaluation tables.
var metrics = map[string]float64{
	"accuracy":          0.9,
	"coherence":         0.5,
	"check_precision":   0.8, // PRECISION and precision read it
	"check_recall":      0.6,
	"score":             4,
	"pass_rate":         0.75,
	"check_exact_match": 1,
	"latency_ms":        1200,
	"tokens_per_s":      50,
	"cost_usd":          0.02,
	"error_rate":        0.1,
	"zero":              0,
}

// knownMetric are the fixture's names, as the store's KnownMetrics gives them.
var knownMetric = func() map[string]bool {
	out := map[string]bool{}
	for name := range metrics {
		out[name] = true
	}
	return out
}()

func TestEval(t *testing.T) {
	tests := []struct {
		src  string
		want float64
	}{
		// Seed §6.2 functions.
		{"accuracy", 0.9},
		{"AVERAGE(accuracy, precision, recall)", 2.3 / 3},               // (0.9+0.8+0.6)/3
		{"AVG(accuracy, coherence)", 0.7},                               // (0.9+0.5)/2
		{"AVERAGE(score)", 4},                                           // one argument
		{"WEIGHTED_SUM(accuracy:0.4, precision:0.3, recall:0.3)", 0.78}, // 0.36+0.24+0.18
		{"WEIGHTED_SUM(accuracy:0.7, latency_ms:-0.001)", -0.57},        // 0.63-1.2
		{"WEIGHTED_SUM(score:+2)", 8},                                   // 4*2, weights not normalised
		{"WEIGHTED_SUM(accuracy:1, accuracy:1)", 1.8},                   // a metric may repeat
		{"MIN(accuracy, precision, recall)", 0.6},
		{"MAX(accuracy, precision)", 0.9},
		{"MIN(score)", 4},
		{"THRESHOLD(accuracy, 0.8)", 1},  // 0.9 >= 0.8
		{"THRESHOLD(recall, 0.8)", 0},    // 0.6 <  0.8
		{"THRESHOLD(accuracy, 0.9)", 1},  // equal counts: >=
		{"THRESHOLD(score / 5, 0.8)", 1}, // 4/5 = 0.8 >= 0.8
		{"THRESHOLD(accuracy, 0.8) + THRESHOLD(recall, 0.8)", 1},

		// Seed §12.1 examples.
		{"IF accuracy > 0.9 THEN 1.0 ELSE 0.0", 0}, // 0.9 > 0.9 is false
		{"IF accuracy >= 0.9 THEN 1 ELSE 0", 1},
		{"(accuracy + precision + recall) / 3", 2.3 / 3},
		{"MIN(accuracy, MAX(precision, recall)) * 100", 80}, // min(0.9, 0.8)*100

		// Arithmetic and precedence.
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"10 - 4 - 3", 3}, // left-associative: (10-4)-3
		{"12 / 3 / 2", 2}, // (12/3)/2
		{"-2 * 3", -6},
		{"2 - -1", 3},
		{"- (1 - 3)", 2},
		{"1 + 2 * 3 > 6", 1}, // (1+6) > 6
		{".5 + 1.5e1", 15.5},
		{"2E-1", 0.2},
		{"1.", 1},
		{"accuracy > 0.5 AND recall > 0.7 OR score = 4", 1}, // (T and F) or T
		{"accuracy > 0.5 OR recall > 0.7 AND score = 5", 1}, // T or (F and F); OR first would give 0
		{"NOT accuracy > 0.95", 1},                          // NOT (0.9 > 0.95)
		{"NOT accuracy > 0.5 OR recall > 0.5", 1},           // (NOT T) or T; NOT over all would give 0
		{"NOT accuracy > 0.5 AND recall > 0.5", 0},          // (NOT T) and T
		{"NOT NOT accuracy > 0.5", 1},
		{"NOT (accuracy > 0.5 AND recall > 0.7)", 1}, // NOT (T and F)

		// IF … THEN … ELSE.
		{"2 * IF score > 5 THEN 10 ELSE 20 + 1", 42}, // ELSE takes "20 + 1": 2*21; otherwise 41
		{"(IF score > 5 THEN 10 ELSE 20) + 1", 21},
		{"1 + IF score > 3 THEN 10 ELSE 20", 11},
		{"IF score = 4 THEN accuracy > 1 ELSE accuracy > 1 OR recall > 0.5", 0}, // ELSE takes the OR too: THEN gives F; else (IF…) OR T = 1
		{"IF accuracy > 0.8 THEN IF recall > 0.8 THEN 2 ELSE 1 ELSE 0", 1},      // nested in THEN
		{"IF accuracy < 0.5 THEN 0 ELSE IF accuracy < 0.95 THEN 1 ELSE 2", 1},   // else-if chain
		{"MAX(IF score > 3 THEN 1 ELSE 0, 0.5)", 1},                             // IF ends at the comma
		{"IF accuracy > 0.5 AND NOT recall > 0.7 THEN 3 ELSE 4", 3},
		{"IF score = 4 THEN accuracy > 0.5 ELSE 0", 1}, // a true branch becomes 1

		// Comparisons give 1/0.
		{"accuracy > 0.5", 1},
		{"accuracy < 0.5", 0},
		{"accuracy = 0.9", 1},
		{"accuracy == 0.9", 1},
		{"accuracy != 0.9", 0},
		{"accuracy <> 0.5", 1},
		{"score <= 4", 1},
		{"(accuracy > 0.5) = (recall > 0.5)", 1}, // T = T
		{"recall < accuracy < 1", 1},             // range check: 0.6 < 0.9 and 0.9 < 1
		{"accuracy < recall < 1", 0},             // 0.9 < 0.6 fails; not (F) < 1
		{"0 <= zero <= 0", 1},

		// Case-insensitivity of functions, keywords and metric names.
		{"average(Accuracy, PRECISION)", 0.85},
		{"Avg(accuracy, coherence)", 0.7},
		{"if Score > 3 then 1 else 0", 1},
		{"Weighted_Sum(ACCURACY:1)", 0.9},
		{"not accuracy > 1 and score = 4", 1},
		{"threshold(accuracy, 0.8) = 1 Or min(recall) > 1", 1}, // (1 = 1) or F

		// Tribunal metric names.
		{"check_exact_match + pass_rate", 1.75},
		{"cost_usd * 1000 / tokens_per_s", 0.4}, // 20/50
		{"1 - error_rate", 0.9},
		{"AVERAGE(\n  accuracy,\n  recall\n)", 0.75}, // newlines are spaces
	}
	for _, tt := range tests {
		f, errs := Compile(tt.src, knownMetric)
		if errs != nil {
			t.Errorf("Compile(%q): %v", tt.src, errs)
			continue
		}
		got, err := f.Eval(metrics)
		if err != nil {
			t.Errorf("Eval(%q): %v", tt.src, err)
			continue
		}
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Eval(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		src     string
		metrics map[string]float64
		msg     string // substring of the message
		pos     int
	}{
		{"accuracy / zero", metrics, "division by zero", 10},
		{"1 + accuracy / (recall - 0.6)", metrics, "division by zero", 14}, // 0.6-0.6 = 0
		{"IF zero > 0 THEN 1 / zero ELSE 2 / zero", metrics, "division by zero", 34},
		{"accuracy + missing_one", metrics, `missing metric "missing_one"`, 12},
		{"AVERAGE(recall, accuracy)", map[string]float64{"recall": 1}, `missing metric "accuracy"`, 17},
		{"accuracy", map[string]float64{"accuracy": math.NaN()}, "not a finite number", 1},
		{"1 + accuracy", map[string]float64{"accuracy": math.Inf(1)}, "not a finite number", 5},
		{"1e308 * 10", nil, "not a finite number", 1},
		{"THRESHOLD(1e308 * 10, 1)", nil, "THRESHOLD: argument 1 is not a finite number", 1},
		{"AVERAGE(1e308, 1e308)", nil, "AVERAGE: result is not a finite number", 1}, // sum overflows
	}
	for _, tt := range tests {
		f, errs := Compile(tt.src, nil)
		if errs != nil {
			t.Errorf("Compile(%q): %v", tt.src, errs)
			continue
		}
		v, err := f.Eval(tt.metrics)
		var e Error
		if !errors.As(err, &e) {
			t.Errorf("Eval(%q) = %v, %v; want an Error", tt.src, v, err)
			continue
		}
		if !strings.Contains(e.Message, tt.msg) || e.Position != tt.pos {
			t.Errorf("Eval(%q) error = %q at %d, want %q at %d", tt.src, e.Message, e.Position, tt.msg, tt.pos)
		}
	}
}

func TestEvalCaseInsensitiveKeys(t *testing.T) {
	f, errs := Compile("ACCURACY * 2", nil)
	if errs != nil {
		t.Fatal(errs)
	}
	if got := f.Metrics(); !reflect.DeepEqual(got, []string{"accuracy"}) {
		t.Errorf("Metrics() = %v", got)
	}
	got, err := f.Eval(map[string]float64{"Accuracy": 0.25})
	if err != nil || got != 0.5 {
		t.Errorf("Eval = %v, %v; want 0.5", got, err)
	}
	// An exact (lower-case) key wins over other spellings.
	got, err = f.Eval(map[string]float64{"ACCURACY": 1, "accuracy": 2})
	if err != nil || got != 4 {
		t.Errorf("Eval = %v, %v; want 4", got, err)
	}
}

// e is shorthand for an expected error: a message substring and a position.
type e struct {
	msg string
	pos int
}

func TestCompileErrors(t *testing.T) {
	long := strings.Repeat("1+", 1000) + "1" // 2001 characters
	tests := []struct {
		src  string
		want []e
	}{
		// Empty, too long, bad characters and numbers.
		{"", []e{{"formula is empty", 1}}},
		{"  \n ", []e{{"formula is empty", 1}}},
		{long, []e{{"too long (2001 characters", 2001}}},
		{"accuracy ! recall", []e{{"unexpected character '!' (write NOT)", 10}}},
		{"a # b $ c", []e{{"'#'", 3}, {"'$'", 7}}},
		{"accuracy && recall", []e{{"write AND / OR", 10}, {"write AND / OR", 11}}},
		{"1e999", []e{{"number 1e999 is out of range", 1}}},
		{strings.Repeat("#", 30), func() (w []e) { // capped at MaxErrors
			for i := 1; i <= 20; i++ {
				w = append(w, e{"'#'", i})
			}
			return w
		}()},
		{`"a" + 1`, []e{{`'"'`, 1}, {`'"'`, 3}}},
		// Positions are in characters, not bytes.
		{"ñ + ñ", []e{{"'ñ'", 1}, {"'ñ'", 5}}},

		// Unknown names: every occurrence, each at its own position.
		{"accuracy + bogus", []e{{`unknown metric "bogus"`, 12}}},
		{"bogus + AVERAGE(nope, accuracy) + bogus", []e{{`"bogus"`, 1}, {`"nope"`, 17}, {`"bogus"`, 35}}},
		{"WEIGHTED_SUM(bogus:1)", []e{{`unknown metric "bogus"`, 14}}},
		{"unknown_fn(accuracy)", []e{{"unknown function unknown_fn", 1}}},
		{"MAX + 1", []e{{"MAX is a function: write MAX(a, b, …)", 1}}},
		{"len(accuracy)", []e{{"unknown function len", 1}}}, // expr builtins are not reachable

		// Brackets.
		{"(accuracy + 1", []e{{"'(' is never closed", 1}}},
		{"accuracy + 1)", []e{{"unmatched ')'", 13}}},
		{"MIN((accuracy)", []e{{"'(' is never closed", 4}}},
		{")(", []e{{"unmatched ')'", 1}, {"never closed", 2}}},
		{"()", []e{{"expected a value after '('", 2}}},

		// Operators and operands.
		{"accuracy +", []e{{"expected a value after '+'", 11}}},
		{"accuracy >=", []e{{"expected a value after '>='", 12}}},
		{"accuracy * / 2", []e{{"unexpected '/'", 12}}},
		{"* 2", []e{{"unexpected '*'", 1}}},
		{"accuracy recall", []e{{`missing operator before "recall"`, 10}}},
		{"2 (3)", []e{{"missing operator before '('", 3}}},
		{"accuracy NOT recall", []e{{"missing operator before NOT", 10}}},
		{"accuracy AND", []e{{"expected a value after AND", 13}}},
		{"OR accuracy", []e{{"unexpected OR", 1}}},
		{"NOT", []e{{"expected a value after NOT", 4}}},
		{"NOT AND accuracy", []e{{"expected a value after NOT", 5}}},
		{"accuracy, recall", []e{{"unexpected ','", 9}}},
		{"accuracy ** 2", []e{{"unexpected '*'", 11}}},
		{"accuracy % 2", []e{{"unexpected character '%'", 10}}},
		{"accuracy ? 1 : 0", []e{{"unexpected character '?'", 10}}},
		{"accuracy in recall", []e{{`missing operator before "in"`, 10}, {`unknown metric "in"`, 10}}},

		// IF … THEN … ELSE.
		{"IF accuracy > 0.9 THEN 1", []e{{"expected ELSE, found the end of the formula", 25}}},
		{"IF accuracy > 0.9", []e{{"expected THEN, found the end of the formula", 18}}},
		{"IF accuracy > 0.9 ELSE 0", []e{{"expected THEN, found ELSE", 19}}},
		{"IF THEN 1 ELSE 0", []e{{"expected a value after IF", 4}}},
		{"IF accuracy > 0.9 THEN ELSE 0", []e{{"expected a value after THEN", 24}}},
		{"IF accuracy > 0.9 THEN 1 ELSE", []e{{"expected a value after ELSE", 30}}},
		{"MIN(IF accuracy > 0.9 THEN 1, 2)", []e{{"expected ELSE, found ','", 29}}},
		{"THEN 1", []e{{"THEN without IF", 1}}},
		{"accuracy ELSE 1", []e{{"ELSE without IF … THEN", 10}}},
		{"IF accuracy > 0.9 THEN 1 ELSE 0 ELSE 2", []e{{"ELSE without IF … THEN", 33}}},
		{"IF accuracy > 0.9 THEN 1 THEN 2 ELSE 3", []e{{"THEN without IF", 26}}},

		// Seed functions: arity and argument kinds.
		{"THRESHOLD(accuracy)", []e{{"THRESHOLD takes 2 arguments: THRESHOLD(metric, value), got 1", 1}}},
		{"THRESHOLD(accuracy, 0.5, 1)", []e{{"got 3", 1}}},
		{"MIN()", []e{{"MIN needs at least 1 argument", 1}}},
		{"average()", []e{{"AVERAGE needs at least 1 argument", 1}}},
		{"MIN(accuracy, )", []e{{"expected a value after ','", 15}}},
		{"MIN(, accuracy)", []e{{"expected a value after '('", 5}}},
		{"MIN(accuracy:0.5)", []e{{"':' is only used inside WEIGHTED_SUM", 13}}},
		{"MIN() + THRESHOLD(accuracy) + bogus", []e{{"MIN needs", 1}, {"THRESHOLD takes", 9}, {`unknown metric "bogus"`, 31}}},
		{"WEIGHTED_SUM(accuracy)", []e{{`"accuracy" has no weight`, 14}}},
		{"WEIGHTED_SUM(accuracy:high)", []e{{"weight must be a number", 23}}},
		{"WEIGHTED_SUM(accuracy:0.5 + 1)", []e{{"weight must be a number", 23}}},
		{"WEIGHTED_SUM(accuracy:0.5, 0.5)", []e{{`found "0.5"`, 28}}},
		{"WEIGHTED_SUM(accuracy:0.5, (recall):1)", []e{{"found '('", 28}}},
		{"WEIGHTED_SUM(accuracy:0.5,)", []e{{"found ')'", 27}}},
		{"WEIGHTED_SUM()", []e{{"at least one metric:weight pair", 1}}},
		{"WEIGHTED_SUM(accuracy, recall)", []e{{`"accuracy" has no weight`, 14}, {`"recall" has no weight`, 24}}},
		{"WEIGHTED_SUM(min:1)", []e{{`found "min"`, 14}}},

		// Kind errors found by expr, mapped back to the source.
		{"(accuracy > 0.5) + 1", []e{{"mismatched types true/false and number", 18}}},
		{"IF accuracy THEN 1 ELSE 0", []e{{"IF condition must be a comparison", 4}}},
		{"NOT accuracy", []e{{"invalid operation: NOT", 1}}},
		{"accuracy AND recall", []e{{"invalid operation: AND", 10}}},
		{"THRESHOLD(accuracy, recall > 0.5)", []e{{"cannot use true/false as argument", 28}}},
		{"accuracy = recall = 1", []e{{"mismatched types true/false and number", 19}}}, // = does not chain
		{"THRESHOLD(accuracy, 0.8) OR recall > 1", []e{{"invalid operation: OR (mismatched types number", 26}}},
		// expr's error after a multi-byte space still lands on the right character.
		{"\u00a0(accuracy > 0.5) + 1", []e{{"mismatched types", 19}}},
		// An unknown metric does not hide a kind error elsewhere.
		{"bogus + (accuracy > 1) * 2", []e{{`unknown metric "bogus"`, 1}, {"mismatched types", 24}}},
	}
	for _, tt := range tests {
		f, errs := Compile(tt.src, knownMetric)
		if f != nil {
			t.Errorf("Compile(%q) returned a formula with errors %v", tt.src, errs)
		}
		var got []e
		for _, err := range errs {
			got = append(got, e{err.Message, err.Position})
		}
		ok := len(got) == len(tt.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.Contains(got[i].msg, tt.want[i].msg) && got[i].pos == tt.want[i].pos
		}
		if !ok {
			t.Errorf("Compile(%q) errors:\n got %v\nwant %v", tt.src, got, tt.want)
		}
	}
}

// known holds lower-case names; a formula may spell them any way.
func TestKnownIsCaseInsensitive(t *testing.T) {
	if _, errs := Compile("Coherence + WEIGHTED_SUM(COHERENCE:1)", map[string]bool{"coherence": true}); errs != nil {
		t.Fatal(errs)
	}
}

// The seed's names are aliases of run metrics, in any case, known or not:
// ROUGE reads check_rouge_l, and the formula's metrics are the run's names.
func TestAliases(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"ROUGE + rouge + Rouge", []string{"check_rouge_l"}},
		{"BLEU + F1_SCORE + f1_score", []string{"check_bleu", "check_f1"}},
		{"PRECISION * RECALL", []string{"check_precision", "check_recall"}},
		{"ACCURACY + LATENCY_MS + COST_USD + PASS_RATE", []string{"accuracy", "cost_usd", "latency_ms", "pass_rate"}},
		{"check_rouge_l + ROUGE", []string{"check_rouge_l"}},
	}
	for _, tt := range tests {
		f, errs := Compile(tt.src, map[string]bool{})
		if errs != nil {
			t.Fatalf("Compile(%q): %v", tt.src, errs)
		}
		if got := f.Metrics(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Compile(%q).Metrics() = %q, want %q", tt.src, got, tt.want)
		}
	}
	f, _ := Compile("ROUGE - check_rouge_l + 2 * BLEU", map[string]bool{})
	if v, err := f.Eval(map[string]float64{"check_rouge_l": 0.4, "check_bleu": 0.25}); err != nil || v != 0.5 {
		t.Errorf("Eval = %v, %v; want 0.4 - 0.4 + 0.5", v, err)
	}
}

// ACCURACY reads the judges' accuracy metric, and their score where they have none.
func TestAccuracyFallsBackToScore(t *testing.T) {
	f, errs := Compile("THRESHOLD(ACCURACY, 0.8)", nil)
	if errs != nil {
		t.Fatal(errs)
	}
	for _, tt := range []struct {
		metrics map[string]float64
		want    float64
	}{
		{map[string]float64{"accuracy": 0.9, "score": 0.1}, 1}, // its own metric wins
		{map[string]float64{"accuracy": 0.7, "score": 0.9}, 0},
		{map[string]float64{"score": 0.85}, 1}, // no accuracy metric: the judge score
		{map[string]float64{"score": 0.6}, 0},
	} {
		if v, err := f.Eval(tt.metrics); err != nil || v != tt.want {
			t.Errorf("Eval(%v) = %v, %v; want %v", tt.metrics, v, err, tt.want)
		}
	}
	if _, err := f.Eval(map[string]float64{"pass_rate": 1}); err == nil || !strings.Contains(err.Error(), `missing metric "accuracy"`) {
		t.Errorf("neither accuracy nor score: error %v", err)
	}
	// Other metrics have no fallback.
	g, _ := Compile("ROUGE", nil)
	if _, err := g.Eval(map[string]float64{"score": 1}); err == nil {
		t.Error("ROUGE without check_rouge_l evaluated")
	}
}

// An unknown name is refused with the names it was probably meant to be.
func TestUnknownMetricCloseNames(t *testing.T) {
	known := map[string]bool{"coherence": true}
	for _, tt := range []struct{ src, want string }{
		{"ROUGH", `unknown metric "ROUGH" (close: ROUGE`},
		{"PRECISON", `unknown metric "PRECISON" (close: PRECISION`},
		{"coherense", `(close: coherence)`},
		{"rouge_l", `(close: ROUGE, check_rouge_l)`},
		{"zzzzzz", `unknown metric "zzzzzz"`},
	} {
		v := Validate(tt.src, known)
		if v.OK || !strings.Contains(v.Errors[0].Message, tt.want) {
			t.Errorf("Validate(%q) = %+v, want an error containing %q", tt.src, v, tt.want)
		}
	}
	if v := Validate("zzzzzz", known); strings.Contains(v.Errors[0].Message, "close") {
		t.Errorf("nothing is close to zzzzzz: %q", v.Errors[0].Message)
	}
}

// Every alias names a metric of the table, and no name stands for two.
func TestVocabularyIsOneTable(t *testing.T) {
	seen := map[string]string{}
	for _, m := range Vocabulary {
		if m.Name != strings.ToLower(m.Name) || m.Description == "" || m.Scale == "" {
			t.Errorf("entry %+v: want a lower-case name, a description and a scale", m)
		}
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			if prev, ok := seen[strings.ToLower(n)]; ok && prev != m.Name {
				t.Errorf("%q names both %s and %s", n, prev, m.Name)
			}
			seen[strings.ToLower(n)] = m.Name
			if Canonical(n) != m.Name {
				t.Errorf("Canonical(%q) = %q, want %q", n, Canonical(n), m.Name)
			}
		}
	}
	for _, alias := range []string{"ACCURACY", "ROUGE", "BLEU", "F1_SCORE", "PRECISION", "RECALL", "LATENCY_MS", "COST_USD", "PASS_RATE"} {
		if _, ok := seen[strings.ToLower(alias)]; !ok {
			t.Errorf("the seed's %s is not in the vocabulary", alias)
		}
	}
}

func TestMetricsAndString(t *testing.T) {
	src := "WEIGHTED_SUM(Recall:0.5, accuracy:0.5) + AVERAGE(accuracy, score) * check_exact_match"
	f, errs := Compile(src, nil)
	if errs != nil {
		t.Fatal(errs)
	}
	if got, want := f.Metrics(), []string{"accuracy", "check_exact_match", "check_recall", "score"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Metrics() = %q, want %q", got, want)
	}
	f.Metrics()[0] = "changed" // callers get a copy
	if f.Metrics()[0] != "accuracy" {
		t.Error("Metrics() exposes the formula's slice")
	}
	c, errs := Compile("1 + 2", nil)
	if errs != nil || len(c.Metrics()) != 0 {
		t.Errorf("constant formula: metrics %v, errors %v", c.Metrics(), errs)
	}
	if v, err := c.Eval(nil); err != nil || v != 3 {
		t.Errorf("constant formula = %v, %v", v, err)
	}
}

// The rewrite itself, for the constructs expr does not have.
func TestTranslation(t *testing.T) {
	tests := []struct{ src, want string }{
		{"IF a > 1 THEN b ELSE c", "((m_a > 1.0) ? (m_b) : (m_c))"},
		{"WEIGHTED_SUM(a:0.7, b:-3)", "WEIGHTED_SUM(m_a, 0.7, m_b, -3.0)"},
		{"NOT a > 1 AND b OR c", "!(m_a > 1.0) && m_b || m_c"},
		{"avg(A) = 2 <> 1", "AVERAGE(m_a) == 2.0 != 1.0"},
	}
	for _, tt := range tests {
		toks, errs := tokenize([]rune(tt.src))
		if errs != nil {
			t.Fatal(errs)
		}
		tr := &translator{toks: toks, metrics: map[string]int{}}
		tr.list(0, false)
		got := strings.Join(strings.Fields(tr.out.String()), " ")
		want := strings.Join(strings.Fields(tt.want), " ")
		// Spacing is free; compare without it.
		if strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(want, " ", "") || tr.errs != nil {
			t.Errorf("translate(%q) = %q (errors %v), want %q", tt.src, got, tr.errs, tt.want)
		}
		if len(tr.posMap) != tr.out.Len() {
			t.Errorf("translate(%q): position map has %d entries for %d bytes", tt.src, len(tr.posMap), tr.out.Len())
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct{ src, want string }{
		{"AVERAGE(accuracy, recall)", `{"ok":true,"errors":[]}`},
		{"accuracy +", `{"ok":false,"errors":[{"message":"expected a value after '+'","position":11}]}`},
		{"bogus", `{"ok":false,"errors":[{"message":"unknown metric \"bogus\"","position":1}]}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(Validate(tt.src, knownMetric))
		if err != nil || string(b) != tt.want {
			t.Errorf("Validate(%q) = %s, %v; want %s", tt.src, b, err, tt.want)
		}
	}
}

func TestConcurrentEval(t *testing.T) {
	f, errs := Compile("WEIGHTED_SUM(accuracy:0.5, coherence:0.5)", nil)
	if errs != nil {
		t.Fatal(errs)
	}
	done := make(chan float64)
	for i := range 8 {
		go func() {
			v, _ := f.Eval(map[string]float64{"accuracy": float64(i), "coherence": float64(i)})
			done <- v - float64(i) // (i*0.5 + i*0.5) - i = 0
		}()
	}
	for range 8 {
		if d := <-done; d != 0 {
			t.Errorf("concurrent Eval off by %v", d)
		}
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"", "accuracy", "AVERAGE(accuracy, precision, recall)", "WEIGHTED_SUM(accuracy:0.4, precision:-0.3)",
		"MIN(a, MAX(b, c)) * 100", "THRESHOLD(accuracy, 0.8)", "IF a > 0.9 THEN 1.0 ELSE 0.0",
		"IF a THEN IF b THEN 1 ELSE 2 ELSE 3", "NOT a > b AND c < d OR e = f", "(a + b) / (c - d)",
		"WEIGHTED_SUM(a)", "((a)", "a +", "1e308 * 10", "ñ + a", "a <> b", "MIN(a:1)", "IF a > 1 THEN 1 THEN",
		"a / b / 0", "avg(x,)", "-(-(-a))", "\u00a0a\u3000+\tb",
	} {
		f.Add(s, 0.5)
	}
	f.Fuzz(func(t *testing.T, src string, x float64) {
		formula, errs := Compile(src, nil)
		n := utf8.RuneCountInString(src)
		for _, err := range errs {
			if err.Position < 1 || err.Position > n+1 || err.Message == "" {
				t.Fatalf("Compile(%q): bad error %+v (length %d)", src, err, n)
			}
		}
		if (formula == nil) == (len(errs) == 0) {
			t.Fatalf("Compile(%q) = %v, %v: want exactly one of formula and errors", src, formula, errs)
		}
		if formula == nil {
			return
		}
		names := formula.Metrics()
		if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Fatalf("Metrics() of %q not sorted and unique: %q", src, names)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = 0
		}
		full := map[string]float64{}
		for i, name := range names {
			full[name] = x + float64(i)
		}
		v, err := formula.Eval(full)
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("Eval(%q) = %v without an error", src, v)
		}
		var e Error
		if err != nil && (!errors.As(err, &e) || e.Position < 1 || e.Position > n+1) {
			t.Fatalf("Eval(%q): bad error %#v", src, err)
		}
	})
}
