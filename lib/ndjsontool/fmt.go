package ndjsontool

import (
	"context"
)

// FmtOptions are the options of fmt.
type FmtOptions struct {
	Compact  bool // one line per value, no insignificant space
	Indent   int  // spaces per level when pretty
	SortKeys bool
	Color    bool
}

// What a chunk's output may hold: fmtSlack bytes and fmtRatio times the
// chunk's lines. Ordinary lines pretty-print to a few times their size; a
// nested line's indentation grows as the square of its depth.
const (
	fmtSlack = 1 << 20
	fmtRatio = 4
)

// fmtOut is a chunk's output: buf, in which each span of later is a line
// to be printed when the chunk is written; the rest is output.
type fmtOut struct {
	buf   []byte
	later []fmtSpan
	in    int // bytes of the chunk's lines
	held  int // bytes of output in buf
	p     fmtPrinter
}

type fmtSpan struct{ start, end int }

// Fmt prints every valid line pretty (indented) or compact. Key order and
// number text are kept as they were.
//
// Each line is printed (fmt_stream.go) in the worker that checks it, into
// its chunk's output, unless that would take the chunk's output past
// fmtSlack plus fmtRatio times its lines: then the line is kept as it is
// and printed when its chunk is written, through a small buffer. So memory
// stays bounded whatever a line's depth.
func Fmt(ctx context.Context, st *Stream, o FmtOptions) error {
	return fmtHolding(ctx, st, o, fmtSlack)
}

// fmtHolding is Fmt with slack in place of fmtSlack.
func fmtHolding(ctx context.Context, st *Stream, o FmtOptions, slack int) error {
	sty := fmtStyle{indent: o.Indent, compact: o.Compact, sortKeys: o.SortKeys, color: o.Color}
	pool := make(chan *fmtOut, 16)
	var wbuf []byte
	sk, err := eachChunk(ctx, st, finding{}, func() *fmtOut {
		select {
		case out := <-pool:
			return out
		default:
			return &fmtOut{}
		}
	}, func(out *fmtOut, line []byte, lv lineView) *fmtOut {
		out.in += len(line)
		room := slack + fmtRatio*out.in - out.held
		if sty.worst(len(line)) > room && sty.size(line) > room {
			out.later = append(out.later, fmtSpan{len(out.buf), len(out.buf) + len(line)})
			out.buf = append(out.buf, line...)
			return out
		}
		n := len(out.buf)
		out.p.initMarked(line, lv.marks, sty)
		out.buf = out.p.appendTo(out.buf)
		out.held += len(out.buf) - n
		return out
	}, func(out *fmtOut, _ int64) error {
		at := 0
		for _, d := range out.later {
			if err := writeSome(st, out.buf[at:d.start]); err != nil {
				return err
			}
			if wbuf == nil {
				wbuf = make([]byte, 64<<10)
			}
			out.p.init(out.buf[d.start:d.end], sty)
			for {
				n := out.p.read(wbuf)
				if n == 0 {
					break
				}
				if _, err := st.Out.Write(wbuf[:n]); err != nil {
					return err
				}
			}
			at = d.end
		}
		if err := writeSome(st, out.buf[at:]); err != nil {
			return err
		}
		if cap(out.buf) <= 4<<20 && cap(out.later) <= 1024 {
			out.buf, out.later, out.in, out.held = out.buf[:0], out.later[:0], 0, 0
			out.p.line = nil
			select {
			case pool <- out:
			default:
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}

// writeSome writes b unless it is empty.
func writeSome(st *Stream, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := st.Out.Write(b)
	return err
}
