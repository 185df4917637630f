package ndjsontool

import (
	"fmt"
	"io"
)

// testVoice speaks as lib/cli's Voice does ("ndjson: …"), on w.
type testVoice struct{ w io.Writer }

func (v testVoice) Notef(format string, args ...any) {
	fmt.Fprintf(v.w, "ndjson: %s\n", fmt.Sprintf(format, args...))
}

func (v testVoice) Error(err error) { fmt.Fprintf(v.w, "ndjson: error: %s\n", err) }
