package ndjson

import "bytes"

// What a verb needs to walk a line that was checked Valid (or a whole JSON
// value cut from one) on its own terms: where whitespace ends, where a
// string or a value ends, an object's members one at a time, an array's
// elements, a key compared by its text. The walk of Check is the one
// scanner; these are its steps, written once, for the verbs that rebuild
// a line (set, del, join's merge, the duplicate keys dropped for gjson),
// print it (fmt), describe it (schema) or key it (lib/jsoncmp). They trust the line: on
// one that is not valid, their answers mean nothing.
//
// A walk over an object or an array goes:
//
//	i, more := ndjson.Into(line, i) // line[i] is '{' or '['
//	for more {
//		mb := ndjson.MemberAt(line, m, i) // in an object; an element starts at i
//		j := … the index after the value at mb.Start …
//		i, more = ndjson.Past(line, j)
//	}
//	// line[i] is the closing '}' or ']'
//
// m, wherever it is asked for, is the line's Marks from its check
// (Checker.Marks), or nil: with them, a string's end is found from stop to
// stop; without, eight bytes at a step. Marks belong to the line they
// were made for, and must never be given with another slice, a copy of
// the line edited, say.

// SkipSpace returns the index of the first byte of b at or after i that
// is not JSON whitespace (space, tab, CR, LF): len(b) when there is none.
func SkipSpace(b []byte, i int) int { return skipSpace(b, i) }

// StringEnd returns the index after the string whose opening quote is
// line[i], and whether the string holds an escape.
func StringEnd(line []byte, m Marks, i int) (end int, escaped bool) { return stringEnd(line, m, i) }

// ValueEnd returns the index after the value that starts at line[i]:
// after its closing quote or bracket, or its last byte (a number, true,
// false, null).
func ValueEnd(line []byte, m Marks, i int) int { return skipValue(line, m, i) }

// Into steps into the object or array at line[i]: it returns the index of
// its first member or element and true, or, when it is empty, the index of
// its closing bracket and false.
func Into(line []byte, i int) (int, bool) {
	i = skipSpace(line, i+1)
	return i, i < len(line) && line[i] != '}' && line[i] != ']'
}

// Past steps past a member or an element, from i just after its value: it
// returns the index of the next one and true, or of the closing bracket
// and false.
func Past(line []byte, i int) (int, bool) {
	more := false // one loop, no call: it inlines
	for ; i < len(line); i++ {
		if c := line[i]; c > ' ' {
			if c != ',' || more {
				break
			}
			more = true
		} else if !isSpace(c) {
			break
		}
	}
	return i, more
}

// MemberAt reads the member whose key's opening quote is line[i]: its key
// and where its value starts. Its End is left 0, for the caller to find
// (ValueEnd), or to walk the value itself.
func MemberAt(line []byte, m Marks, i int) Member {
	end, escaped := stringEnd(line, m, i)
	j := skipSpace(line, end) // the colon
	return Member{KeyStart: i + 1, KeyEnd: end - 1, Escaped: escaped, Start: skipSpace(line, j+1)}
}

// KeyIs tells whether the member's key names name, by its text: an
// escaped key is compared unescaped.
func (mb *Member) KeyIs(line []byte, name string) bool {
	return keyIs(line[mb.KeyStart-1:mb.KeyEnd+1], mb.Escaped, name)
}

// Key returns the text of the member's key: line's own bytes when it has
// no escape, else the text unescaped onto buf.
func (mb Member) Key(line, buf []byte) []byte {
	if !mb.Escaped {
		return line[mb.KeyStart:mb.KeyEnd]
	}
	return AppendUnescaped(buf, line[mb.KeyStart-1:mb.KeyEnd+1], false)
}

// KeyIn tells whether a member of ms, members of line, has mb's key: the
// same text, escaped or not.
func KeyIn(line []byte, mb *Member, ms []Member) bool {
	n := mb.KeyEnd - mb.KeyStart
	for k := range ms {
		if o := &ms[k]; (o.KeyEnd-o.KeyStart == n || o.Escaped || mb.Escaped) && sameKey(line, o, mb) {
			return true
		}
	}
	return false
}

// sameKey tells whether a and b, members of line, have keys of the same
// text.
func sameKey(line []byte, a, b *Member) bool {
	if !a.Escaped && !b.Escaped {
		return string(line[a.KeyStart:a.KeyEnd]) == string(line[b.KeyStart:b.KeyEnd])
	}
	var ba, bb [64]byte
	return bytes.Equal(a.Key(line, ba[:0]), b.Key(line, bb[:0]))
}
