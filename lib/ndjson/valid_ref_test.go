package ndjson

import "encoding/binary"
import "math/bits"

// The walk as it was before issue 51 made it faster, kept as the
// reference the differential tests hold the new one to: for any line,
// with a bitmap of stops or without, the same Problem.

// refNext is Marks.Next as it was.
func refNext(m Marks, i int) int {
	w := i >> 6
	x := m[w] >> (i & 63)
	for x == 0 {
		w++
		x = m[w]
		i = w << 6
	}
	return i + bits.TrailingZeros64(x)
}

// refMarkSWAR is markSWAR as it was.
func refMarkSWAR(line []byte, marks Marks) {
	w := 0
	for ; (w+1)<<6 <= len(line); w++ {
		marks[w] = refMark64(line[w<<6:])
	}
	var tail [64]byte
	copy(tail[:], line[w<<6:])
	marks[w] = refMark64(tail[:])
}

func refMark64(b []byte) uint64 {
	_ = b[63]
	var m uint64
	for k := 0; k < 64; k += 8 {
		m |= ((stopBytes(binary.LittleEndian.Uint64(b[k:])) >> 7) * 0x0102040810204080 >> 56) << k
	}
	return m
}

// walk walks line as JSON, with stops its bitmap (see mark), or nil for a
// line too long to mark: a non-ASCII byte the walk stops at in a string
// has its UTF-8 checked there. f, when set, is a path to find on the way
// (see Checker.Find). Its tests of i against n compare as uint, which
// also says that i is not negative: the b[i] that follows needs no bounds
// check of its own.
func refWalk(line []byte, stops Marks, f *finder) Problem {
	var stackBuf [64]byte
	stack := stackBuf[:0]
	b := line
	n := len(b)
	i := refSkipSpace(b, 0)
	keyStart, escaped := 0, false // of the key being read
	var p Problem
	var c byte
	if i == n {
		return Blank
	}
	// The finder's bits, kept here where the tests of every key and value
	// can reach them without a load, and read again after each call that
	// may change them: none when there is no finder.
	var search, pend uint64
	if f != nil {
		search, pend = f.search, f.pend
	}

value:
	if uint(i) >= uint(n) {
		return BadJSON
	}
	switch c = b[i]; c {
	case '"':
		i++
		goto str
	case '{', '[':
		if len(stack) == MaxDepth {
			return BadJSON
		}
		i = refSkipSpace(b, i+1)
		if i < n && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
			i++
			goto after
		}
		stack = append(stack, c)
		if c == '[' {
			if search>>len(stack)&1 != 0 {
				f.element(b, i, len(stack))
				search, pend = f.search, f.pend
			}
			goto value
		}
		goto key
	case 't':
		if i, p = refLiteral(b, i, "true"); p != Valid {
			return p
		}
	case 'f':
		if i, p = refLiteral(b, i, "false"); p != Valid {
			return p
		}
	case 'n':
		if i, p = refLiteral(b, i, "null"); p != Valid {
			return p
		}
	default:
		// An integer that needs no more than its digits is the common
		// case: done here, without a call.
		if c >= '1' && c <= '9' {
			j := i + 1
			for j < n && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			if j == n || b[j] != '.' && b[j]|0x20 != 'e' {
				i = j
				goto after
			}
		}
		if i, p = refNumber(b, i); p != Valid {
			return p
		}
	}
	goto after

key:
	// A key has a scan of its own, so that the end of a string needs no
	// test of which kind it was. Keys are short and seldom escaped.
	if uint(i) >= uint(n) || b[i] != '"' {
		return BadJSON
	}
	i++
	keyStart, escaped = i, false
	for {
		if stops != nil {
			i = refNext(stops, i)
		} else {
			i = refNextStop(b, i)
		}
		if uint(i) >= uint(n) {
			return BadJSON
		}
		if c = b[i]; c == '"' {
			break
		}
		if c == '\\' {
			if i = refEscape(b, i); i < 0 {
				return BadJSON
			}
			escaped = true
			continue
		}
		if i, p = refStrSpecial(b, i); p != Valid {
			return p
		}
	}
	{
		keyEnd := i
		if i < n-2 && b[i+1] == ':' && b[i+2] > ' ' { // i < n-2: no bounds checks
			i += 2 // compact: the value right after the colon
		} else {
			i = refSkipSpace(b, i+1)
			if uint(i) >= uint(n) || b[i] != ':' {
				return BadJSON
			}
			i = refSkipSpace(b, i+1)
		}
		if search>>len(stack)&1 != 0 && (escaped || f.wants(b, keyStart, keyEnd)) {
			f.member(b, keyStart, keyEnd, escaped, i, len(stack))
			search, pend = f.search, f.pend
		}
	}
	goto value

str:
	for {
		if stops != nil {
			i = refNext(stops, i)
		} else {
			i = refNextStop(b, i)
		}
		if uint(i) >= uint(n) {
			return BadJSON
		}
		switch c = b[i]; {
		case c == '"':
			i++
			goto after
		case c == '\\':
			if i+1 < n {
				switch b[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
					continue
				case 'u':
					if i+6 <= n && hex4(b[i+2:i+6]) {
						i += 6
						continue
					}
				}
			}
			return BadJSON
		}
		if i, p = refStrSpecial(b, i); p != Valid {
			return p
		}
	}

after:
	if pend>>len(stack)&1 != 0 {
		f.ended(i, len(stack)) // and on: a later member of the name may override it
		pend = f.pend
	}
	if uint(i) >= uint(n) || b[i] <= ' ' {
		if i = refSkipSpace(b, i); uint(i) >= uint(n) {
			if len(stack) == 0 {
				return Valid
			}
			return BadJSON
		}
	}
	if len(stack) == 0 {
		return BadJSON // more after the value
	}
	c = b[i]
	if top := stack[len(stack)-1]; c == ',' {
		// The test is skipSpace's own, ahead of it: so written, callgrind's
		// simulated branch predictor missed 1.20M, not 1.35M, on the corpus.
		if i++; i >= n || b[i] <= ' ' {
			i = refSkipSpace(b, i)
		}
		if top == '{' {
			goto key
		}
		if search>>len(stack)&1 != 0 {
			f.element(b, i, len(stack))
			search, pend = f.search, f.pend
		}
		goto value
	} else if c == top+2 {
		if search>>len(stack)&1 != 0 {
			f.closed(len(stack))
			search = f.search
		}
		stack = stack[:len(stack)-1]
		i++
		goto after
	}
	return BadJSON
}

// escape returns the index after the escape that starts at b[i], a
// backslash, or -1 when it is not one JSON allows.
func refEscape(b []byte, i int) int {
	if i+1 < len(b) {
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return i + 2
		case 'u':
			if i+6 <= len(b) && hex4(b[i+2:i+6]) {
				return i + 6
			}
		}
	}
	return -1
}

// nextStop is Marks.Next for a line with no bitmap: the index of the first
// byte at or after i that is '"', '\\', a control byte or non-ASCII, eight
// bytes at a step; len(b) when there is none.
func refNextStop(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := stopBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// strSpecial handles the byte at b[i] inside a string that the walk
// stopped at and does not handle itself — a control byte, non-ASCII text
// whose UTF-8 is unchecked, a spurious stop — and returns the index after
// it.
func refStrSpecial(b []byte, i int) (int, Problem) {
	c := b[i]
	switch {
	case c < 0x20:
		return i, BadJSON
	case c < 0x80:
		return i + 1, Valid
	}
	// Non-ASCII text tends to come in runs: stay here for them, with the
	// common two- and three-byte forms inline.
	for {
		switch {
		case c >= 0xC2 && c <= 0xDF && i+1 < len(b) && b[i+1]&0xC0 == 0x80:
			i += 2
		case c >= 0xE1 && c <= 0xEC && i+2 < len(b) && b[i+1]&0xC0 == 0x80 && b[i+2]&0xC0 == 0x80:
			i += 3
		default:
			n := refUtf8Seq(b, i)
			if n == 0 {
				return i, BadUTF8
			}
			i += n
		}
		if i >= len(b) {
			return i, Valid
		}
		if c = b[i]; c < 0x80 {
			return i, Valid
		}
	}
}

func refSkipSpace(b []byte, i int) int {
	// One comparison for the common case, a byte that is no space at all.
	for i < len(b) && b[i] <= ' ' && isSpace(b[i]) {
		i++
	}
	return i
}

func refLiteral(b []byte, i int, lit string) (int, Problem) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, BadJSON
	}
	return i + len(lit), Valid
}

func refNumber(b []byte, i int) (int, Problem) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = refDigits(b, i+1)
	default:
		return i, BadJSON
	}
	if i < len(b) && b[i] == '.' {
		j := refDigits(b, i+1)
		if j == i+1 {
			return i, BadJSON
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := refDigits(b, i)
		if j == i {
			return i, BadJSON
		}
		i = j
	}
	return i, Valid
}

func refDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// utf8Seq returns the length of the valid multi-byte UTF-8 sequence at
// b[i], or 0 when there is none (overlong forms and surrogates are invalid,
// as in RFC 3629).
func refUtf8Seq(b []byte, i int) int {
	c := b[i]
	switch {
	case c < 0xC2:
		return 0
	case c <= 0xDF:
		if i+1 < len(b) && b[i+1]&0xC0 == 0x80 {
			return 2
		}
		return 0
	case c <= 0xEF:
		if i+2 >= len(b) || b[i+2]&0xC0 != 0x80 {
			return 0
		}
		lo, hi := byte(0x80), byte(0xBF)
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
		if b[i+1] < lo || b[i+1] > hi {
			return 0
		}
		return 3
	case c <= 0xF4:
		if i+3 >= len(b) || b[i+2]&0xC0 != 0x80 || b[i+3]&0xC0 != 0x80 {
			return 0
		}
		lo, hi := byte(0x80), byte(0xBF)
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
		if b[i+1] < lo || b[i+1] > hi {
			return 0
		}
		return 4
	}
	return 0
}
