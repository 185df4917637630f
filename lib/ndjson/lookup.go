package ndjson

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Lookup finds the value at keys in line, a valid JSON text: the last
// member of each name, as jq, Python's json, JavaScript and Miller take
// it (gjson takes the first), with escaped keys compared by their text;
// and a key of decimal digits indexes an array. Its answer is the value's JSON text, a slice of line.
// On a line that is not valid its answer means nothing, but it never
// panics. It is the lookup for what Find could not tell (Unknown), and
// for paths the check was not asked to find.
//
// m, when set, is the line's bitmap of stops from its check (see
// Checker.Marks): the ends of the strings it passes over are found from
// it.
func Lookup(line []byte, m Marks, keys []string) ([]byte, bool) {
	return LookupAt(line, m, skipSpace(line, 0), keys)
}

// LookupAt is Lookup from the value that starts at line[i]: from a
// Member's Start, say.
func LookupAt(line []byte, m Marks, i int, keys []string) ([]byte, bool) {
	b := line
	for _, k := range keys {
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case '{':
			j, ok := memberValue(b, m, i, k)
			if !ok {
				return nil, false
			}
			i = j
		case '[':
			j, ok := element(b, m, i, k)
			if !ok {
				return nil, false
			}
			i = j
		default:
			return nil, false
		}
	}
	if i >= len(b) {
		return nil, false
	}
	return b[i:skipValue(b, m, i)], true
}

// memberValue returns the start of the value of the last member named k
// of the object at b[i]: every member is passed, for a later one of the
// name to override an earlier.
func memberValue(b []byte, m Marks, i int, k string) (int, bool) {
	at := -1
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		end, escaped := stringEnd(b, m, i)
		if end < i+2 {
			return 0, false // a string cut off: not valid JSON
		}
		match := keyIs(b[i:end], escaped, k)
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipSpace(b, i+1)
		if match {
			at = i
		}
		i = skipSpace(b, skipValue(b, m, i))
		if i >= len(b) || b[i] != ',' {
			break // the object's end, on a valid line
		}
		i = skipSpace(b, i+1)
	}
	return at, at >= 0 && at < len(b)
}

// keyIs tells whether raw, a key with its quotes from a valid line, names
// k: when escaped, by its text.
func keyIs(raw []byte, escaped bool, k string) bool {
	if !escaped {
		return len(raw) == len(k)+2 && string(raw[1:len(raw)-1]) == k
	}
	if len(raw)-2 < len(k) {
		return false // an escape only ever shortens the text
	}
	var buf [64]byte
	return string(AppendUnescaped(buf[:0], raw, false)) == k
}

// element returns the start of element k (a decimal index) of the array at
// b[i].
func element(b []byte, m Marks, i int, k string) (int, bool) {
	n := 0
	for j := 0; j < len(k); j++ {
		if k[j] < '0' || k[j] > '9' || n > 1<<30 {
			return 0, false
		}
		n = n*10 + int(k[j]-'0')
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return 0, false
	}
	for ; n > 0; n-- {
		i = skipSpace(b, skipValue(b, m, i))
		if i >= len(b) || b[i] != ',' {
			return 0, false
		}
		i = skipSpace(b, i+1)
	}
	return i, i < len(b)
}

// stringEnd returns the index after the string that starts at b[i], and
// whether it holds an escape. With marks, it jumps from stop to stop;
// without, it looks for a quote or a backslash eight bytes at a step (the
// line is valid: no other byte needs a look), and past the first few
// words, where a string is a long text, for the quotes alone with
// bytes.IndexByte (vector instructions where the CPU has them).
func stringEnd(b []byte, m Marks, i int) (int, bool) {
	escaped := false
	i++
	for {
		if m != nil {
			i = m.Next(i)
		} else {
			for n := 0; i+8 <= len(b); n++ {
				if n == 4 {
					return longStringEnd(b, i, escaped)
				}
				x := binary.LittleEndian.Uint64(b[i:])
				q := x ^ '"'*lsb
				bs := x ^ '\\'*lsb
				if y := ((q-lsb)&^q | (bs-lsb)&^bs) & msb; y != 0 {
					i += bits.TrailingZeros64(y) >> 3
					break
				}
				i += 8
			}
		}
		if i >= len(b) {
			return len(b), escaped
		}
		switch b[i] {
		case '"':
			return i + 1, escaped
		case '\\':
			escaped = true
			i += 2
		default:
			i++
		}
	}
}

// longStringEnd is stringEnd without marks from b[i], inside a string and
// not within an escape: its closing quote is the first quote after an even
// run of backslashes (none, say).
func longStringEnd(b []byte, i int, escaped bool) (int, bool) {
	from := i
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return len(b), escaped || bytes.IndexByte(b[from:], '\\') >= 0
		}
		q := i + k
		run := 0
		for j := q - 1; j >= from && b[j] == '\\'; j-- {
			run++
		}
		if run%2 == 0 {
			return q + 1, escaped || bytes.IndexByte(b[from:q], '\\') >= 0
		}
		i = q + 1
	}
}

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, m Marks, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, m, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _ = stringEnd(b, m, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	// A number, true, false or null: short, so a loop beats IndexAny's
	// set-up.
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}
