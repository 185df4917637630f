package ndjsontool

import (
	"errors"
	"fmt"
	"strings"
)

// The verbs' errors are typed, and name no flag and no exit code: the
// command line (lib/ndjsoncmd) checks its flags before it calls a verb,
// and words what comes back for its reader.

// Voice is how a verb speaks on stderr while it runs: a note of what it
// did, an error it reports and goes on past. lib/cli's Voice is one.
type Voice interface {
	Notef(format string, args ...any)
	Error(err error)
}

// An ArgError is an argument a verb cannot read: a field of set, del,
// make, pick, csv or tsv, as it was given. Its Error is the sentence that
// says why; Err, when it is one of the Err values below, says it to a
// caller.
type ArgError struct {
	Arg string
	Err error
	msg string
}

func (e *ArgError) Error() string { return e.msg }
func (e *ArgError) Unwrap() error { return e.Err }

// Why a field of pick (csv, tsv) cannot be read.
var (
	ErrEmptyPath = errors.New("the path is empty")
	ErrNeedsName = errors.New("a path with gjson syntax needs a name")
	ErrSameName  = errors.New("two fields have the same name")
)

// argError is the ArgError of arg, saying msg, for err.
func argError(arg string, err error, format string, args ...any) *ArgError {
	return &ArgError{Arg: arg, Err: err, msg: fmt.Sprintf(format, args...)}
}

// An OptionError is an option a verb cannot run with, or one it needs and
// was not given: Option is its field in the verb's options (GetOptions'
// Paths and Missing, PickOptions' and TableOptions' Fields, SortOptions'
// Keys and Top, StatsOptions' Fields and Every, CheckOptions' Protocol;
// By for Uniq's path), Value what it was given when that matters, Reason
// the rest of the sentence.
type OptionError struct {
	Option string
	Value  string
	Reason string
}

func (e *OptionError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("%s %q %s", e.Option, e.Value, e.Reason)
	}
	return e.Option + " " + e.Reason
}

// A CheckError is check's answer when some line failed it (Bad of
// Lines), or the input as a whole did, under --strict: it began with a
// byte order mark (BOM), its last line had no newline (NoFinalNewline).
type CheckError struct {
	Bad, Lines          int64
	BOM, NoFinalNewline bool
}

func (e *CheckError) Error() string {
	var parts []string
	if e.Bad > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d %s failed the check", e.Bad, e.Lines, plural(e.Lines, "line")))
	}
	if e.BOM {
		parts = append(parts, "the input begins with a byte order mark")
	}
	if e.NoFinalNewline {
		parts = append(parts, "its last line has no newline")
	}
	if len(parts) == 0 {
		return "the input failed the check"
	}
	if e.Bad == 0 {
		parts[0] = strings.Replace(parts[0], "its last", "the last", 1)
	}
	return strings.Join(parts, "; ")
}

// A SkippedError is a strict stream's failure: lines were skipped
// (malformed, over the cap, their time unreadable). Its Error is the last
// sentence of the report; the others went to the Voice as errors before
// it.
type SkippedError struct {
	Malformed, Long, BadTime int64
	msg                      string
}

func (e *SkippedError) Error() string { return e.msg }
