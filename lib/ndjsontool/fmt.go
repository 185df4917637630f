package ndjsontool

import (
	"context"
	"strings"

	"github.com/tidwall/pretty"
)

// FmtOptions are the options of fmt.
type FmtOptions struct {
	Compact  bool // one line per value, no insignificant space
	Indent   int  // spaces per level when pretty
	SortKeys bool
	Color    bool
}

// What a chunk's output may hold before its lines are deferred: fmtSlack
// bytes and fmtRatio times the chunk's lines. Ordinary lines pretty-print
// to a few times their size; a nested line's indentation grows as the
// square of its depth.
const (
	fmtSlack = 4 << 20
	fmtRatio = 4
)

// fmtOut is a chunk's output: buf, in which each deferred span is a line
// written by the streaming printer when the chunk's turn comes; the rest is
// output.
type fmtOut struct {
	buf   []byte
	later []fmtSpan
	in    int // bytes of the chunk's lines
	held  int // bytes of output in buf
}

type fmtSpan struct{ start, end int }

// Fmt prints every valid line pretty (indented) or compact. Key order and
// number text are kept as they were.
//
// A line is printed by tidwall/pretty in the worker that checks it, unless
// its output would make the chunk's more than fmtSlack plus fmtRatio times
// the chunk's lines: then it is kept as it is, and printed by the
// streaming printer (fmt_stream.go) to the same bytes when the chunk is
// written, through a small buffer. So memory stays bounded whatever a
// line's depth, and the output is pretty's whatever the line.
func Fmt(ctx context.Context, st *Stream, o FmtOptions) error {
	sty := fmtStyle{indent: o.Indent, compact: o.Compact, sortKeys: o.SortKeys, color: o.Color}
	opts := &pretty.Options{Width: 0, Indent: strings.Repeat(" ", o.Indent), SortKeys: o.SortKeys}
	pool := make(chan *fmtOut, 16)
	var wbuf []byte
	sk, err := eachChunk(ctx, st, finding{}, func() *fmtOut {
		select {
		case out := <-pool:
			return out
		default:
			return &fmtOut{}
		}
	}, func(out *fmtOut, line []byte, _ lineView) *fmtOut {
		out.in += len(line)
		room := fmtSlack + fmtRatio*out.in - out.held
		if sty.worst(len(line)) > room && sty.size(line) > room {
			out.later = append(out.later, fmtSpan{len(out.buf), len(out.buf) + len(line)})
			out.buf = append(out.buf, line...)
			return out
		}
		n := len(out.buf)
		out.buf = fmtPretty(out.buf, line, sty, opts)
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
			p := newFmtPrinter(out.buf[d.start:d.end], sty)
			for {
				n := p.read(wbuf)
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
		if cap(out.buf) <= fmtSlack && cap(out.later) <= 1024 {
			out.buf, out.later, out.in, out.held = out.buf[:0], out.later[:0], 0, 0
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

// fmtPretty appends what fmt prints for line, by tidwall/pretty.
func fmtPretty(out, line []byte, sty fmtStyle, opts *pretty.Options) []byte {
	var b []byte
	switch {
	case sty.compact && sty.sortKeys:
		b = pretty.Ugly(pretty.PrettyOptions(line, opts))
	case sty.compact:
		b = pretty.Ugly(line)
	default:
		b = pretty.PrettyOptions(line, opts)
	}
	if sty.color {
		b = pretty.Color(b, nil)
	}
	out = append(out, b...)
	if len(b) == 0 || b[len(b)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}

// writeSome writes b unless it is empty.
func writeSome(st *Stream, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := st.Out.Write(b)
	return err
}
