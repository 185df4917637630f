package ndjsoncmd

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/ndjsontool"
	"github.com/agentry/agentry/lib/operands"
	"github.com/alecthomas/kong"
	"golang.org/x/sys/unix"
)

// inputFiles are a reading verb's files: the command line's operands after
// "--", one rule for every verb, since a verb's own arguments (paths,
// predicates, fields) cannot be told from file names by their place. With
// none, the verb reads stdin; "-" names it among files.
type inputFiles struct {
	files  cli.Operands
	line   []string // the verb's own arguments, the verb first
	reader *operands.Reader
}

// AfterApply takes the operands (kong calls it once the line is parsed),
// and refuses a file given before "--" (misplaced.go).
func (f *inputFiles) AfterApply(ops cli.Operands, kctx *kong.Context, env *cli.Env) error {
	f.files, f.line = ops, kctx.Args
	if err := checkPlaced(kctx, ops, env); err != nil {
		return err
	}
	return checkJQPaths(kctx)
}

// open makes st read the files, or stdin when there are none: stdin too
// is decompressed when its first bytes are gzip's or zstd's, and read as
// it comes otherwise. A terminal read as stdin is said once: a user who
// gave a file as a path would otherwise see nothing at all.
func (f *inputFiles) open(st *ndjsontool.Stream, env *cli.Env) {
	voice := env.Voice()
	if len(f.files) == 0 {
		if isTerminal(env.Stdin) {
			voice.Notef("reading standard input, a terminal (end it with Ctrl-D); files go after --, as in: %s %s -- FILE", Name, lineText(f.line))
		}
		r := operands.New([]string{operands.Stdin}, env.Stdin, nil)
		r.OnError = func(e *operands.Error) { voice.Error(fileError(e)) }
		f.reader = r
		st.In = r
		st.Unread = func() bool { return len(r.Errors()) > 0 }
		return
	}
	r := operands.New(f.files, env.Stdin, func(name string) (io.ReadCloser, error) { return os.Open(name) })
	r.OnError = func(e *operands.Error) { voice.Error(fileError(e)) }
	f.reader = r
	st.In, st.Locate = r, r.Locate
	st.Unread = func() bool { return len(r.Errors()) == len(f.files) }
}

// lineText is the verb's own command line as the shell would take it.
func lineText(line []string) string {
	switch len(line) {
	case 0:
		return "VERB"
	case 1:
		return line[0]
	}
	return cmdline.ShellLine(line)
}

// isTerminal says whether r is a terminal (one ioctl).
func isTerminal(r io.Reader) bool {
	f, ok := r.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// AfterRun fails the verb when a file could not be read: each was
// reported as it happened, and the others were read.
func (f *inputFiles) AfterRun() error {
	if f.reader == nil || len(f.reader.Errors()) == 0 {
		return nil
	}
	if len(f.files) == 0 {
		return cli.Failf("standard input could not be read to its end")
	}
	n := len(f.reader.Errors())
	switch {
	case len(f.files) == 1:
		return cli.Failf("the file could not be read")
	case n == len(f.files):
		return cli.Failf("none of the %d files could be read", n)
	}
	return cli.Failf("%d of %d files could not be read", n, len(f.files))
}

// fileError words a file's error: its name, then why, without Go's
// "open NAME:" (the name is said once).
func fileError(e *operands.Error) error {
	err, name := e.Err, e.Name
	if name == operands.Stdin {
		name = "standard input"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return errors.New(name + ": " + err.Error())
}
