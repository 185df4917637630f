package ndjsontool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"runtime/debug"

	"github.com/agentry/agentry/lib/extsort"
	"github.com/agentry/agentry/lib/jsoncmp"
	"github.com/agentry/agentry/lib/ndjson"
)

// SortOptions are sort's.
type SortOptions struct {
	Keys    []string // gjson paths, most significant first
	Reverse bool
	// Memory bounds the lines held at once (0: extsort.DefaultMemory);
	// past it, sorted runs go to temporary files that are merged at the
	// end.
	Memory int64
	// Top, when set, keeps only the first *Top lines of the order, in a
	// heap: none for 0.
	Top *int
	// TempDir is where runs go (default: os.TempDir()).
	TempDir string
}

// Sort prints the valid lines ordered by the values at the keys: numbers
// as numbers, strings by their text's bytes, then anything else by the
// bytes of its compact JSON; a line without a key, or with null there,
// comes last, -r or not. Equal lines keep their input order. Lines are
// printed as they came, byte for byte.
func Sort(ctx context.Context, st *Stream, o SortOptions) error {
	if len(o.Keys) == 0 {
		return &OptionError{Option: "Keys", Reason: "must hold at least one path"}
	}
	if o.Memory <= 0 {
		o.Memory = extsort.DefaultMemory
	}
	top := 0
	if o.Top != nil {
		if top = *o.Top; top < 0 {
			return &OptionError{Option: "Top", Reason: "cannot be negative"}
		}
	}
	none := o.Top != nil && top == 0 // every line is still checked, for the report
	fps := make([]fastPath, len(o.Keys))
	for i, k := range o.Keys {
		fps[i] = parseFastPath(k)
	}
	s := extsort.New(extsort.Options{Memory: o.Memory, Top: top, TempDir: o.TempDir, Prefix: "ndjson-sort-"})
	defer s.Close()
	var addErr error
	// What sort holds is live until it is spilled, so the collector's
	// usual headroom (as much again as is live) would double it: the
	// budget is kept as a soft limit on the whole heap, for the command's
	// life.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(o.Memory + 16<<20))
	// Workers validate each line and frame it with its sort key; the
	// ordered stage adds them, in input order, to the sorter.
	sk, err := st.eachLineThen(ctx, finding{paths: fps}, func(out, line []byte, lv lineView) []byte {
		start := len(out)
		out = binary.AppendUvarint(out, 0)
		keyAt := len(out)
		for i, k := range o.Keys {
			v := lv.foundAt(i, line, k, fps[i]) // the check found them all on its way
			out = appendSortKey(out, v, o.Reverse)
		}
		out = frame(out, start, keyAt)
		out = binary.AppendUvarint(out, uint64(len(line)))
		return append(out, line...)
	}, func(framed []byte) []byte {
		for len(framed) > 0 && addErr == nil && !none {
			key, rest := unframe(framed)
			line, rest2 := unframe(rest)
			framed = rest2
			addErr = s.Add(key, line)
		}
		return nil
	})
	if err == nil {
		err = addErr
	}
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(st.Out, 1<<16)
	if err := s.Each(func(line []byte) error {
		w.Write(line)
		return w.WriteByte('\n')
	}); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return sk.report(st)
}

// appendSortKey appends a key whose bytes order as the values do: a tag
// (number, string, other, missing), then the value's jsoncmp key (numbers
// by their exact value, strings by their text's bytes, others by
// jsoncmp's order: false, true, arrays, objects); reversed, every byte but
// a missing value's is complemented, so a missing value stays last.
func appendSortKey(out []byte, v value, reverse bool) []byte {
	start := len(out)
	switch {
	case !v.ok || string(v.raw) == "null":
		return append(out, 0xff)
	case isNumber(v):
		out = jsoncmp.AppendNumberKey(append(out, 0x01), v.raw)
	case v.isString():
		out = jsoncmp.AppendTextKey(append(out, 0x02), unescaped(v.raw))
	default:
		out = jsoncmp.AppendKey(append(out, 0x03), v.raw)
	}
	if reverse {
		for i := start; i < len(out); i++ {
			out[i] = ^out[i]
		}
	}
	return out
}

// isNumber reports whether v is a number.
func isNumber(v value) bool {
	return v.ok && (v.raw[0] == '-' || v.raw[0] >= '0' && v.raw[0] <= '9')
}

// unescaped is the text of raw, a JSON string: raw's own bytes when it has
// no escape.
func unescaped(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	return ndjson.AppendUnescaped(nil, raw, false)
}
