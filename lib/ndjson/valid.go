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

// Check tells whether line is exactly one JSON value in valid UTF-8, with
// no allocation for nesting up to 64 levels. gjson.Valid, by contrast, does
// not look at UTF-8.
//
// With AVX2, the whole line's UTF-8 is checked first, 32 bytes at a step;
// a line shorter than stackMarked bytes (any line, for a Checker) also
// gets, in that same pass, a bitmap of the bytes a string scan stops at
// (quotes, backslashes, control bytes), so that the JSON walk finds the end
// of each string with a shift and a count of trailing zeros; a longer
// line's strings are skipped 32 bytes at a step. Elsewhere, or when the line is not valid UTF-8 (so that the first
// problem is the one named), the walk checks UTF-8 itself and scans
// strings eight bytes at a time.
func Check(line []byte) Problem {
	if fastUTF8 {
		if len(line) < stackMarked {
			var marks [stackMarked/64 + 1]uint64
			return checkMarked(line, marks[:])
		}
		if validUTF8(line) {
			return check(line, 0, nil, nil)
		}
	}
	return check(line, msb, nil, nil)
}

// stackMarked bounds the lines Check marks in a bitmap on the stack: it is
// cleared on every call, so it stays small. A Checker keeps one across
// calls instead.
const stackMarked = 512

func checkMarked(line []byte, marks Marks) Problem {
	if markUTF8(line, marks) {
		return check(line, 0, marks, nil)
	}
	return check(line, msb, nil, nil)
}

// Checker checks lines as Check does, with a bitmap of stops kept from one
// line to the next, so that lines of any length up to heapMarked are marked,
// and the last line's marks can serve a lookup after the check. Its zero
// value is ready; it is not safe for concurrent use.
type Checker struct {
	marks  Marks
	marked bool
}

// heapMarked is the longest line a Checker marks: its bitmap is an eighth
// of the line's size, and past this strings are long enough for the
// 32-byte scan.
const heapMarked = 1 << 20

// Check is Check, for one line.
func (c *Checker) Check(line []byte) Problem { return c.check(line, nil) }

// Find is Check that also looks, as the walk passes, for the value at
// keys, a path of object member names: the first member of each name, as
// a lookup would find it. Where is Unknown when the walk cannot tell — the
// line is not an object, the path steps into an array, a key on the way
// has an escape — and the caller should look the value up itself; and
// means nothing unless the line is Valid.
func (c *Checker) Find(line []byte, keys []string) (Problem, Where) {
	f := finder{keys: keys}
	if i := skipSpace(line, 0); len(keys) == 0 || i >= len(line) || line[i] != '{' {
		f.state = Unknown
	}
	p := c.check(line, &f)
	switch f.state {
	case searching:
		f.state = Absent
	case pending:
		f.state = Unknown
	}
	return p, Where{State: f.state, Start: f.start, End: f.end}
}

func (c *Checker) check(line []byte, f *finder) Problem {
	c.marked = false
	if !fastUTF8 || len(line) > heapMarked {
		if fastUTF8 && validUTF8(line) {
			return check(line, 0, nil, f)
		}
		return check(line, msb, nil, f)
	}
	w := len(line)>>6 + 1
	if cap(c.marks) < w {
		c.marks = make(Marks, max(w, 2*cap(c.marks), 64))
	}
	c.marks = c.marks[:w]
	if !markUTF8(line, c.marks) {
		return check(line, msb, nil, f)
	}
	c.marked = true
	return check(line, 0, c.marks, f)
}

// FindState is what Find found.
type FindState uint8

const (
	searching FindState = iota // within the walk only
	pending                    // the value has begun: within the walk only
	Present                    // the value is line[Start:End]
	Absent                     // the line has no such value
	Unknown                    // look it up another way
)

// Where is the answer of Find.
type Where struct {
	State      FindState
	Start, End int
}

// finder follows one path through a walk. The object at depth matched+1
// is the one searched for keys[matched]; depth is that of the member whose
// value is the answer, once it has begun.
type finder struct {
	keys       []string
	matched    int
	depth      int
	state      FindState
	start, end int
}

// member is told of each member of the object searched: its key, whether
// the key has an escape, and where its value starts.
func (f *finder) member(b, key []byte, escaped bool, i, depth int) {
	switch {
	case escaped:
		f.state = Unknown // it might name the key: no cheap way to tell
		return
	case string(key) != f.keys[f.matched] || i >= len(b):
		return
	case f.matched+1 == len(f.keys):
		f.state, f.start, f.depth = pending, i, depth
		return
	}
	switch b[i] {
	case '{':
		if j := skipSpace(b, i+1); j < len(b) && b[j] == '}' {
			f.state = Absent // an empty object: no shortcut past it to watch
		} else {
			f.matched++
		}
	case '[':
		f.state = Unknown
	default:
		f.state = Absent // the path goes on through a scalar
	}
}

// Marks is the bitmap of the line last checked, when it was valid UTF-8
// and marked; nil otherwise.
func (c *Checker) Marks() Marks {
	if !c.marked {
		return nil
	}
	return c.marks
}

// Marks is a line's bitmap of string stops: bit k of word w is set when
// byte 64w+k is '"', '\\' or a control byte, and for every position past
// the end of the line.
type Marks []uint64

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

// check walks line as JSON. hi is msb when string bytes from 0x80 up need
// their UTF-8 checked, 0 when the line's UTF-8 is known good. stops, when
// set (only with hi 0), is markUTF8's bitmap of the line.
//
// f, when set, is a path to find on the way (see Checker.Find).
func check(line []byte, hi uint64, stops Marks, f *finder) Problem {
	var stackBuf [64]byte
	stack := stackBuf[:0]
	b := line
	n := len(b)
	i := skipSpace(b, 0)
	inKey := false
	keyStart, escaped := 0, false // of the key being read
	vec := hi == 0 && n >= 32     // UTF-8 checked already, and room for the vector scan
	var p Problem
	var c byte
	if i == n {
		return Blank
	}

value:
	if i >= n {
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
		if i, p = number(b, i); p != Valid {
			return p
		}
	}
	goto after

key:
	if i >= n || b[i] != '"' {
		return BadJSON
	}
	i++
	inKey = true
	keyStart, escaped = i, false

str:
	for {
		if stops != nil {
			i = stops.Next(i)
		} else if vec {
			// Most strings are short keys: one SWAR step before the call.
			if i+8 <= n {
				if m := special(binary.LittleEndian.Uint64(b[i:]), 0); m != 0 {
					i += bits.TrailingZeros64(m) >> 3
					goto look
				}
				i += 8
			}
			i = scanString(b, i)
		} else {
			for i+8 <= n {
				if m := special(binary.LittleEndian.Uint64(b[i:]), hi); m != 0 {
					i += bits.TrailingZeros64(m) >> 3
					goto look
				}
				i += 8
			}
		}
		if i >= n {
			return BadJSON
		}
	look:
		switch c = b[i]; {
		case c == '"':
			i++
			goto strDone
		case c == '\\' && i+1 < n && b[i+1] != 'u':
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				escaped = true
				continue
			}
			return BadJSON
		case c >= 0x80 && hi == 0: // UTF-8 checked already
			i++
			continue
		}
		escaped = escaped || c == '\\'
		if i, p = strSpecial(b, i); p != Valid {
			return p
		}
	}
strDone:
	if inKey {
		inKey = false
		keyEnd := i - 1
		i = skipSpace(b, i)
		if i >= n || b[i] != ':' {
			return BadJSON
		}
		i = skipSpace(b, i+1)
		if f != nil && f.state == searching && len(stack) == f.matched+1 {
			f.member(b, b[keyStart:keyEnd], escaped, i, len(stack))
		}
		goto value
	}

after:
	if f != nil && f.state == pending && len(stack) == f.depth {
		f.end, f.state = i, Present
	}
	i = skipSpace(b, i)
	if len(stack) == 0 {
		if i == n {
			return Valid
		}
		return BadJSON
	}
	if i >= n {
		return BadJSON
	}
	c = b[i]
	if top := stack[len(stack)-1]; c == top+2 {
		if f != nil && f.state == searching && len(stack) == f.matched+1 {
			f.state = Absent // the object searched ends without the key
		}
		stack = stack[:len(stack)-1]
		i++
		goto after
	} else if c != ',' {
		return BadJSON
	} else if i = skipSpace(b, i+1); top == '{' {
		goto key
	}
	goto value
}

// strSpecial handles the byte at b[i] inside a string — an escape, a
// control byte or non-ASCII text; never the closing quote — and returns
// the index after it.
func strSpecial(b []byte, i int) (int, Problem) {
	c := b[i]
	switch {
	case c == '\\':
		if i+1 >= len(b) {
			return i, BadJSON
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return i + 2, Valid
		case 'u':
			if i+6 > len(b) || !hex4(b[i+2:i+6]) {
				return i, BadJSON
			}
			return i + 6, Valid
		}
		return i, BadJSON
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
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

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

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special returns, for eight string bytes in x, a mask with the high bit
// set in each byte that needs a look — a control byte, '"', '\\', or (when
// hi is msb) a non-ASCII byte — and zero when all eight are plain. The
// lowest set bit is exact, so bits.TrailingZeros64(m)/8 is the index of the
// first such byte.
func special(x, hi uint64) uint64 {
	ctl := (x - 0x20*lsb) &^ x // a byte below 0x20
	q := x ^ '"'*lsb           // zero where a byte is '"'
	bs := x ^ '\\'*lsb         // zero where a byte is '\\'
	zq := (q - lsb) &^ q       // high bit where q has a zero byte
	zb := (bs - lsb) &^ bs     // likewise for bs
	return (ctl | zq | zb | x&hi) & msb
}

func hex4(b []byte) bool {
	for _, c := range b[:4] {
		// c-'0' and (c|0x20)-'a' wrap around below their digits.
		if c-'0' >= 10 && (c|0x20)-'a' >= 6 {
			return false
		}
	}
	return true
}

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
