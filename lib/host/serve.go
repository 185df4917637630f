package host

import (
	"context"
	"errors"
	"io"
	"runtime/debug"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/protocol"
)

// Serve speaks the protocol over in and out until shutdown, the end of in,
// or ctx (SIGTERM) — each of which drains the host and ends with bye. It
// returns nil after a clean bye, or the error that ended reading. Lines
// over opts.MaxLine are skipped with a log notice; nothing in the input
// ends the loop but its end.
// bigLine is the length from which a line's reading is worth a collection.
const bigLine = 8 << 20

func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	w := ndjson.NewWriter(out)
	h := New(opts, func(m protocol.Msg) {
		// A write to a closed stdout ends the process with SIGPIPE, which
		// is right: nobody is listening any more.
		if b, err := protocol.Encode(m); err == nil {
			_ = w.WriteLine(b)
		}
	})
	r := ndjson.NewReader(in, opts.MaxLine)
	readDone := make(chan error, 1)
	go func() {
		for {
			line, err := r.Next()
			var tl *ndjson.TooLongError
			switch {
			case errors.As(err, &tl):
				h.SkippedLine(tl.Line, tl.Size)
				continue
			case err == io.EOF:
				readDone <- nil
				return
			case err != nil:
				readDone <- err
				return
			}
			if len(line) == 0 {
				continue
			}
			big := len(line) >= bigLine
			if big {
				// The reader's buffers for it are garbage now: give their
				// memory back before parsing copies what it keeps, so a
				// line near the cap costs about twice itself, not three
				// times (DESIGN.md).
				debug.FreeOSMemory()
			}
			h.Deliver(protocol.Parse(line))
			if big {
				// And what parsing it left, before the next line is read.
				debug.FreeOSMemory()
			}
			select {
			case <-h.Done():
				readDone <- nil
				return
			default:
			}
		}
	}()
	var err error
	select {
	case err = <-readDone:
		if err == nil {
			select {
			case <-h.Done():
			default:
				h.Log("info", "host", "input ended; draining")
			}
		}
		h.InputEnded()
	case <-ctx.Done():
		h.Log("info", "host", "signalled; draining")
	case <-h.Done():
	}
	h.Drain("")
	return err
}
