package format

import (
	"math"
	"testing"
	"time"
)

func ptr(v float64) *float64 { return &v }

func TestFormats(t *testing.T) {
	i := int64(1234)
	for _, tc := range []struct{ got, want string }{
		{Num(nil, 2), None},
		{Num(ptr(math.NaN()), 2), None},
		{Score(ptr(7.456)), "7.46"},
		{Overall(ptr(72.44)), "72.4"},
		{Pct(ptr(0.8333)), "83.3%"},
		{Pct(nil), None},
		{USD(ptr(0)), "$0"},
		{USD(ptr(0.00123)), "$0.00123"},
		{USD(ptr(12.345)), "$12.35"},
		{Ms(ptr(812.4)), "812 ms"},
		{Ms(ptr(12_500)), "12.5 s"},
		{MsInt(&i), "1234 ms"},
		{Int(&i), "1234"},
		{CI(72.44, 65.1, 79.04, 1), "72.4 [65.1, 79.0]"},
		{P(0.0004), "< 0.001"},
		{P(0.0456), "0.046"},
		{P(0.4), "0.400"},
		{P(1), "1.000"},
		{P(math.NaN()), None},
		{Tokens(0), None},
		{Tokens(512), "512"},
		{Tokens(8192), "8,192"},
		{Tokens(1048576), "1,048,576"},
		{Duration(42 * time.Second), "42s"},
		{Duration(185 * time.Second), "3m05s"},
		{Duration(62*time.Minute + 10*time.Second), "1h02m"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
