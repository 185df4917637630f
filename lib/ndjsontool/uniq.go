package ndjsontool

import (
	"context"
	"encoding/binary"

	"github.com/agentry/agentry/lib/jsoncmp"
	"github.com/agentry/agentry/lib/ndjson"
)

// Uniq prints the first valid line for each distinct value at path, in
// input order. Values are the same by jsoncmp's rule (numbers by their
// exact value: 1 and 1.0 are one; strings by their text, whatever their
// escapes); a line without the path counts as null.
// Memory grows with the number of distinct values, not with the input.
func Uniq(ctx context.Context, st *Stream, path string) error {
	if path == "" {
		return &OptionError{Option: "By", Reason: "must be a path"}
	}
	fp := parseFastPath(path)
	seen := map[string]struct{}{}
	var kept []byte
	// Workers frame each valid line with its key; the ordered stage keeps
	// the lines whose key is new.
	sk, err := st.eachLineThen(ctx, finding{path: fp}, func(out, line []byte, lv lineView) []byte {
		start := len(out)
		out = binary.AppendUvarint(out, 0) // room for the key's length, fixed below
		keyAt := len(out)
		out = appendKey(out, lv.found(line, path, fp))
		out = frame(out, start, keyAt)
		out = binary.AppendUvarint(out, uint64(len(line)))
		return append(out, line...)
	}, func(framed []byte) []byte {
		kept = kept[:0]
		for len(framed) > 0 {
			key, rest := unframe(framed)
			line, rest2 := unframe(rest)
			framed = rest2
			if _, dup := seen[string(key)]; dup {
				continue
			}
			seen[string(key)] = struct{}{}
			kept = append(append(kept, line...), '\n')
		}
		return kept
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}

// appendKey appends what makes two values the same for uniq: a string's
// text, else the value's jsoncmp key.
func appendKey(out []byte, v value) []byte {
	switch {
	case !v.ok:
		return jsoncmp.AppendKey(out, []byte("null"))
	case v.isString():
		return ndjson.AppendUnescaped(append(out, 's'), v.raw, false)
	}
	return jsoncmp.AppendEqualKey(out, v.raw)
}

// frame rewrites the placeholder length at start for the key written from
// keyAt on.
func frame(out []byte, start, keyAt int) []byte {
	if n := len(out) - keyAt; n < 0x80 && keyAt == start+1 {
		out[start] = byte(n) // its uvarint: one byte, as the placeholder's
		return out
	}
	key := append([]byte(nil), out[keyAt:]...)
	out = binary.AppendUvarint(out[:start], uint64(len(key)))
	return append(out, key...)
}

// unframe reads one length-prefixed field.
func unframe(b []byte) (field, rest []byte) {
	n, k := binary.Uvarint(b)
	return b[k : k+int(n)], b[k+int(n):]
}
