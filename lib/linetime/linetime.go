// Package linetime reads the time a JSON value holds, and places times in
// windows and buckets. The clock and the time zone are always given: the
// package holds no state and never reads the time itself.
//
// A time is an RFC 3339 string, with any offset ("2026-12-01T09:30:00Z",
// "2026-12-01T10:30:00.123+01:00"), or an epoch number, whose unit is told
// by its magnitude: under 1e11 seconds (up to the year 5138), under 1e14
// milliseconds, under 1e17 microseconds, else nanoseconds. A number may
// have a fraction. Anything else is no time, never a guess.
package linetime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrNotTime is the error of a value that holds no time.
var ErrNotTime = errors.New("not an RFC 3339 time or an epoch number")

// Parse reads the time in raw, a valid JSON value.
func Parse(raw []byte) (time.Time, error) {
	if len(raw) == 0 {
		return time.Time{}, ErrNotTime
	}
	switch c := raw[0]; {
	case c == '"':
		s := string(raw[1 : len(raw)-1])
		if bytes.IndexByte(raw, '\\') >= 0 {
			if json.Unmarshal(raw, &s) != nil {
				return time.Time{}, ErrNotTime
			}
		}
		t, err := rfc3339(s)
		if err != nil {
			return time.Time{}, ErrNotTime
		}
		return t, nil
	case c == '-' || c >= '0' && c <= '9':
		return epoch(raw)
	}
	return time.Time{}, ErrNotTime
}

// Epoch units by magnitude: a number under the first bound is seconds,
// under the second milliseconds, under the third microseconds, else
// nanoseconds.
const (
	secondsBelow = 1e11
	millisBelow  = 1e14
	microsBelow  = 1e17
)

func epoch(raw []byte) (time.Time, error) {
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		a := n
		if a < 0 {
			a = -a
		}
		switch {
		case a < secondsBelow:
			return time.Unix(n, 0), nil
		case a < millisBelow:
			return time.UnixMilli(n), nil
		case a < microsBelow:
			return time.UnixMicro(n), nil
		}
		return time.Unix(0, n), nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return time.Time{}, ErrNotTime
	}
	a := math.Abs(f)
	scale := 1.0 // to seconds
	switch {
	case a < secondsBelow:
	case a < millisBelow:
		scale = 1e-3
	case a < microsBelow:
		scale = 1e-6
	default:
		scale = 1e-9
	}
	s := f * scale
	if math.Abs(s) > 1e15 {
		return time.Time{}, ErrNotTime
	}
	sec := math.Floor(s)
	return time.Unix(int64(sec), int64(math.Round((s-sec)*1e9))), nil
}

// ParseDuration reads a duration as Go does ("90m", "1h30m") with two
// more units: d, 24 hours, and w, 7 days ("7d", "2w", "1d12h").
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
			j++
		}
		if i == 0 || i == j {
			return 0, fmt.Errorf("%q is not a duration such as 90m, 24h or 7d", s)
		}
		num, unit := rest[:i], rest[i:j]
		rest = rest[j:]
		var day float64
		switch unit {
		case "d":
			day = 1
		case "w":
			day = 7
		}
		if day > 0 {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("%q is not a duration such as 90m, 24h or 7d", s)
			}
			total += time.Duration(f * day * float64(24*time.Hour))
			continue
		}
		d, err := time.ParseDuration(num + unit)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration such as 90m, 24h or 7d", s)
		}
		total += d
	}
	return total, nil
}

// rfc3339 reads an RFC 3339 time as the RFC allows it written (its 5.6):
// with a "t" or a space between the date and the time, and a "z" for
// UTC, as well as Go's "T" and "Z".
func rfc3339(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil || len(s) < 11 || s[10] != 't' && s[10] != ' ' && !strings.HasSuffix(s, "z") {
		return t, err
	}
	b := []byte(s)
	if b[10] == 't' || b[10] == ' ' {
		b[10] = 'T'
	}
	if b[len(b)-1] == 'z' {
		b[len(b)-1] = 'Z'
	}
	return time.Parse(time.RFC3339Nano, string(b))
}

// Bound reads a window's edge: a duration back from now ("24h", "7d"),
// an RFC 3339 time, a date ("2026-12-01", its midnight in loc), a date and
// time without an offset (in loc). A bare number is neither: "24" is
// refused rather than read as 24 seconds after 1970.
func Bound(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if t, err := rfc3339(s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if d, err := ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration back from now (24h, 7d) nor a time (2026-12-01T00:00:00Z, 2026-12-01)", s)
}

// Zone reads a --tz: "UTC", "Local", an IANA name ("Europe/Paris", from
// the system's zoneinfo) or a fixed offset ("+02:00", "-0530").
func Zone(s string, local *time.Location) (*time.Location, error) {
	switch s {
	case "", "UTC", "Z":
		return time.UTC, nil
	case "Local":
		return local, nil
	}
	if s[0] == '+' || s[0] == '-' {
		d := strings.ReplaceAll(s[1:], ":", "")
		if len(d) == 2 {
			d += "00"
		}
		if len(d) == 4 && strings.Trim(d, "0123456789") == "" {
			h, _ := strconv.Atoi(d[:2])
			m, _ := strconv.Atoi(d[2:])
			if h <= 23 && m <= 59 {
				off := (h*60 + m) * 60
				if s[0] == '-' {
					off = -off
				}
				return time.FixedZone(s, off), nil
			}
		}
		return nil, fmt.Errorf("%q is not an offset such as +02:00", s)
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", s)
	}
	return loc, nil
}

// Bucket is the start of the bucket of length every that t falls in, in
// loc. A bucket of whole days starts at midnight in loc, counted from
// 1970-01-01, and one of whole weeks on a Monday; a shorter one is aligned
// to loc's midnight (every should divide a day: 1h, 15m), taking loc's
// offset at t.
func Bucket(t time.Time, every time.Duration, loc *time.Location) time.Time {
	lt := t.In(loc)
	const day = 24 * time.Hour
	if every >= day && every%day == 0 {
		n := int64(every / day)
		y, m, d := lt.Date()
		dn := daysFromCivil(int64(y), int64(m), int64(d))
		base := int64(0)
		if n%7 == 0 {
			base = -3 // 1969-12-29, a Monday
		}
		dn = base + floorDiv(dn-base, n)*n
		y2, m2, d2 := civilFromDays(dn)
		return time.Date(int(y2), time.Month(m2), int(d2), 0, 0, 0, 0, loc)
	}
	_, off := lt.Zone()
	ns := t.UnixNano() + int64(off)*1e9
	ns = floorDiv(ns, int64(every))*int64(every) - int64(off)*1e9
	return time.Unix(0, ns).In(loc)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d
// (proleptic Gregorian), Howard Hinnant's algorithm.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return
}
