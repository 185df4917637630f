// Package predicate is the expression language of "ndjson where": one
// predicate per argument, each a gjson path, an operator and a value.
//
//	PATH==VALUE  PATH!=VALUE  PATH<VALUE  PATH<=VALUE  PATH>VALUE  PATH>=VALUE
//	PATH~REGEX   PATH (present, not null, not false)   !PATH (the opposite)
//
// VALUE is JSON where it parses as JSON (3, true, null, "3", {"a":1}) and a
// string otherwise (run_done). Values are equal and ordered by lib/jsoncmp's
// rule, ndjson's one: numbers by their exact decimal value (1.10 == 1.1,
// 9007199254740993 != 9007199254740992), strings by their decoded text,
// byte by byte for ordering, arrays and objects by their members whatever
// their order; values of different types are never equal and never
// ordered. A missing path reads
// as null for == and !=, as jq does, and matches no ordering or regex.
//
// The operator is the first one outside brackets, parentheses, braces and
// quotes, so gjson queries such as friends.#(age>40).name work as paths; a
// backslash escapes an operator character in a path.
package predicate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unsafe"

	"github.com/agentry/agentry/lib/jsoncmp"
	"github.com/tidwall/gjson"
)

// Op is a predicate's operator.
type Op uint8

const (
	Truthy Op = iota // PATH
	Falsy            // !PATH
	Eq               // ==
	Ne               // !=
	Lt               // <
	Le               // <=
	Gt               // >
	Ge               // >=
	Match            // ~
)

// String is the operator as written.
func (op Op) String() string {
	switch op {
	case Falsy:
		return "!"
	case Eq:
		return "=="
	case Ne:
		return "!="
	case Lt:
		return "<"
	case Le:
		return "<="
	case Gt:
		return ">"
	case Ge:
		return ">="
	case Match:
		return "~"
	}
	return ""
}

// Pred is one parsed predicate.
type Pred struct {
	Path string
	Op   Op
	// Value is the literal as given.
	Value string
	lit   literal
	re    *regexp.Regexp
}

// literal is a parsed VALUE.
type literal struct {
	typ   gjson.Type
	str   string  // for strings: the decoded text
	raw   string  // the JSON text
	key   []byte  // for objects and arrays: their jsoncmp key
	num   float64 // for numbers: the double, when it stands for the number exactly (jsoncmp.Double)
	exact bool
}

// Parse reads one predicate.
func Parse(expr string) (*Pred, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, errors.New("empty predicate")
	}
	at, op, width := findOp(expr)
	if at < 0 {
		p := &Pred{Path: trimPath(expr), Op: Truthy}
		if strings.HasPrefix(p.Path, "!") {
			p.Op, p.Path = Falsy, trimPath(p.Path[1:])
		}
		if p.Path == "" {
			return nil, fmt.Errorf("predicate %q has no path", expr)
		}
		return p, nil
	}
	if op == 255 {
		return nil, fmt.Errorf("predicate %q: '=' is not an operator; use '==' to compare", expr)
	}
	p := &Pred{Path: trimPath(expr[:at]), Op: op, Value: strings.TrimLeft(expr[at+width:], " \t")}
	if p.Path == "" {
		return nil, fmt.Errorf("predicate %q has no path before %q", expr, op.String())
	}
	if strings.TrimSpace(p.Value) == "" {
		// an operand forgotten (a shell variable unset) is no operand,
		// never the empty string: "" says that
		return nil, fmt.Errorf("predicate %q has no value after %q (the empty string is \"\")", expr, op.String())
	}
	if op == Match {
		re, err := regexp.Compile(p.Value)
		if err != nil {
			return nil, fmt.Errorf("predicate %q: bad regular expression: %v", expr, err)
		}
		p.re = re
		return p, nil
	}
	p.lit = parseLiteral(p.Value)
	return p, nil
}

// trimPath drops the spaces and tabs around a path, but not one escaped
// with a backslash: `a\ ` keeps its space.
func trimPath(s string) string {
	s = strings.TrimLeft(s, " \t")
	for n := len(s); n > 0 && (s[n-1] == ' ' || s[n-1] == '\t'); n-- {
		slashes := 0
		for j := n - 2; j >= 0 && s[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 1 {
			break
		}
		s = s[:n-1]
	}
	return s
}

// findOp returns the index, operator and width of the first operator in
// expr outside brackets and quotes; op 255 is a lone '='. at is -1 when
// there is none.
func findOp(expr string) (at int, op Op, width int) {
	depth := 0
	quoted := false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c == '\\' {
			i++
			continue
		}
		if quoted {
			if c == '"' {
				quoted = false
			}
			continue
		}
		switch c {
		case '"':
			if depth > 0 {
				quoted = true
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		}
		if depth > 0 {
			continue
		}
		next := byte(0)
		if i+1 < len(expr) {
			next = expr[i+1]
		}
		switch {
		case c == '=' && next == '=':
			return i, Eq, 2
		case c == '!' && next == '=':
			return i, Ne, 2
		case c == '<' && next == '=':
			return i, Le, 2
		case c == '>' && next == '=':
			return i, Ge, 2
		case c == '<':
			return i, Lt, 1
		case c == '>':
			return i, Gt, 1
		case c == '~':
			return i, Match, 1
		case c == '=':
			return i, 255, 1
		}
	}
	return -1, 0, 0
}

func parseLiteral(v string) literal {
	if !json.Valid([]byte(v)) {
		return literal{typ: gjson.String, str: v, raw: strconv.Quote(v)}
	}
	r := gjson.Parse(v)
	l := literal{typ: r.Type, raw: strings.TrimSpace(v)}
	switch r.Type {
	case gjson.String:
		l.str = r.Str
	case gjson.Number:
		l.num, l.exact = jsoncmp.Double(bytesOf(l.raw))
	case gjson.JSON:
		l.key = jsoncmp.AppendKey(nil, []byte(l.raw))
	}
	return l
}

// String gives the predicate back in the syntax Parse reads.
func (p *Pred) String() string {
	switch p.Op {
	case Truthy:
		return p.Path
	case Falsy:
		return "!" + p.Path
	}
	s := p.Path + p.Op.String() + p.Value
	if q, err := Parse(s); err == nil && q.Path == p.Path && q.Op == p.Op && q.Value == p.Value {
		return s
	}
	// Run together, the parts can read as another operator ("a<" "=" "x"
	// as a<=x, "a!" "==" "1" as a!==1); spaces keep them apart.
	return p.Path + " " + p.Op.String() + " " + p.Value
}

// Match reports whether line, a JSON value, satisfies the predicate. line
// is not validated here: callers validate what they output.
func (p *Pred) Match(line []byte) bool {
	return p.matchResult(gjson.Get(unsafe.String(unsafe.SliceData(line), len(line)), p.Path))
}

// MatchValue is Match given the value found at the path, as its JSON text
// (found false: the line has none) — for a caller that has a faster way
// to find it.
func (p *Pred) MatchValue(raw []byte, found bool) bool {
	if !found {
		return p.matchResult(gjson.Result{})
	}
	if (p.Op == Eq || p.Op == Ne) && p.lit.typ == gjson.String && len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		// A string with no escape is its text: no need to parse it.
		return (string(raw[1:len(raw)-1]) == p.lit.str) == (p.Op == Eq)
	}
	return p.matchResult(gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw))))
}

func (p *Pred) matchResult(r gjson.Result) bool {
	switch p.Op {
	case Truthy:
		return truthy(r)
	case Falsy:
		return !truthy(r)
	case Eq:
		return p.equal(r)
	case Ne:
		return !p.equal(r)
	case Match:
		if !r.Exists() {
			return false
		}
		if r.Type == gjson.String {
			return p.re.MatchString(r.Str)
		}
		return p.re.MatchString(r.Raw)
	}
	c, ok := p.compare(r)
	if !ok {
		return false
	}
	switch p.Op {
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	}
	return false
}

func truthy(r gjson.Result) bool {
	return r.Exists() && r.Type != gjson.Null && r.Type != gjson.False
}

func (p *Pred) equal(r gjson.Result) bool {
	typ := r.Type
	if !r.Exists() {
		typ = gjson.Null
	}
	if typ != p.lit.typ {
		return false
	}
	switch typ {
	case gjson.String:
		if strings.IndexByte(r.Raw, '\\') < 0 && len(r.Raw) >= 2 {
			return r.Raw[1:len(r.Raw)-1] == p.lit.str
		}
		return r.Str == p.lit.str
	case gjson.Number:
		return p.compareNumber(r) == 0
	case gjson.JSON:
		return bytes.Equal(jsoncmp.AppendKey(nil, bytesOf(r.Raw)), p.lit.key)
	}
	return true // null, true, false: the type is the value
}

// compare orders r against the literal: numbers with numbers, strings with
// strings.
func (p *Pred) compare(r gjson.Result) (int, bool) {
	switch {
	case r.Type == gjson.Number && p.lit.typ == gjson.Number:
		return p.compareNumber(r), true
	case r.Type == gjson.String && p.lit.typ == gjson.String:
		return strings.Compare(r.Str, p.lit.str), true
	}
	return 0, false
}

// compareNumber compares the number r with the literal, exactly: by their
// doubles when both stand for their numbers exactly, else by their texts.
func (p *Pred) compareNumber(r gjson.Result) int {
	if p.lit.exact && jsoncmp.Exact(bytesOf(r.Raw), r.Num) {
		switch {
		case r.Num < p.lit.num:
			return -1
		case r.Num > p.lit.num:
			return 1
		}
		return 0
	}
	return jsoncmp.CompareNumbers(bytesOf(r.Raw), bytesOf(p.lit.raw))
}

// bytesOf views s as bytes, without copying; they must not be written.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// Set is the predicates of one where: all must hold, or with Any, one.
type Set struct {
	Preds []*Pred
	Any   bool
}

// ParseSet parses every expression.
func ParseSet(exprs []string, anyOf bool) (*Set, error) {
	s := &Set{Any: anyOf}
	for _, e := range exprs {
		p, err := Parse(e)
		if err != nil {
			return nil, err
		}
		s.Preds = append(s.Preds, p)
	}
	return s, nil
}

// MatchBy is Match with each predicate's value found by value(i, path).
func (s *Set) MatchBy(value func(i int, path string) ([]byte, bool)) bool {
	for i, p := range s.Preds {
		if p.MatchValue(value(i, p.Path)) == s.Any {
			return s.Any
		}
	}
	return !s.Any || len(s.Preds) == 0
}

// Match reports whether line satisfies the set.
func (s *Set) Match(line []byte) bool {
	for _, p := range s.Preds {
		if p.Match(line) == s.Any {
			return s.Any
		}
	}
	return !s.Any || len(s.Preds) == 0
}
