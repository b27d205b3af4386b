package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestParseAndNext(t *testing.T) {
	from := time.Date(2026, 1, 22, 7, 30, 0, 0, time.UTC) // a Thursday
	tests := []struct {
		expr, tz string
		want     []string // the next occurrences, UTC
	}{
		{"0 0 9 * * *", "Europe/Rome", []string{"2026-01-22T08:00:00Z", "2026-01-23T08:00:00Z"}},
		{"0 0 * * * *", "", []string{"2026-01-22T08:00:00Z", "2026-01-22T09:00:00Z"}},
		{"0 */30 * * * *", "UTC", []string{"2026-01-22T08:00:00Z", "2026-01-22T08:30:00Z"}},
		{"0 0 9,12,18 * * *", "UTC", []string{"2026-01-22T09:00:00Z", "2026-01-22T12:00:00Z", "2026-01-22T18:00:00Z"}},
		{"0 0 9 * * MON-FRI", "UTC", []string{"2026-01-22T09:00:00Z", "2026-01-23T09:00:00Z", "2026-01-26T09:00:00Z"}},
		// Five fields: seconds are 0.
		{"30 9 * * *", "America/New_York", []string{"2026-01-22T14:30:00Z", "2026-01-23T14:30:00Z"}},
		// Sunday as 7, alone and closing a range, and as SUN closing a range.
		{"0 0 12 * * 7", "UTC", []string{"2026-01-25T12:00:00Z", "2026-02-01T12:00:00Z"}},
		{"0 0 12 * * 6-7", "UTC", []string{"2026-01-24T12:00:00Z", "2026-01-25T12:00:00Z", "2026-01-31T12:00:00Z"}},
		{"0 0 12 * * FRI-SUN", "UTC", []string{"2026-01-23T12:00:00Z", "2026-01-24T12:00:00Z", "2026-01-25T12:00:00Z", "2026-01-30T12:00:00Z"}},
		{"0 0 12 ? * 0", "UTC", []string{"2026-01-25T12:00:00Z"}},
		{"@daily", "UTC", []string{"2026-01-23T00:00:00Z"}},
		{"  0   0  9 * *  * ", "UTC", []string{"2026-01-22T09:00:00Z"}},
		{"@every 90m", "UTC", []string{"2026-01-22T09:00:00Z", "2026-01-22T10:30:00Z"}},
		{"*/10 * * * * *", "UTC", []string{"2026-01-22T07:30:10Z", "2026-01-22T07:30:20Z"}},
	}
	for _, tt := range tests {
		spec, err := Parse(tt.expr, tt.tz)
		if err != nil {
			t.Errorf("Parse(%q, %q): %v", tt.expr, tt.tz, err)
			continue
		}
		got := from
		for i, w := range tt.want {
			got = spec.Next(got)
			if got.Format(time.RFC3339) != w {
				t.Errorf("Parse(%q, %q): occurrence %d = %s, want %s", tt.expr, tt.tz, i+1, got.Format(time.RFC3339), w)
				break
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ expr, tz, field, want string }{
		{"", "UTC", "cron", "is required"},
		{"0 0 9 * *", "Mars/Olympus", "timezone", "unknown time zone"},
		{"0 0 9 * *", "Local", "timezone", "unknown time zone"},
		{"0 9 * *", "UTC", "cron", "has 4 fields"},
		{"0 0 0 9 * * *", "UTC", "cron", "has 7 fields"},
		{"61 * * * * *", "UTC", "cron", "above maximum"},
		{"0 0 25 * * *", "UTC", "cron", "above maximum"},
		{"0 0 9 L * *", "UTC", "cron", "failed to parse"},
		{"0 0 0 30 2 *", "UTC", "cron", "never fires"},
		{"CRON_TZ=UTC 0 0 9 * * *", "UTC", "cron", "timezone field"},
		{"@every 0s", "UTC", "cron", "at least 1s"},
		{"@sometimes", "UTC", "cron", "unrecognized descriptor"},
		{strings.Repeat("1", 201), "UTC", "cron", "longer than"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.expr, tt.tz)
		e, ok := err.(*Error)
		if !ok || e.Field != tt.field || !strings.Contains(e.Message, tt.want) {
			t.Errorf("Parse(%q, %q) = %v, want a %s error with %q", tt.expr, tt.tz, err, tt.field, tt.want)
		}
	}
}

func TestBetween(t *testing.T) {
	spec, err := Parse("0 0 * * * *", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 1, 22, 10, 0, 0, 0, time.UTC)
	list, more := spec.Between(from, from.Add(3*time.Hour+30*time.Minute), 10)
	if len(list) != 4 || more || !list[0].Equal(from) || !list[3].Equal(from.Add(3*time.Hour)) {
		t.Errorf("Between: %v %v", list, more)
	}
	list, more = spec.Between(from, from.Add(24*time.Hour), 5)
	if len(list) != 5 || !more {
		t.Errorf("capped Between: %d %v", len(list), more)
	}
}

// TestDaylightSaving: a daily 02:30 in Rome skips the day the clocks jump
// over it and fires once on the day they fall back.
func TestDaylightSaving(t *testing.T) {
	spec, err := Parse("0 30 2 * * *", "Europe/Rome")
	if err != nil {
		t.Fatal(err)
	}
	spring, _ := spec.Between(time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC), 10)
	for _, o := range spring {
		if o.In(spec.Location()).Day() == 29 && o.In(spec.Location()).Hour() == 2 {
			t.Errorf("fired at a time that does not exist: %v", o)
		}
	}
	autumn, _ := spec.Between(time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 12, 0, 0, 0, time.UTC), 10)
	if len(autumn) != 1 {
		t.Errorf("the night the clocks fall back fired %d times: %v", len(autumn), autumn)
	}
}

// TestDaylightSavingHourly: an hourly expression fires every real hour, both
// times the clocks show 02:00 on the night they fall back.
func TestDaylightSavingHourly(t *testing.T) {
	spec, err := Parse("0 0 * * * *", "Europe/Rome")
	if err != nil {
		t.Fatal(err)
	}
	list, _ := spec.Between(time.Date(2026, 10, 24, 23, 30, 0, 0, time.UTC), time.Date(2026, 10, 25, 3, 30, 0, 0, time.UTC), 10)
	if len(list) != 4 {
		t.Errorf("hourly over the fall-back night: %v", list)
	}
}
