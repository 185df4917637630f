package ndjsontool

import (
	"bytes"
	"context"
	"fmt"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjson"
)

// An edit sets or deletes the value at one path of every line. Its path
// is make's: keys split at unescaped dots, a backslash escaping a dot or
// a backslash; a key of digits indexes an array it meets.
type edit struct {
	arg  string
	path []string
	raw  []byte // the value to set; nil to delete
}

// parseSets reads set's arguments: PATH=STRING and PATH:=JSON.
func parseSets(args []string) ([]edit, error) {
	var eds []edit
	for _, a := range args {
		key, val, isJSON, ok := splitArg(a)
		if !ok {
			return nil, fmt.Errorf("argument %q has no '=' or ':='", a)
		}
		path, appendTo, err := splitKey(key)
		if err != nil || appendTo {
			return nil, fmt.Errorf("argument %q: the path must be keys separated by dots", a)
		}
		raw := quote(val)
		if isJSON {
			if p := ndjson.Check([]byte(val)); p != ndjson.Valid {
				return nil, fmt.Errorf("argument %q: the value after := is not JSON (%s)", a, p)
			}
			raw = compact([]byte(val))
		}
		eds = append(eds, edit{arg: a, path: path, raw: raw})
	}
	return eds, nil
}

func parseDels(args []string) ([]edit, error) {
	var eds []edit
	for _, a := range args {
		path, appendTo, err := splitKey(a)
		if err != nil || appendTo {
			return nil, fmt.Errorf("path %q: keys separated by dots", a)
		}
		eds = append(eds, edit{arg: a, path: path})
	}
	return eds, nil
}

// editChunk is a chunk's output and how many lines an edit could not
// reach.
type editChunk struct {
	out     []byte
	blocked int64
}

// Set writes every valid line with the value at each PATH set, in order:
// PATH=STRING sets a string, PATH:=JSON any JSON value. A member that is
// there is replaced where it stands (the last of its name, the one every
// verb reads); one that is not is added at the end of its object, with the
// objects on its way made as needed. Everything else in the line stays
// byte for byte. A line where the path runs into a value that is neither
// an object nor an array holding the index is written unchanged, and
// counted.
func Set(ctx context.Context, st *Stream, args []string) error {
	eds, err := parseSets(args)
	if err != nil {
		return cli.WithHint(cli.Usagef("%s", err), "write PATH=STRING or PATH:=JSON; dots nest: a.b=c")
	}
	return runEdits(ctx, st, eds, "set")
}

// Del writes every valid line without the value at each PATH (every
// member of its name, or the array element), the rest byte for byte. A
// line without it is written unchanged.
func Del(ctx context.Context, st *Stream, args []string) error {
	eds, err := parseDels(args)
	if err != nil {
		return cli.Usagef("%s", err)
	}
	return runEdits(ctx, st, eds, "del")
}

func runEdits(ctx context.Context, st *Stream, eds []edit, verb string) error {
	var blocked int64
	sk, err := eachChunk(ctx, st, finding{}, func() *editChunk { return &editChunk{} },
		func(c *editChunk, line []byte, _ lineView) *editChunk {
			cur := line
			var buf [2][]byte
			for i, ed := range eds {
				next, ok := ed.apply(buf[i%2][:0], cur)
				if !ok {
					if ed.raw != nil {
						c.blocked++
					}
					continue
				}
				buf[i%2] = next
				cur = next
			}
			c.out = append(append(c.out, cur...), '\n')
			return c
		}, func(c *editChunk, _ int64) error {
			blocked += c.blocked
			if len(c.out) == 0 {
				return nil
			}
			_, err := st.Out.Write(c.out)
			return err
		})
	if err != nil {
		return err
	}
	if blocked > 0 {
		st.Voice.Notef("%s left %d %s unchanged: a path ran into a value that is not an object, or an array holding its index", verb, blocked, plural(blocked, "line"))
	}
	return sk.report(st)
}

// apply appends line with the edit made to out; false when it could not
// be made (set) or there was nothing to delete (del).
func (ed edit) apply(out, line []byte) ([]byte, bool) {
	lo, hi := skipWS(line, 0), len(line)
	for hi > lo && isWS(line[hi-1]) {
		hi--
	}
	for d, k := range ed.path {
		last := d == len(ed.path)-1
		switch line[lo] {
		case '{':
			if ed.raw == nil && last {
				return deleteMembers(out, line, lo, k)
			}
			vs, ve, close, ok := findMember(line, lo, k)
			if !ok {
				if ed.raw == nil {
					return nil, false
				}
				out = append(out, line[:close]...)
				if !emptyBefore(line, lo, close) {
					out = append(out, ',')
				}
				out = append(append(out, quote(k)...), ':')
				out = appendNested(out, ed.path[d+1:], ed.raw)
				return append(out, line[close:]...), true
			}
			lo, hi = vs, ve
		case '[':
			n, ok := index(k)
			if !ok {
				return nil, false
			}
			if ed.raw == nil && last {
				return deleteElement(out, line, lo, n)
			}
			vs, ve, ok := findElement(line, lo, n)
			if !ok {
				return nil, false
			}
			lo, hi = vs, ve
		default:
			return nil, false
		}
	}
	out = append(out, line[:lo]...)
	out = append(out, ed.raw...)
	return append(out, line[hi:]...), true
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func index(k string) (int, bool) {
	if k == "" || len(k) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(k) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// appendNested appends raw inside objects keyed by path, outermost first.
func appendNested(out []byte, path []string, raw []byte) []byte {
	for _, k := range path {
		out = append(append(append(out, '{'), quote(k)...), ':')
	}
	out = append(out, raw...)
	for range path {
		out = append(out, '}')
	}
	return out
}

// valueEnd is the index after the value at b[i] (a valid line).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return strEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = strEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && !isWS(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
}

// member is one member of an object: where its key starts and its value
// ends.
type member struct{ keyAt, valAt, valEnd int }

// members lists the members of the object at line[lo], and returns the
// index of its closing brace.
func members(line []byte, lo int, fn func(m member, key []byte) bool) int {
	i := skipWS(line, lo+1)
	for i < len(line) && line[i] != '}' {
		ke := strEnd(line, i)
		vs := skipWS(line, skipWS(line, ke)+1)
		ve := valueEnd(line, vs)
		if !fn(member{i, vs, ve}, line[i:ke]) {
			return -1
		}
		i = skipWS(line, ve)
		if i < len(line) && line[i] == ',' {
			i = skipWS(line, i+1)
		}
	}
	return i
}

func keyIs(raw []byte, k string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == k
	}
	return string(keyText(raw)) == k
}

// findMember finds the last member named k of the object at line[lo]:
// its value's span; or, when there is none, the index of the closing
// brace.
func findMember(line []byte, lo int, k string) (vs, ve, close int, ok bool) {
	close = members(line, lo, func(m member, key []byte) bool {
		if keyIs(key, k) {
			vs, ve, ok = m.valAt, m.valEnd, true
		}
		return true
	})
	return vs, ve, close, ok
}

// emptyBefore reports whether the object at line[lo] has no member before
// its closing brace at close.
func emptyBefore(line []byte, lo, close int) bool { return skipWS(line, lo+1) == close }

// deleteMembers appends line without the members named k of the object
// at line[lo]: each with the comma after it, or the last with the comma
// before it.
func deleteMembers(out, line []byte, lo int, k string) ([]byte, bool) {
	var all []member
	var del []bool
	members(line, lo, func(m member, key []byte) bool {
		all = append(all, m)
		del = append(del, keyIs(key, k))
		return true
	})
	return cutItems(out, line, all, del)
}

// cutItems appends line without the items marked: an item goes with the
// separator after it, up to the next item; a last item kept-less goes
// with the separator before it, from the end of the item kept before;
// when none is kept, all go.
func cutItems(out, line []byte, all []member, del []bool) ([]byte, bool) {
	any := false
	at := 0
	for i, m := range all {
		if !del[i] {
			continue
		}
		any = true
		from, to := m.keyAt, m.valEnd
		next, prev := -1, -1
		for j := i + 1; j < len(all) && next < 0; j++ {
			if !del[j] {
				next = j
			}
		}
		for j := i - 1; j >= 0 && prev < 0; j-- {
			if !del[j] {
				prev = j
			}
		}
		switch {
		case next >= 0 || prev < 0 && i+1 < len(all):
			to = all[i+1].keyAt // with the separator after it
		case prev >= 0:
			from = all[prev].valEnd // the last kept-less: with the one before
		}
		if from < at {
			from = at
		}
		out = append(out, line[at:from]...)
		at = to
	}
	if !any {
		return nil, false
	}
	return append(out, line[at:]...), true
}

// elements lists the elements of the array at line[lo].
func elements(line []byte, lo int) []member {
	var all []member
	i := skipWS(line, lo+1)
	for i < len(line) && line[i] != ']' {
		ve := valueEnd(line, i)
		all = append(all, member{i, i, ve})
		i = skipWS(line, ve)
		if i < len(line) && line[i] == ',' {
			i = skipWS(line, i+1)
		}
	}
	return all
}

func findElement(line []byte, lo, n int) (vs, ve int, ok bool) {
	all := elements(line, lo)
	if n >= len(all) {
		return 0, 0, false
	}
	return all[n].valAt, all[n].valEnd, true
}

func deleteElement(out, line []byte, lo, n int) ([]byte, bool) {
	all := elements(line, lo)
	if n >= len(all) {
		return nil, false
	}
	del := make([]bool, len(all))
	del[n] = true
	return cutItems(out, line, all, del)
}
