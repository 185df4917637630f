package cli

import (
	"fmt"
	"io"
)

// Voice is how a program speaks on stderr: every error, warning and note
// any agentry program prints goes through one of its three methods, so
// they all read "prog: error: …" (then "prog: hint: …"), "prog: warning:
// …" and "prog: …".
type Voice struct {
	Prog string
	W    io.Writer
}

// Error prints err, and its hint when it has one.
func (v Voice) Error(err error) {
	fmt.Fprintf(v.W, "%s: error: %s\n", v.Prog, oneLine(err.Error()))
	if h := Hint(err); h != "" {
		fmt.Fprintf(v.W, "%s: hint: %s\n", v.Prog, oneLine(h))
	}
}

// Warnf prints a warning: something the user should know went wrong, that
// did not stop the work.
func (v Voice) Warnf(format string, args ...any) {
	fmt.Fprintf(v.W, "%s: warning: %s\n", v.Prog, oneLine(fmt.Sprintf(format, args...)))
}

// Notef prints a note: what the program did or is doing, when the user
// should hear it on stderr.
func (v Voice) Notef(format string, args ...any) {
	fmt.Fprintf(v.W, "%s: %s\n", v.Prog, oneLine(fmt.Sprintf(format, args...)))
}
