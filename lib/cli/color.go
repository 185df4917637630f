package cli

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// UseColor decides colour for output to w: mode "always" and "never" say so;
// "auto" (or empty) means only on a terminal, and never when NO_COLOR is set
// to anything non-empty (no-color.org).
func UseColor(mode string, w io.Writer, getenv func(string) string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return getenv("NO_COLOR") == "" && IsTerminal(w)
}

// IsTerminalReader reports whether r is a terminal.
func IsTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
