package jsoncmp

import (
	"bytes"
	"slices"
	"unsafe"

	"github.com/agentry/agentry/lib/ndjson"
)

// A value's key begins with its type's tag, in ndjson sort's order of
// types, the same at every depth: numbers, strings, false, true, arrays,
// objects, and null last (a missing value is last at the top, and null
// with it).
const (
	tagEnd    = 0x00 // after an array's last element, an object's last member
	tagNumber = 0x01
	tagString = 0x02
	tagFalse  = 0x03
	tagTrue   = 0x04
	tagArray  = 0x05
	tagObject = 0x06
	tagNull   = 0x07
	tagMember = 0x01 // before each member of an object
	tagDouble = 0x08 // AppendEqualKey's exact doubles
)

// AppendKey appends the key of raw, a valid JSON text: keys are equal
// exactly when the values are (see the package comment). A key is whole
// in itself, so keys appended one after another stay apart. Scalars order
// as numbers and texts do; arrays element by element; objects by their
// members sorted by name.
func AppendKey(out, raw []byte) []byte {
	out, _ = appendKey(out, raw, ndjson.SkipSpace(raw, 0))
	return out
}

// appendKey appends the key of the value at raw[i] and returns the index
// after it.
func appendKey(out, raw []byte, i int) ([]byte, int) {
	if i >= len(raw) {
		return append(out, tagNull), i
	}
	switch c := raw[i]; {
	case c == 'n':
		return append(out, tagNull), i + 4
	case c == 'f':
		return append(out, tagFalse), i + 5
	case c == 't':
		return append(out, tagTrue), i + 4
	case c == '"':
		end, escaped := ndjson.StringEnd(raw, nil, i)
		return AppendTextKey(append(out, tagString), text(raw[i:end], escaped)), end
	case c == '[':
		out = append(out, tagArray)
		i, more := ndjson.Into(raw, i)
		for more {
			out, i = appendKey(out, raw, i)
			i, more = ndjson.Past(raw, i)
		}
		return append(out, tagEnd), i + 1
	case c == '{':
		return appendObjectKey(append(out, tagObject), raw, i)
	}
	end := ndjson.ValueEnd(raw, nil, i)
	return AppendNumberKey(append(out, tagNumber), raw[i:end]), end
}

// member is one of an object's members: its name's text, its value's key.
type member struct {
	name, key []byte
}

// appendObjectKey appends the members of the object at raw[i], the last
// of each name only, sorted by name.
func appendObjectKey(out, raw []byte, i int) ([]byte, int) {
	var ms []member
	i, more := ndjson.Into(raw, i)
	for more {
		mb := ndjson.MemberAt(raw, nil, i)
		var key []byte
		key, i = appendKey(nil, raw, mb.Start)
		ms = append(ms, member{mb.Key(raw, nil), key})
		i, more = ndjson.Past(raw, i)
	}
	// Stable, so that of a name given twice the last is last; only it is
	// kept.
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.name, b.name) })
	for k, m := range ms {
		if k+1 < len(ms) && bytes.Equal(ms[k+1].name, m.name) {
			continue
		}
		out = AppendTextKey(append(out, tagMember), m.name)
		out = append(out, m.key...)
	}
	return append(out, tagEnd), i + 1
}

// AppendTextKey appends text so that it orders by its bytes and ends
// unmistakably: 0x00 is written 0x00 0x01, and the end 0x00 0x00, so a
// text sorts before a longer one it begins.
func AppendTextKey(out, text []byte) []byte {
	for _, c := range text {
		out = append(out, c)
		if c == 0 {
			out = append(out, 1)
		}
	}
	return append(out, 0, 0)
}

// Equal reports whether a and b, valid JSON texts, are equal values.
func Equal(a, b []byte) bool {
	return bytes.Equal(AppendKey(nil, a), AppendKey(nil, b))
}

// text is the text of raw, a string literal: its own bytes when it has no
// escape.
func text(raw []byte, escaped bool) []byte {
	if !escaped {
		return raw[1 : len(raw)-1]
	}
	return ndjson.AppendUnescaped(nil, raw, false)
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
