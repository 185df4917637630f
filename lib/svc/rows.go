package svc

import (
	"fmt"
	"strings"

	"github.com/agentry/agentry/lib/svc/logfile"
)

// Row is one row of a service's log.
type Row = logfile.Row

// lastLineMost is how much of a row LastLines keeps: a tail shown in a
// message or a result, not a log.
const lastLineMost = 4 << 10

// LastLines are the last n rows of the service's log after row from, as
// text, each cut at 4 KiB with a note of what more it had.
func LastLines(d Dir, n int, from int64) []string {
	last, err := logfile.LastRow(d.Path())
	if err != nil {
		return nil
	}
	var out []string
	logfile.ReadRowsUpTo(d.Path(), max(last-int64(n), from, 0), lastLineMost, func(r Row) error {
		line := string(r.Line)
		if more := r.Size - int64(len(r.Line)); more > 0 {
			line += fmt.Sprintf(" … [%d more bytes]", more)
		}
		out = append(out, line)
		return nil
	})
	return out
}

// ReadRowsUpTo is ReadRows holding at most most bytes of each row (see
// logfile.ReadRowsUpTo).
func ReadRowsUpTo(d Dir, since int64, most int, fn func(Row) error) (int64, error) {
	return logfile.ReadRowsUpTo(d.Path(), since, most, fn)
}

// ReadRows calls fn for every row of the service's log after since, and
// returns the last row read.
func ReadRows(d Dir, since int64, fn func(Row) error) (int64, error) {
	return logfile.ReadRows(d.Path(), since, fn)
}

// What is shown of a service's output when it ends: its last TailLines
// lines, reaching back up to TailReach lines for the line its error
// begins with (CrashTail).
const (
	TailLines = 10
	TailReach = 30
)

// EndTail is the tail of the service's log shown when it has ended (see
// CrashTail): of its last start's output alone (State.LogFrom), never an
// earlier start's of the same name.
func EndTail(d Dir, s *State) []string { return CrashTail(LastLines(d, TailReach, s.LogFrom)) }

// CrashTail is what to show of the last lines of a service's output: the
// last TailLines, or, when a line above them (within the lines given)
// begins an error — Node's `Error: …` or `TypeError: …` with its stack
// below, Go's `panic: …`, Python's `Traceback …` — from the last such
// line and those that begin errors just above it (vite's `error when
// starting dev server:` over its `Error: …`), so that a crash's cause is
// not cut off above its stack, and an ordinary line that happens to begin
// with a word like Error, further up, is not taken for it.
func CrashTail(lines []string) []string {
	if len(lines) <= TailLines {
		return lines
	}
	from := len(lines) - TailLines
	for i := from - 1; i >= 0; i-- {
		if beginsError(lines[i]) {
			for i > 0 && beginsError(lines[i-1]) {
				i--
			}
			return lines[i:]
		}
	}
	return lines[from:]
}

// beginsError reports whether a line's first word names an error (one
// containing error, exception, fatal or panic, or Traceback), or, when it
// begins with a tag in brackets ("[vite] error …"), the tag or the word
// after it does.
func beginsError(line string) bool {
	w := strings.TrimLeft(line, " \t")
	if tag, rest, ok := strings.Cut(strings.TrimPrefix(w, "["), "]"); ok && strings.HasPrefix(w, "[") {
		return namesError(tag) || namesError(strings.TrimLeft(rest, " \t"))
	}
	return namesError(w)
}

// namesError reports whether the first word of s names an error.
func namesError(s string) bool {
	if end := strings.IndexAny(s, " :("); end >= 0 {
		s = s[:end]
	}
	s = strings.ToLower(s)
	return s == "traceback" || strings.Contains(s, "error") || strings.Contains(s, "exception") ||
		strings.Contains(s, "fatal") || strings.Contains(s, "panic")
}
