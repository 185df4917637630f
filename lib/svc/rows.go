package svc

import (
	"fmt"
	"strings"
	"unicode/utf8"

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
		out = append(out, cutNote(string(r.Line), r.Size-int64(len(r.Line))))
		return nil
	})
	return out
}

// ShortLine is a line of output as a tail shows it: cut at 4 KiB, as
// LastLines cuts a row, with a note of what more it had.
func ShortLine(line string) string {
	if len(line) <= lastLineMost {
		return line
	}
	return cutNote(line[:lastLineMost], int64(len(line)-lastLineMost))
}

// cutNote is line, cut short of more bytes, with a note of them; a
// character the cut split is left out whole.
func cutNote(line string, more int64) string {
	if more <= 0 {
		return line
	}
	for k := 1; k <= utf8.UTFMax && k <= len(line); k++ {
		if c := line[len(line)-k]; utf8.RuneStart(c) {
			if !utf8.FullRuneInString(line[len(line)-k:]) {
				more += int64(k)
				line = line[:len(line)-k]
			}
			break
		}
	}
	return line + fmt.Sprintf(" … [%d more bytes]", more)
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
// begins with, and up to StackReach lines through a stack that goes on
// longer than that (CrashTail); of a crash longer than TailReach lines,
// its first TailHead lines and its last TailEnd.
const (
	TailLines  = 10
	TailReach  = 30
	StackReach = 1000
	TailHead   = 20
	TailEnd    = 5
)

// EndTail is the tail of the service's log shown when it has ended (see
// CrashTail): of its last start's output alone (State.LogFrom), never an
// earlier start's of the same name.
func EndTail(d Dir, s *State) []string { return CrashTail(LastLines(d, StackReach, s.LogFrom)) }

// CrashTail is what to show of the last lines of a service's output: the
// last TailLines, or, when a line above them (up to TailReach from the
// end) begins an error — Node's `Error: …` or `TypeError: …` with its
// stack below, Go's `panic: …`, Python's `Traceback …` — from the last
// such line and those that begin errors just above it (vite's `error when
// starting dev server:` over its `Error: …`), so that a crash's cause is
// not cut off above its stack, and an ordinary line that happens to begin
// with a word like Error, further up, is not taken for it. A stack longer
// than that (a Go panic a hundred frames deep, every goroutine of a
// runtime error, a Java exception) is followed up, as far as the lines
// given go, to the error right above it. Of a crash longer than TailReach
// lines, the first TailHead (the error and where it happened) and the last
// TailEnd are shown, with a line between that says how many are left out.
func CrashTail(lines []string) []string {
	if len(lines) <= TailLines {
		return lines
	}
	from := len(lines) - TailLines
	for i := from - 1; i >= max(0, len(lines)-TailReach); i-- {
		if beginsError(lines[i]) {
			return lines[errorHead(lines, i):]
		}
	}
	if top := stackTop(lines); top >= 0 && beginsError(lines[top]) {
		return elide(lines[errorHead(lines, top):])
	}
	return lines[from:]
}

// elide is a crash of more than TailReach lines cut to its first TailHead
// and its last TailEnd, with a line that says how many are left out.
func elide(lines []string) []string {
	if len(lines) <= TailReach {
		return lines
	}
	out := append(make([]string, 0, TailHead+1+TailEnd), lines[:TailHead]...)
	out = append(out, fmt.Sprintf("… %d lines left out …", len(lines)-TailHead-TailEnd))
	return append(out, lines[len(lines)-TailEnd:]...)
}

// errorHead is the first of the lines that begin errors, one right above
// the other, that end at lines[i].
func errorHead(lines []string, i int) int {
	for i > 0 && beginsError(lines[i-1]) {
		i--
	}
	return i
}

// stackTop is the index of the line right above the stack the lines end
// with (after at most two lines of another kind, such as go run's `exit
// status 2` or Node's version), or -1 when their last TailLines are not
// all of a stack, or when an error follows it (Python's `KeyError: 'a'`
// under its traceback: the tail already shows the cause).
func stackTop(lines []string) int {
	end := len(lines)
	for k := 0; k < 2 && end > 0 && !inStack(lines[end-1]); k++ {
		if beginsError(lines[end-1]) {
			return -1
		}
		end--
	}
	i := end
	for i > 0 && inStack(lines[i-1]) {
		i--
	}
	if end-i < TailLines-2 || i == 0 {
		return -1
	}
	return i - 1
}

// inStack reports whether a line may be part of a stack trace: indented
// (Go's file lines, Java's `at`, Node's `    at`, Python's `  File`),
// blank, Go's goroutine header, a call such as `main.main()` or
// `net/http.(*conn).serve(0xc000…)`, `created by …`, the signal line
// under a Go runtime error and its `runtime stack:`, Java's `Caused by:
// …`, or the brace that ends Node's error with a cause.
func inStack(line string) bool {
	switch {
	case line == "", line[0] == ' ', line[0] == '\t', line == "}", line == "]", line == "runtime stack:":
		return true
	case strings.HasPrefix(line, "goroutine ") && strings.HasSuffix(line, ":"),
		strings.HasPrefix(line, "created by "), strings.HasPrefix(line, "[signal "), strings.HasPrefix(line, "Caused by: "),
		strings.HasPrefix(line, "...") && strings.HasSuffix(line, "..."):
		return true
	}
	open := strings.IndexByte(line, '(')
	return open > 0 && strings.HasSuffix(line, ")") && !strings.ContainsAny(line[:open], " \t")
}

// beginsError reports whether a line's first word names an error (one
// containing error, exception, fatal or panic, or Traceback), or, when it
// begins with a tag in brackets ("[vite] error …"), the tag or the word
// after it does. A line of a stack is none: one indented by a tab (Go's
// and Java's file lines), a word with a slash (a path,
// /src/app/errors.go:12), a word called (errors.New(…), panic({…})).
func beginsError(line string) bool {
	if strings.HasPrefix(line, "\t") {
		return false
	}
	if strings.HasPrefix(line, "runtime: ") {
		return true // Go's runtime, above its fatal error
	}
	w := strings.TrimLeft(line, " ")
	if tag, rest, ok := strings.Cut(strings.TrimPrefix(w, "["), "]"); ok && strings.HasPrefix(w, "[") {
		return namesError(tag) || namesError(strings.TrimLeft(rest, " \t"))
	}
	return namesError(w)
}

// namesError reports whether the first word of s names an error.
func namesError(s string) bool {
	if end := strings.IndexAny(s, " :("); end >= 0 {
		if s[end] == '(' {
			return false
		}
		s = s[:end]
	}
	if strings.Contains(s, "/") {
		return false
	}
	s = strings.ToLower(s)
	return s == "traceback" || strings.Contains(s, "error") || strings.Contains(s, "exception") ||
		strings.Contains(s, "fatal") || strings.Contains(s, "panic")
}
