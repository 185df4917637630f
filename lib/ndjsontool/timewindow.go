package ndjsontool

import (
	"time"

	"github.com/agentry/agentry/lib/linetime"
)

// TimeWindow reads each line's time, at Path (lib/linetime: RFC 3339 or
// an epoch number), and passes on only the lines in [Since, Until); a zero
// bound is open. A line whose time cannot be read (missing, or no time) is
// skipped and reported as a malformed line is, never guessed. Any verb
// that goes line by line takes it (Stream.Time): where --since, stats
// --every.
type TimeWindow struct {
	Path         string
	Since, Until time.Time
	fp           fastPath
}

// NewTimeWindow is the window of the time at path between since and until.
func NewTimeWindow(path string, since, until time.Time) *TimeWindow {
	return &TimeWindow{Path: path, Since: since, Until: until, fp: parseFastPath(path)}
}

// read reads a valid line's time.
func (w *TimeWindow) read(line []byte, lv lineView) (time.Time, bool) {
	v := get(line, lv.marks, w.Path, w.fp)
	if !v.ok {
		return time.Time{}, false
	}
	t, err := linetime.Parse(v.raw)
	return t, err == nil
}

func (w *TimeWindow) holds(t time.Time) bool {
	if !w.Since.IsZero() && t.Before(w.Since) {
		return false
	}
	return w.Until.IsZero() || t.Before(w.Until)
}
