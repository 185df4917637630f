package ndjsontool

import (
	"context"
	"slices"

	"github.com/agentry/agentry/lib/ndjson"
)

// An edit sets or deletes the value at one path of every line. Its path
// is make's: keys split at unescaped dots, a backslash escaping a dot or
// a backslash; a key of digits indexes an array it meets.
type edit struct {
	arg   string
	path  []string
	every []bool // path[i] is a bare '#': every element of the array there
	raw   []byte // the value to set; nil to delete
}

// everyAt marks the keys of key, split as splitKey splits it, that are
// a bare '#' (not '\#', the key "#"): each element of an array.
func everyAt(key string) []bool {
	var every []bool
	start, escaped := 0, false
	for i := 0; i <= len(key); i++ {
		if i == len(key) || key[i] == '.' {
			every = append(every, !escaped && key[start:i] == "#")
			start, escaped = i+1, false
			continue
		}
		if key[i] == '\\' {
			escaped = true
			i++
		}
	}
	return every
}

// parseSets reads set's arguments: PATH=STRING and PATH:=JSON.
func parseSets(args []string) ([]edit, error) {
	var eds []edit
	for _, a := range args {
		key, val, isJSON, ok := splitArg(a)
		if !ok {
			return nil, argError(a, nil, "argument %q has no '=' or ':='", a)
		}
		path, appendTo, err := splitKey(key)
		if err != nil || appendTo {
			return nil, argError(a, nil, "argument %q: the path must be keys separated by dots", a)
		}
		raw := quote(val)
		if isJSON {
			if p := ndjson.Check([]byte(val)); p != ndjson.Valid {
				return nil, argError(a, nil, "argument %q: the value after := is not JSON (%s)", a, p)
			}
			raw = compact([]byte(val))
		}
		eds = append(eds, edit{arg: a, path: path, every: everyAt(key), raw: raw})
	}
	return eds, nil
}

func parseDels(args []string) ([]edit, error) {
	var eds []edit
	for _, a := range args {
		path, appendTo, err := splitKey(a)
		if err != nil || appendTo {
			return nil, argError(a, nil, "path %q: keys separated by dots", a)
		}
		eds = append(eds, edit{arg: a, path: path, every: everyAt(a)})
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
// byte for byte. A path that runs into a value that is neither an object
// nor an array holding the index is left unset (the line's other paths
// are set), and the lines counted.
func Set(ctx context.Context, st *Stream, args []string) error {
	eds, err := parseSets(args)
	if err != nil {
		return err
	}
	return runEdits(ctx, st, eds, "set")
}

// Del writes every valid line without the value at each PATH (every
// member of its name, or the array element), the rest byte for byte. A
// line without it is written unchanged.
func Del(ctx context.Context, st *Stream, args []string) error {
	eds, err := parseDels(args)
	if err != nil {
		return err
	}
	return runEdits(ctx, st, eds, "del")
}

func runEdits(ctx context.Context, st *Stream, eds []edit, verb string) error {
	var blocked int64
	sk, err := eachChunk(ctx, st, finding{}, func() *editChunk { return &editChunk{} },
		func(c *editChunk, line []byte, lv lineView) *editChunk {
			cur, m := line, lv.marks // the marks are the line's: for the first edit only
			var buf [2][]byte
			missed := false
			for i := range eds {
				ed := &eds[i]
				next, ok := ed.apply(buf[i%2][:0], cur, m)
				if !ok {
					missed = missed || ed.raw != nil
					continue
				}
				buf[i%2] = next
				cur, m = next, nil
			}
			if missed {
				c.blocked++
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
		st.Voice.Notef("%s left a path unset on %d %s: it ran into a value that is not an object, or an array holding its index", verb, blocked, plural(blocked, "line"))
	}
	return sk.report(st)
}

// apply appends line with the edit made to out; false when it could not
// be made (set) or there was nothing to delete (del). m is line's marks,
// or nil.
func (ed *edit) apply(out, line []byte, m ndjson.Marks) ([]byte, bool) {
	lo, hi := ndjson.SkipSpace(line, 0), len(line)
	if len(ed.path) == 0 {
		hi = ndjson.ValueEnd(line, m, lo)
	}
	if slices.Contains(ed.every, true) {
		out = append(out, line[:lo]...)
		out, ok := ed.editValue(out, line, m, lo, hi, 0)
		if !ok {
			return nil, false
		}
		return append(out, line[hi:]...), true
	}
	// One value at the path: found first, the line copied once, with
	// nothing copied for a line the edit cannot reach.
	for d, k := range ed.path {
		last := d == len(ed.path)-1
		switch line[lo] {
		case '{':
			if ed.raw == nil && last {
				return deleteMembers(out, line, m, lo, 0, len(line), k)
			}
			vs, ve, close, ok := findMember(line, m, lo, k)
			if !ok {
				if ed.raw == nil {
					return nil, false
				}
				out = append(out, line[:close]...)
				if first, _ := ndjson.Into(line, lo); first != close {
					out = append(out, ',') // after the members before
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
				return deleteElement(out, line, m, lo, 0, len(line), n)
			}
			vs, ve, ok := findElement(line, m, lo, n)
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

// editValue appends line[lo:hi], a value (and the space after it), with
// the edit made at its path from key d on: every element of an array
// where the key is a bare '#'.
func (ed *edit) editValue(out, line []byte, m ndjson.Marks, lo, hi, d int) ([]byte, bool) {
	if d == len(ed.path) {
		out = append(out, ed.raw...)
		return append(out, line[ndjson.ValueEnd(line, m, lo):hi]...), true
	}
	k, last := ed.path[d], d == len(ed.path)-1
	switch line[lo] {
	case '{':
		if ed.isEvery(d) {
			return nil, false
		}
		if ed.raw == nil && last {
			return deleteMembers(out, line, m, lo, lo, hi, k)
		}
		vs, ve, close, ok := findMember(line, m, lo, k)
		if !ok {
			if ed.raw == nil {
				return nil, false
			}
			if slices.Contains(ed.every[min(d+1, len(ed.every)):], true) {
				// every element of an array that is not there: none
				return append(out, line[lo:hi]...), true
			}
			out = append(out, line[lo:close]...)
			if first, _ := ndjson.Into(line, lo); first != close {
				out = append(out, ',') // after the members before
			}
			out = append(append(out, quote(k)...), ':')
			out = appendNested(out, ed.path[d+1:], ed.raw)
			return append(out, line[close:hi]...), true
		}
		return ed.editIn(out, line, m, lo, hi, vs, ve, d)
	case '[':
		if ed.isEvery(d) {
			return ed.editEvery(out, line, m, lo, hi, d)
		}
		n, ok := index(k)
		if !ok {
			return nil, false
		}
		if ed.raw == nil && last {
			return deleteElement(out, line, m, lo, lo, hi, n)
		}
		vs, ve, ok := findElement(line, m, lo, n)
		if !ok {
			return nil, false
		}
		return ed.editIn(out, line, m, lo, hi, vs, ve, d)
	}
	return nil, false
}

// isEvery says whether key d is a bare '#'.
func (ed *edit) isEvery(d int) bool { return d < len(ed.every) && ed.every[d] }

// editIn appends line[lo:hi] with the value at line[vs:ve] in it edited
// from key d+1 on.
func (ed *edit) editIn(out, line []byte, m ndjson.Marks, lo, hi, vs, ve, d int) ([]byte, bool) {
	edited, ok := ed.editValue(append(out, line[lo:vs]...), line, m, vs, ve, d+1)
	if !ok {
		return nil, false
	}
	return append(edited, line[ve:hi]...), true
}

// editEvery appends the array at line[lo:hi] with the edit made in each
// element from key d+1 on (del of a last '#': every element deleted). An
// element the edit cannot reach stays as it is; false when it reached
// none (an empty array is no failure of set's).
func (ed *edit) editEvery(out, line []byte, m ndjson.Marks, lo, hi, d int) ([]byte, bool) {
	all := elements(line, m, lo)
	if ed.raw == nil && d == len(ed.path)-1 {
		del := make([]bool, len(all))
		for i := range del {
			del[i] = true
		}
		return cutItems(out, line, lo, hi, all, del)
	}
	at, any := lo, len(all) == 0 && ed.raw != nil
	for _, e := range all {
		out = append(out, line[at:e.at]...)
		if edited, ok := ed.editValue(out, line, m, e.at, e.end, d+1); ok {
			out, any = edited, true
		} else {
			out = append(out, line[e.at:e.end]...)
		}
		at = e.end
	}
	if !any {
		return nil, false
	}
	return append(out, line[at:hi]...), true
}

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

// item is a member of an object or an element of an array: where it
// starts (a member's key) and where its value ends.
type item struct{ at, end int }

// eachMember calls fn with each member of the object at line[lo], its End
// found, and returns the index of the object's closing brace.
func eachMember(line []byte, m ndjson.Marks, lo int, fn func(mb ndjson.Member)) int {
	i, more := ndjson.Into(line, lo)
	for more {
		mb := ndjson.MemberAt(line, m, i)
		mb.End = ndjson.ValueEnd(line, m, mb.Start)
		fn(mb)
		i, more = ndjson.Past(line, mb.End)
	}
	return i
}

// findMember finds the last member named k of the object at line[lo]:
// its value's span; or, when there is none, the index of the closing
// brace.
func findMember(line []byte, m ndjson.Marks, lo int, k string) (vs, ve, close int, ok bool) {
	close = eachMember(line, m, lo, func(mb ndjson.Member) {
		if mb.KeyIs(line, k) {
			vs, ve, ok = mb.Start, mb.End, true
		}
	})
	return vs, ve, close, ok
}

// deleteMembers appends line without the members named k of the object
// at line[lo]: each with the comma after it, or the last with the comma
// before it.
// from and to bound what of line is appended.
func deleteMembers(out, line []byte, m ndjson.Marks, lo, from, to int, k string) ([]byte, bool) {
	var all []item
	var del []bool
	eachMember(line, m, lo, func(mb ndjson.Member) {
		all = append(all, item{mb.KeyStart - 1, mb.End})
		del = append(del, mb.KeyIs(line, k))
	})
	return cutItems(out, line, from, to, all, del)
}

// cutItems appends line[lo:hi] without the items marked: an item goes with the
// separator after it, up to the next item; a last item kept-less goes
// with the separator before it, from the end of the item kept before;
// when none is kept, all go.
func cutItems(out, line []byte, lo, hi int, all []item, del []bool) ([]byte, bool) {
	any := false
	at := lo
	for i, it := range all {
		if !del[i] {
			continue
		}
		any = true
		from, to := it.at, it.end
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
			to = all[i+1].at // with the separator after it
		case prev >= 0:
			from = all[prev].end // the last kept-less: with the one before
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
	return append(out, line[at:hi]...), true
}

// elements lists the elements of the array at line[lo].
func elements(line []byte, m ndjson.Marks, lo int) []item {
	var all []item
	i, more := ndjson.Into(line, lo)
	for more {
		end := ndjson.ValueEnd(line, m, i)
		all = append(all, item{i, end})
		i, more = ndjson.Past(line, end)
	}
	return all
}

func findElement(line []byte, m ndjson.Marks, lo, n int) (vs, ve int, ok bool) {
	all := elements(line, m, lo)
	if n >= len(all) {
		return 0, 0, false
	}
	return all[n].at, all[n].end, true
}

func deleteElement(out, line []byte, m ndjson.Marks, lo, from, to, n int) ([]byte, bool) {
	all := elements(line, m, lo)
	if n >= len(all) {
		return nil, false
	}
	del := make([]bool, len(all))
	del[n] = true
	return cutItems(out, line, from, to, all, del)
}
