// Package schedule parses the cron expressions of Tribunal's schedules
// (seed 002 §8.2) and finds their occurrences in a time zone.
//
// An expression has six fields, seconds first (as Spring's), or the five
// classic fields (seconds are then 0):
//
//	second minute hour day-of-month month day-of-week
//	0      0      9    *            *     MON-FRI
//
// Fields take numbers, names (JAN-DEC, SUN-SAT), ranges, lists, steps, * and
// ?; day-of-week accepts 0-7 with both 0 and 7 meaning Sunday. The
// descriptors @yearly, @monthly, @weekly, @daily, @hourly and @every <duration>
// work too. Parsing is github.com/robfig/cron/v3's, with seconds optional.
package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones work on hosts and images without /usr/share/zoneinfo

	"github.com/robfig/cron/v3"
)

// MaxLength caps an expression, in bytes.
const MaxLength = 200

// Error names the input that is wrong ("cron" or "timezone") and why.
type Error struct {
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Field + ": " + e.Message }

// Spec is a parsed cron expression in a time zone. It is safe for concurrent use.
type Spec struct {
	expr  string
	loc   *time.Location
	sched cron.Schedule
}

var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// horizon is how far ahead Next looks; robfig's own limit is five years.
const horizon = 5 * 366 * 24 * time.Hour

// Parse parses expr in the IANA time zone tz ("" is UTC). It refuses
// expressions that never fire.
func Parse(expr, tz string) (spec *Spec, err error) {
	expr = strings.Join(strings.Fields(expr), " ")
	tz = strings.TrimSpace(tz)
	if tz == "" {
		tz = "UTC"
	}
	loc, lerr := time.LoadLocation(tz)
	if lerr != nil || strings.EqualFold(tz, "local") {
		return nil, &Error{"timezone", fmt.Sprintf("unknown time zone %q: use an IANA name such as Europe/Rome or UTC", tz)}
	}
	switch {
	case expr == "":
		return nil, &Error{"cron", "is required, e.g. 0 0 9 * * * (every day at 9:00)"}
	case len(expr) > MaxLength:
		return nil, &Error{"cron", fmt.Sprintf("is longer than %d characters", MaxLength)}
	case strings.Contains(expr, "="):
		return nil, &Error{"cron", "set the time zone in the timezone field, not in the expression"}
	}
	text := expr
	if !strings.HasPrefix(expr, "@") {
		fields := strings.Fields(expr)
		if len(fields) != 5 && len(fields) != 6 {
			return nil, &Error{"cron", fmt.Sprintf("has %d fields; write six (second minute hour day-of-month month day-of-week) or five (without seconds)", len(fields))}
		}
		fields[len(fields)-1] = sundaySeven(fields[len(fields)-1])
		text = strings.Join(fields, " ")
	} else if strings.HasPrefix(expr, "@every ") {
		d, derr := time.ParseDuration(strings.TrimPrefix(expr, "@every "))
		if derr != nil || d < time.Second {
			return nil, &Error{"cron", "@every needs a duration of at least 1s, e.g. @every 1h30m"}
		}
	}
	defer func() {
		// The parser is not ours: a panic on odd input must not take the server down.
		if r := recover(); r != nil {
			spec, err = nil, &Error{"cron", fmt.Sprintf("cannot parse %q", expr)}
		}
	}()
	sched, perr := parser.Parse(text)
	if perr != nil {
		return nil, &Error{"cron", perr.Error()}
	}
	if ss, ok := sched.(*cron.SpecSchedule); ok {
		ss.Location = loc
	}
	spec = &Spec{expr: expr, loc: loc, sched: sched}
	if spec.Next(time.Now()).IsZero() {
		return nil, &Error{"cron", "never fires (no such date in the next five years)"}
	}
	return spec, nil
}

// String returns the expression as parsed (blanks collapsed).
func (s *Spec) String() string { return s.expr }

// Location returns the spec's time zone.
func (s *Spec) Location() *time.Location { return s.loc }

// Next returns the first occurrence strictly after t, in UTC, or the zero
// time when there is none within about five years.
//
// As Vixie cron does, an expression with fixed hours fires once on the night
// the clocks fall back, not again when the same wall-clock time comes round
// a second time; an hourly (hour *) one fires every hour, both times.
func (s *Spec) Next(t time.Time) time.Time {
	n := s.sched.Next(t)
	for range 4 {
		if n.IsZero() || !s.repeatedWallClock(n) {
			break
		}
		n = s.sched.Next(n)
	}
	if n.IsZero() || n.Sub(t) > horizon || !n.After(t) {
		return time.Time{}
	}
	return n.UTC()
}

// starBit marks a field written as * in robfig/cron's bit sets.
const starBit = 1 << 63

// repeatedWallClock reports whether n shows a local time that already
// occurred earlier that night (the clocks fell back), for expressions with
// fixed hours.
func (s *Spec) repeatedWallClock(n time.Time) bool {
	ss, ok := s.sched.(*cron.SpecSchedule)
	if !ok || ss.Hour&starBit != 0 {
		return false
	}
	w := n.In(s.loc)
	for _, d := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		e := n.Add(-d).In(s.loc)
		if e.Year() == w.Year() && e.YearDay() == w.YearDay() && e.Hour() == w.Hour() && e.Minute() == w.Minute() && e.Second() == w.Second() {
			return true
		}
	}
	return false
}

// Between returns the occurrences o with from <= o <= to, oldest first, at
// most limit of them; more reports that there were others after those.
func (s *Spec) Between(from, to time.Time, limit int) (list []time.Time, more bool) {
	t := s.Next(from.Add(-time.Nanosecond))
	for !t.IsZero() && !t.After(to) {
		if len(list) == limit {
			return list, true
		}
		list = append(list, t)
		t = s.Next(t)
	}
	return list, false
}

// sundaySeven rewrites day-of-week values of 7 (and SUN closing a range,
// as in MON-SUN) to 0, which is how robfig/cron spells Sunday; ranges and
// steps reaching 7 are written out as lists. Anything it does not
// understand is left for the parser to report.
func sundaySeven(field string) string {
	parts := strings.Split(field, ",")
	for i, p := range parts {
		rng, stepText, hasStep := strings.Cut(p, "/")
		lo, hi, isRange := strings.Cut(rng, "-")
		l, ok := dowNumber(lo, false)
		if !ok {
			continue
		}
		h := l
		if isRange {
			if h, ok = dowNumber(hi, true); !ok {
				continue
			}
		}
		if l != 7 && h != 7 {
			continue
		}
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				continue
			}
			step = n
			if !isRange {
				h = 7
			}
		}
		var vals []string
		for v := l; v <= h; v += step {
			vals = append(vals, strconv.Itoa(v%7))
		}
		if len(vals) > 0 {
			parts[i] = strings.Join(vals, ",")
		}
	}
	return strings.Join(parts, ",")
}

var dowNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// dowNumber reads a day of week; SUN at the end of a range is 7.
func dowNumber(s string, rangeEnd bool) (int, bool) {
	if n, ok := dowNames[strings.ToLower(s)]; ok {
		if n == 0 && rangeEnd {
			return 7, true
		}
		return n, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 7 {
		return 0, false
	}
	return n, true
}
