package ndjsoncmd

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsontool"
	"github.com/agentry/agentry/lib/operands"
)

// inputFiles are a reading verb's files: the command line's operands after
// "--", one rule for every verb, since a verb's own arguments (paths,
// predicates, fields) cannot be told from file names by their place. With
// none, the verb reads stdin; "-" names it among files.
type inputFiles struct {
	files  cli.Operands
	reader *operands.Reader
}

// AfterApply takes the operands (kong calls it once the line is parsed).
func (f *inputFiles) AfterApply(ops cli.Operands) error {
	f.files = ops
	return nil
}

// open makes st read the files, when there are any.
func (f *inputFiles) open(st *ndjsontool.Stream, env *cli.Env) {
	if len(f.files) == 0 {
		return
	}
	r := operands.New(f.files, env.Stdin, func(name string) (io.ReadCloser, error) { return os.Open(name) })
	voice := env.Voice()
	r.OnError = func(e *operands.Error) { voice.Error(fileError(e)) }
	f.reader = r
	st.In, st.Locate = r, r.Locate
}

// AfterRun fails the verb when a file could not be read: each was
// reported as it happened, and the others were read.
func (f *inputFiles) AfterRun() error {
	if f.reader == nil || len(f.reader.Errors()) == 0 {
		return nil
	}
	n := len(f.reader.Errors())
	if n == 1 {
		return cli.Failf("1 of %d files could not be read", len(f.files))
	}
	return cli.Failf("%d of %d files could not be read", n, len(f.files))
}

// fileError words a file's error: its name, then why, without Go's
// "open NAME:" (the name is said once).
func fileError(e *operands.Error) error {
	err := e.Err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return errors.New(e.Name + ": " + err.Error())
}
