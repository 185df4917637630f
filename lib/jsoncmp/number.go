// Package jsoncmp is the one rule by which ndjson's verbs tell JSON values
// equal and put them in order: numbers by their exact decimal value (1,
// 1.0, 1E0 and 10e-1 are one value; 9007199254740993 is not
// 9007199254740992; 1.0000000000000000000001 is not 1; 1e400 is a number
// larger than any double), strings by their text whatever their escapes,
// arrays element by element, objects by their members whatever their
// order, a key given twice counting once with its last value; values of
// different types by one order at every depth (numbers, strings, false,
// true, arrays, objects, null: sort's).
//
// It gives each value a key, bytes that are equal when the values are and
// that order as numbers order (for sort), and a comparison of two numbers
// that needs no key when both fit a double exactly. Every input is a
// valid JSON text: what it makes of anything else means nothing, but it
// never panics.
package jsoncmp

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"strconv"
)

// A number's key: a sign byte, then for a number that is not zero its
// decimal exponent and its significant digits, so that keys order as the
// numbers do.
const (
	negative = 0x01
	zero     = 0x02
	positive = 0x03
)

// decimal is a JSON number's text taken apart: value = ±0.D × 10^Exp, with
// D the digits (no leading or trailing zero; none for zero).
type decimal struct {
	neg    bool
	digits []byte
	exp    int64
}

// maxExp bounds a written exponent: beyond it (a number of more than 10^15
// digits' magnitude), exponents are held at the bound.
const maxExp = 1 << 50

// parse takes raw apart; raw is a valid JSON number. digits is built in
// buf.
func parse(raw []byte, buf []byte) decimal {
	var d decimal
	i := 0
	if i < len(raw) && raw[i] == '-' {
		d.neg = true
		i++
	}
	digits := buf[:0]
	point := int64(0) // digits before the decimal point, leading zeros left out
	lead := true
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
		if lead && raw[i] == '0' {
			continue
		}
		lead = false
		digits = append(digits, raw[i])
		point++
	}
	if i < len(raw) && raw[i] == '.' {
		for i++; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
			if lead && raw[i] == '0' {
				point--
				continue
			}
			lead = false
			digits = append(digits, raw[i])
		}
	}
	var exp int64
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		eneg := false
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			eneg = raw[i] == '-'
			i++
		}
		for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
			if exp < maxExp {
				exp = exp*10 + int64(raw[i]-'0')
			}
		}
		exp = min(exp, maxExp)
		if eneg {
			exp = -exp
		}
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	d.digits = digits
	if len(digits) == 0 {
		d.neg = false
		return d
	}
	d.exp = point + exp
	return d
}

// AppendNumberKey appends the key of raw, a valid JSON number: equal for
// numbers of equal value, and ordered as they are.
func AppendNumberKey(out, raw []byte) []byte {
	var buf [32]byte
	d := parse(raw, buf[:])
	switch {
	case len(d.digits) == 0:
		return append(out, zero)
	case d.neg:
		out = append(out, negative)
		at := len(out)
		out = appendExp(out, d.exp)
		for i := at; i < len(out); i++ {
			out[i] = ^out[i] // a prefix-free code: complemented, it orders the other way
		}
		for _, c := range d.digits {
			out = append(out, ^c)
		}
		return append(out, 0xff)
	}
	out = append(out, positive)
	out = appendExp(out, d.exp)
	out = append(out, d.digits...)
	return append(out, 0x00)
}

// appendExp appends an exponent's key: bytes that order as the exponents
// do, and that no other exponent's begins with. An exponent of less than
// 64 either way, which is nearly every number's, is one byte, so that the
// first eight bytes of a key (a sort's prefix, see lib/extsort) most
// often hold its leading digits too: 0x80+e. A larger one is a byte that
// says its sign and its length in bytes, then its magnitude, big-endian
// (complemented when negative, so that a larger magnitude orders first):
// 0xC0+n-1 above the one-byte forms, 0x40-n below them.
func appendExp(out []byte, e int64) []byte {
	if e > -64 && e < 64 {
		return append(out, byte(0x80+e))
	}
	m := uint64(e)
	if e < 0 {
		m = uint64(-e)
	}
	n := (bits.Len64(m) + 7) / 8
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], m)
	if e > 0 {
		return append(append(out, byte(0xC0+n-1)), b[8-n:]...)
	}
	out = append(out, byte(0x40-n))
	for _, c := range b[8-n:] {
		out = append(out, ^c)
	}
	return out
}

// Double returns raw's value as a double for arithmetic (see Float), and
// whether the double stands for it exactly enough to compare: it equals
// and orders against any other such double as the decimals do. That is
// so for at most 15 significant digits (trailing zeros aside) in the range
// of normal doubles; past that (9007199254740993, 1.0000000000000000000001,
// 1e400), compare the texts with CompareNumbers. Being exact is a property
// of the value, not of how it is written: 1 and 1.0000000000000000000 both
// are.
func Double(raw []byte) (float64, bool) {
	f, err := strconv.ParseFloat(unsafeString(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, Exact(raw, f)
}

// Exact is Double's second answer for raw, given f, raw's double.
func Exact(raw []byte, f float64) bool {
	n, last, lead := 0, 0, true // digits from the first not zero, to the last not zero
	for _, c := range raw {
		if c == 'e' || c == 'E' {
			break
		}
		if c < '0' || c > '9' || (lead && c == '0') {
			continue
		}
		lead = false
		n++
		if c != '0' {
			last = n
		}
	}
	n = last
	return n <= 15 && (f == 0) == (n == 0) && (f == 0 || math.Abs(f) >= 1e-300 && math.Abs(f) <= 1e300)
}

// AppendEqualKey appends a key of raw, a valid JSON text, that is equal
// exactly when the values are, as AppendKey's, but does not order: for a
// number a double holds exactly (see Double), the double's bits, which
// are quicker to make.
func AppendEqualKey(out, raw []byte) []byte {
	if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		if f, ok := Double(raw); ok {
			if f == 0 {
				f = 0 // -0 is 0
			}
			return binary.LittleEndian.AppendUint64(append(out, tagDouble), math.Float64bits(f))
		}
	}
	return AppendKey(out, raw)
}

// CompareNumbers compares two valid JSON numbers by their exact values:
// -1, 0 or +1.
func CompareNumbers(a, b []byte) int {
	if x, ok := Double(a); ok {
		if y, ok := Double(b); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	var ka, kb [64]byte
	return compareBytes(AppendNumberKey(ka[:0], a), AppendNumberKey(kb[:0], b))
}

func compareBytes(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// Float is raw's value as a double, for arithmetic: the nearest one, and
// past the range of doubles ±Inf (1e400 is +Inf, 1e-400 is 0). raw is a
// valid JSON number.
func Float(raw []byte) float64 {
	f, _ := strconv.ParseFloat(unsafeString(raw), 64) // ErrRange still gives ±Inf or ±0
	return f
}
