package ndjsontool

import (
	"time"

	"github.com/agentry/agentry/lib/linetime"
)

// TimeWindow reads each line's time, at Path (lib/linetime: RFC 3339 or
// an epoch number), and passes on only the lines in [Since, Until); a zero
// bound is open. A line with no value at Path (or null) is outside every window,
// and dropped without a word (a transcript's lines that are not events,
// such as Claude Code's summaries, have no time). A value there that is
// no time is skipped and reported as a malformed line is, never guessed.
// Any verb that goes line by line takes it (Stream.Time): where --since,
// stats --every.
type TimeWindow struct {
	Path         string
	Since, Until time.Time
	fp           fastPath
}

// NewTimeWindow is the window of the time at path between since and until.
func NewTimeWindow(path string, since, until time.Time) *TimeWindow {
	return &TimeWindow{Path: path, Since: since, Until: until, fp: parseFastPath(path)}
}

// lineTime is what a line's time is: none (no value at the path), bad (a
// value that is no time) or read.
type lineTime int

const (
	timeRead lineTime = iota
	timeNone
	timeBad
)

// read reads a valid line's time.
func (w *TimeWindow) read(line []byte, lv lineView) (time.Time, lineTime) {
	v := get(line, lv.marks, w.Path, w.fp)
	if !v.ok || string(v.raw) == "null" {
		return time.Time{}, timeNone
	}
	t, err := linetime.Parse(v.raw)
	if err != nil {
		return time.Time{}, timeBad
	}
	return t, timeRead
}

func (w *TimeWindow) holds(t time.Time) bool {
	if !w.Since.IsZero() && t.Before(w.Since) {
		return false
	}
	return w.Until.IsZero() || t.Before(w.Until)
}
