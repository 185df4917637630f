package ndjson

import (
	"encoding/binary"
	"math/bits"
)

// Problem is what is wrong with a line, if anything.
type Problem uint8

const (
	Valid   Problem = iota // one JSON value (RFC 8259) in valid UTF-8
	Blank                  // nothing but JSON whitespace
	BadJSON                // not one JSON value
	BadUTF8                // JSON, but a string holds invalid UTF-8
)

// String names the problem as reports and --json output spell it.
func (p Problem) String() string {
	switch p {
	case Valid:
		return "valid"
	case Blank:
		return "blank"
	case BadJSON:
		return "malformed_json"
	case BadUTF8:
		return "invalid_utf8"
	}
	return "unknown"
}

// MaxDepth is the deepest nesting Check accepts, as encoding/json does.
const MaxDepth = 10000

// Check tells whether line is exactly one JSON value in valid UTF-8.
// gjson.Valid, by contrast, does not look at UTF-8.
//
// A first pass marks, in a bitmap (see Marks), the bytes a string scan
// stops at; the JSON walk then finds the end of each string with a shift
// and a count of trailing zeros. With AVX2 the pass also checks the line's
// UTF-8, 32 bytes at a step. Elsewhere, or when the UTF-8 is bad (so that
// the first problem is the one named), it goes eight bytes at a step and
// marks every non-ASCII byte too, for the walk to check. A line longer
// than heapMarked is not marked: the walk scans its strings eight bytes at
// a step and checks their UTF-8 itself, so that its memory stays the
// line's own.
//
// Check keeps the bitmap of a line shorter than stackMarked bytes, nested
// at most 64 deep, on the stack, and allocates nothing; a longer line's
// bitmap is allocated, an eighth of its size. A Checker keeps one from
// line to line.
func Check(line []byte) Problem {
	switch {
	case len(line) < stackMarked:
		var marks [stackMarked/64 + 1]uint64
		return walk(line, mark(line, marks[:]), nil)
	case len(line) > heapMarked:
		return walk(line, nil, nil)
	}
	return walk(line, mark(line, make(Marks, len(line)>>6+1)), nil)
}

// stackMarked bounds the lines Check marks in a bitmap on the stack.
const stackMarked = 512

// Checker checks lines as Check does, with a bitmap of stops kept from one
// line to the next, and the last line's marks there to serve a lookup
// after the check. Its zero value is ready; it is not safe for concurrent
// use.
type Checker struct {
	marks   Marks // kept for the next line
	last    Marks // the last line's
	members []Member
	paths   []pathFind
	// The search bits of paths at an object's start (see FindAll).
	search, lens uint64
	firsts       [4]uint64
}

// heapMarked is the longest line that is marked: past it, a bitmap would
// add an eighth of the line's size to what holding it costs, and strings
// are long enough to scan eight bytes at a step.
const heapMarked = 1 << 20

// Check is Check, for one line.
func (c *Checker) Check(line []byte) Problem { return c.check(line, nil) }

func (c *Checker) check(line []byte, f *finder) Problem {
	if len(line) > heapMarked {
		c.last = nil
		return walk(line, nil, f)
	}
	w := len(line)>>6 + 1
	if cap(c.marks) < w {
		c.marks = make(Marks, max(w, 2*cap(c.marks), 64))
	}
	c.last = mark(line, c.marks[:w])
	return walk(line, c.last, f)
}

// Marks is the bitmap of stops of the line last checked, valid until the
// next check; nil for a line too long to mark.
func (c *Checker) Marks() Marks { return c.last }

// TakeBitmap takes the memory of the bitmap c has grown to mark its lines,
// for another checker to start with (GiveBitmap); c goes on without it.
func (c *Checker) TakeBitmap() Marks {
	m := c.marks
	c.marks, c.last = nil, nil
	return m
}

// GiveBitmap gives c memory to mark its lines in, taken from another
// checker (TakeBitmap) that no longer checks.
func (c *Checker) GiveBitmap(m Marks) { c.marks, c.last = m, nil }

// Marks is a line's bitmap of string stops: bit k of word w is set when
// byte 64w+k is '"', '\\' or a control byte, and for every position past
// the end of the line. Other bits may be set too (non-ASCII bytes, when
// the line's UTF-8 was not checked first): a stop is a place to look, not
// a promise.
type Marks []uint64

// mark fills marks, which must hold len(line)/64+1 words, with line's
// stops, and returns it.
func mark(line []byte, marks Marks) Marks {
	if !fastUTF8 || !markUTF8(line, marks) {
		markSWAR(line, marks)
	}
	return marks
}

// markSWAR marks line eight bytes at a step, with every non-ASCII byte a
// stop as well: where its UTF-8 is unchecked.
func markSWAR(line []byte, marks Marks) {
	w := 0
	for ; (w+1)<<6 <= len(line); w++ {
		marks[w] = mark64(line[w<<6:])
	}
	var tail [64]byte // zeros after the end: control bytes, so stops
	copy(tail[:], line[w<<6:])
	marks[w] = mark64(tail[:])
}

// mark64 returns the stops of the 64 bytes at the start of b.
func mark64(b []byte) uint64 {
	_ = b[63]
	var m uint64
	for k := 0; k < 64; k += 8 {
		// The high bit of each byte that stops, gathered into the top byte.
		m |= ((stopBytes(binary.LittleEndian.Uint64(b[k:])) >> 7) * 0x0102040810204080 >> 56) << k
	}
	return m
}

// stopBytes returns, for eight bytes in x, the high bit of each byte that
// is '"', '\\', a control byte or non-ASCII, and no other bit: each byte is
// tested on its own, with no carry from one to the next.
func stopBytes(x uint64) uint64 {
	const lo = 0x7f7f7f7f7f7f7f7f
	q := x ^ '"'*lsb
	bs := x ^ '\\'*lsb
	ctl := x&lo + 0x60*lsb // high bit clear where the low seven bits are below 0x20
	zq := q&lo + lo | q    // high bit clear where q's byte is zero
	zb := bs&lo + lo | bs
	return (x | ^ctl | ^zq | ^zb) & msb
}

// Next returns the index of the first stop at or after i, which must be at
// most the line's length; it is the line's length or more when no byte of
// the line is one.
func (m Marks) Next(i int) int {
	w := i >> 6
	x := m[w] >> (i & 63)
	for x == 0 {
		w++
		x = m[w]
		i = w << 6
	}
	return i + bits.TrailingZeros64(x)
}

// walk walks line as JSON, with stops its bitmap (see mark), or nil for a
// line too long to mark: a non-ASCII byte the walk stops at in a string
// has its UTF-8 checked there. f, when set, is a path to find on the way
// (see Checker.Find). Its tests of i against n compare as uint, which
// also says that i is not negative: the b[i] that follows needs no bounds
// check of its own.
func walk(line []byte, stops Marks, f *finder) Problem {
	var stackBuf [64]byte
	stack := stackBuf[:0]
	b := line
	n := len(b)
	i := skipSpace(b, 0)
	keyStart, escaped := 0, false // of the key being read
	var p Problem
	var c byte
	if i == n {
		return Blank
	}
	// The finder's bits are tested where they are, in f: a load the
	// branch predictor runs ahead of, not two registers held across the
	// walk's every join. A walk with no finder has one with no bits.
	if f == nil {
		f = &finder{}
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
		i = skipSpace(b, i+1)
		if i < n && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
			i++
			goto after
		}
		stack = append(stack, c)
		if c == '[' {
			if f.search>>len(stack)&1 != 0 {
				f.element(b, i, len(stack))
			}
			goto value
		}
		goto key
	case 't':
		if i, p = literal(b, i, "true"); p != Valid {
			return p
		}
	case 'f':
		if i, p = literal(b, i, "false"); p != Valid {
			return p
		}
	case 'n':
		if i, p = literal(b, i, "null"); p != Valid {
			return p
		}
	default:
		// An integer that needs no more than its digits is the common
		// case: done here, without a call.
		// Its digits are found eight at a step.
		if c-'1' < 9 {
			j := i + 1
			if j+8 <= n {
				if nd := nonDigits(binary.LittleEndian.Uint64(b[j:])); nd != 0 {
					j += bits.TrailingZeros64(nd) >> 3
				} else {
					j = digits(b, j+8)
				}
			} else {
				j = digits(b, j)
			}
			if j == n || b[j] != '.' && b[j]|0x20 != 'e' {
				i = j
				goto after
			}
		}
		// A negative number or a decimal fraction that fits in sixteen
		// bytes, as an embedding's are: found in two words.
		if j := shortNumber(b, i); j > 0 {
			i = j
			goto after
		}
		if i, p = number(b, i); p != Valid {
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
			i = stops.Next(i)
		} else {
			i = nextStop(b, i)
		}
		if uint(i) >= uint(n) {
			return BadJSON
		}
		if c = b[i]; c == '"' {
			break
		}
		if c == '\\' {
			if i = escape(b, i); i < 0 {
				return BadJSON
			}
			escaped = true
			continue
		}
		if i, p = strSpecial(b, i); p != Valid {
			return p
		}
	}
	{
		keyEnd := i
		if i < n-2 && b[i+1] == ':' && b[i+2] > ' ' { // i < n-2: no bounds checks
			i += 2 // compact: the value right after the colon
		} else {
			i = skipSpace(b, i+1)
			if uint(i) >= uint(n) || b[i] != ':' {
				return BadJSON
			}
			i = skipSpace(b, i+1)
		}
		if f.search>>len(stack)&1 != 0 && (escaped || f.wants(b, keyStart, keyEnd)) {
			f.member(b, keyStart, keyEnd, escaped, i, len(stack))
		}
	}
	goto value

str:
	for {
		if stops != nil {
			i = stops.Next(i)
		} else {
			i = nextStop(b, i)
		}
		if uint(i) >= uint(n) {
			return BadJSON
		}
		switch c = b[i]; {
		case c == '"':
			i++
			goto after
		case c == '\\':
			// What follows the backslash, by a table: a lookup in place
			// of a switch over nine bytes.
			if i+1 < n {
				if e := escapes[b[i+1]]; e == 2 {
					i += 2
					continue
				} else if e == 6 && i+6 <= n && hex4(b[i+2:i+6]) {
					i += 6
					continue
				}
			}
			return BadJSON
		}
		if i, p = strSpecial(b, i); p != Valid {
			return p
		}
	}

after:
	if f.pend>>len(stack)&1 != 0 {
		f.ended(i, len(stack)) // and on: a later member of the name may override it
	}
	if uint(i) >= uint(n) || b[i] <= ' ' {
		if i = skipSpace(b, i); uint(i) >= uint(n) {
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
			i = skipSpace(b, i)
		}
		if top == '{' {
			goto key
		}
		if f.search>>len(stack)&1 != 0 {
			f.element(b, i, len(stack))
		}
		goto value
	} else if c == top+2 {
		if f.search>>len(stack)&1 != 0 {
			f.closed(len(stack))
		}
		stack = stack[:len(stack)-1]
		i++
		goto after
	}
	return BadJSON
}

// escape returns the index after the escape that starts at b[i], a
// backslash, or -1 when it is not one JSON allows.
func escape(b []byte, i int) int {
	if i+1 < len(b) {
		if e := escapes[b[i+1]]; e == 2 {
			return i + 2
		} else if e == 6 && i+6 <= len(b) && hex4(b[i+2:i+6]) {
			return i + 6
		}
	}
	return -1
}

// escapes is, for each byte after a backslash, the length of the escape
// it begins: 2 for one of "\\/bfnrt, 6 for u (if four hex digits follow), 0
// for none JSON allows.
var escapes = [256]uint8{'"': 2, '\\': 2, '/': 2, 'b': 2, 'f': 2, 'n': 2, 'r': 2, 't': 2, 'u': 6}

// nextStop is Marks.Next for a line with no bitmap: the index of the first
// byte at or after i that is '"', '\\', a control byte or non-ASCII, eight
// bytes at a step; len(b) when there is none.
func nextStop(b []byte, i int) int {
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
func strSpecial(b []byte, i int) (int, Problem) {
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
			n := utf8Seq(b, i)
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

func skipSpace(b []byte, i int) int {
	// One comparison for the common case, a byte that is no space at all.
	for i < len(b) && b[i] <= ' ' && isSpace(b[i]) {
		i++
	}
	return i
}

// isSpace tells whether c is JSON whitespace.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func literal(b []byte, i int, lit string) (int, Problem) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, BadJSON
	}
	return i + len(lit), Valid
}

func number(b []byte, i int) (int, Problem) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, BadJSON
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
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
		j := digits(b, i)
		if j == i {
			return i, BadJSON
		}
		i = j
	}
	return i, Valid
}

// shortNumber returns the index after the number at b[i] when it is
// -?(0|[1-9][0-9]*)(\.[0-9]+)? and ends, at a byte that is none of
// '.', 'e', 'E' and no digit, within the sixteen bytes from b[i]; else 0,
// for number to read it (and to say what is wrong with it). Its
// non-digits are found in two words at once: a number of that form is
// its sign, its digits, a point and digits, and the byte after.
func shortNumber(b []byte, i int) int {
	if i < 0 || i+16 > len(b) {
		return 0
	}
	lo, hi := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
	// Bit k of nd is set when byte k is no digit.
	nd := uint(gather(nonDigits(lo))) | uint(gather(nonDigits(hi)))<<8 | 1<<16
	s := 0
	if byte(lo) == '-' {
		s = 1
	}
	end := bits.TrailingZeros(nd >> s << s) // the first non-digit from s
	if end == s || end == 16 || b[i+s] == '0' && end != s+1 {
		return 0
	}
	if c := b[i+end]; c == '.' {
		frac := end + 1
		end = bits.TrailingZeros(nd >> frac << frac)
		if end == frac || end == 16 {
			return 0
		}
	}
	if c := b[i+end]; c == '.' || c|0x20 == 'e' {
		return 0
	}
	return i + end
}

// gather returns the high bits of the eight bytes of x (and no other bit
// may be set) as the low eight bits of a byte: bit k for byte k.
func gather(x uint64) uint8 { return uint8(x >> 7 * 0x0102040810204080 >> 56) }

// digits returns the index of the first byte at or after i that is not a
// decimal digit, eight bytes at a step while eight are left.
func digits(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if nd := nonDigits(binary.LittleEndian.Uint64(b[i:])); nd != 0 {
			return i + bits.TrailingZeros64(nd)>>3
		}
	}
	for i < len(b) && b[i]-'0' < 10 {
		i++
	}
	return i
}

// nonDigits returns, for eight bytes in x, the high bit of each byte that
// is not '0' to '9', and no other bit. Past the digits' byte values, x^'0'
// is 10 or more in its low seven bits, or has its high bit set; adding
// 0x76 to the low seven bits of a byte sets its high bit exactly when they
// are 10 or more, with no carry into the next byte.
func nonDigits(x uint64) uint64 {
	t := x ^ '0'*lsb
	return (t&^msb + 0x76*lsb | t) & msb
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hex4 tells whether the four bytes of b are hex digits.
func hex4(b []byte) bool {
	return hexDigits[b[0]]&hexDigits[b[1]]&hexDigits[b[2]]&hexDigits[b[3]] == 1
}

// hexDigits is 1 at each hex digit, 0 elsewhere.
const hexDigits = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00" + // 0-9
	"\x00\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00" + // A-F
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00" + // a-f
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// utf8Seq returns the length of the valid multi-byte UTF-8 sequence at
// b[i], or 0 when there is none (overlong forms and surrogates are invalid,
// as in RFC 3629).
func utf8Seq(b []byte, i int) int {
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
