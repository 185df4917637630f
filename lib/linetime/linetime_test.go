package linetime

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	want := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	for _, raw := range []string{
		`"2026-12-01T09:30:00Z"`, `"2026-12-01T10:30:00+01:00"`, `"2026-12-01T04:00:00-05:30"`,
		`"2026-12-01T09:30:00.000Z"`, `"2026-12-01T09:30:00\u005a"`,
		// RFC 3339's 5.6: a "t" or a space between date and time, a "z".
		`"2026-12-01t09:30:00z"`, `"2026-12-01 09:30:00Z"`, `"2026-12-01 10:30:00+01:00"`,
		`1796117400`, `1796117400000`, `1796117400000000`, `1796117400000000000`,
		`1796117400.0`, `1.7961174e9`, `1796117400000.0`, `1.7961174e18`,
	} {
		got, err := Parse([]byte(raw))
		if err != nil || !got.Equal(want) {
			t.Errorf("Parse(%s) = %v, %v; want %v", raw, got, err, want)
		}
	}
	if got, _ := Parse([]byte(`1796117400.25`)); !got.Equal(want.Add(250 * time.Millisecond)) {
		t.Errorf("fraction: %v", got)
	}
	if got, _ := Parse([]byte(`1796117400123`)); !got.Equal(want.Add(123 * time.Millisecond)) {
		t.Errorf("ms: %v", got)
	}
	for _, raw := range []string{`"yesterday"`, `"2026-12-01"`, `"2026-12-01_09:30:00Z"`, `"2026-12-01 09:30:00"`, `true`, `null`, `{}`, `[1]`, `""`, `1e400`} {
		if got, err := Parse([]byte(raw)); err == nil {
			t.Errorf("Parse(%s) = %v, want no time", raw, got)
		}
	}
}

func TestBound(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	paris, err := Zone("+01:00", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]time.Time{
		"24h":                  now.Add(-24 * time.Hour),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"1w1d":                 now.Add(-8 * 24 * time.Hour),
		"90m":                  now.Add(-90 * time.Minute),
		"2026-12-01T00:00:00Z": time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		"2026-12-01":           time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC),
		"2026-12-01T08:00:00":  time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC),
	} {
		got, err := Bound(s, now, paris)
		if err != nil || !got.Equal(want) {
			t.Errorf("Bound(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "soon", "24", "1796117400", "h", "2026-13-01"} {
		if _, err := Bound(s, now, time.UTC); err == nil {
			t.Errorf("Bound(%q) took it", s)
		}
	}
}

func TestBucket(t *testing.T) {
	at := time.Date(2026, 12, 3, 23, 45, 10, 0, time.UTC) // a Thursday
	plus2 := time.FixedZone("+02:00", 2*3600)
	for _, c := range []struct {
		every time.Duration
		loc   *time.Location
		want  string
	}{
		{time.Hour, time.UTC, "2026-12-03T23:00:00Z"},
		{15 * time.Minute, time.UTC, "2026-12-03T23:45:00Z"},
		{24 * time.Hour, time.UTC, "2026-12-03T00:00:00Z"},
		{24 * time.Hour, plus2, "2026-12-04T00:00:00+02:00"},
		{time.Hour, plus2, "2026-12-04T01:00:00+02:00"},
		{7 * 24 * time.Hour, time.UTC, "2026-11-30T00:00:00Z"}, // Monday
		{7 * 24 * time.Hour, plus2, "2026-11-30T00:00:00+02:00"},
	} {
		if got := Bucket(at, c.every, c.loc).Format(time.RFC3339); got != c.want {
			t.Errorf("Bucket(%v, %v) = %s, want %s", c.every, c.loc, got, c.want)
		}
	}
	// Before 1970, floor, not truncation toward zero.
	if got := Bucket(time.Date(1969, 12, 31, 23, 30, 0, 0, time.UTC), time.Hour, time.UTC).Format(time.RFC3339); got != "1969-12-31T23:00:00Z" {
		t.Errorf("1969: %s", got)
	}
	for d := int64(-800000); d < 800000; d += 997 {
		y, m, dd := civilFromDays(d)
		if back := daysFromCivil(y, m, dd); back != d {
			t.Fatalf("day %d -> %d-%d-%d -> %d", d, y, m, dd, back)
		}
		if tm := time.Date(int(y), time.Month(m), int(dd), 0, 0, 0, 0, time.UTC); tm.Unix() != d*86400 {
			t.Fatalf("day %d is %v", d, tm)
		}
	}
}

func TestZone(t *testing.T) {
	for _, s := range []string{"+02:00", "-0530", "+05", "UTC"} {
		if _, err := Zone(s, time.UTC); err != nil {
			t.Errorf("Zone(%q): %v", s, err)
		}
	}
	for _, s := range []string{"+25:00", "+2", "Nowhere/City"} {
		if _, err := Zone(s, time.UTC); err == nil {
			t.Errorf("Zone(%q) took it", s)
		}
	}
}
