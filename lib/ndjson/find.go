package ndjson

// Find is Check that also looks, as the walk passes, for the value at
// keys, a path of object member names: the last member of each name, as
// Lookup finds it (a later member of a name overrides an earlier one, and
// all that was found under it), escaped keys compared by their text.
// A key of decimal digits indexes an array, as in Lookup. Where is Unknown
// when the walk cannot tell — the line is not an object, the path is
// longer than maxFindDepth — and the caller should look the value up with
// Lookup; and means nothing unless the line is Valid.
func (c *Checker) Find(line []byte, keys []string) (Problem, Where) {
	var w [1]Where
	p := c.FindAll(line, [][]string{keys}, w[:])
	return p, w[0]
}

// FindAll is Find for several paths at once, in the one walk: where[k],
// which must be there for each path, is set to where paths[k] is. A line
// is scanned once however many values a verb wants from it.
func (c *Checker) FindAll(line []byte, paths [][]string, where []Where) Problem {
	if !c.samePaths(paths) {
		c.paths = c.paths[:0]
		for _, keys := range paths {
			pf := pathFind{keys: keys}
			if len(keys) == 0 || len(keys) > maxFindDepth {
				pf.state = Unknown // as on every line below: never searched
			}
			c.paths = append(c.paths, pf)
		}
		f := finder{paths: c.paths}
		f.searchAgain()
		c.search, c.lens, c.firsts = f.search, f.lens, f.firsts
	}
	// A verb asks for the same paths line after line: the search bits of
	// an object's start are kept, and each path's state is reset in place,
	// its keys (a pointer) left alone.
	f := finder{paths: c.paths}
	object := isObject(line)
	for k := range f.paths {
		pf := &f.paths[k]
		state := searching
		if !object || len(pf.keys) == 0 || len(pf.keys) > maxFindDepth {
			state = Unknown
		}
		*pf = pathFind{keys: pf.keys, state: state}
	}
	if object {
		f.search, f.lens, f.firsts = c.search, c.lens, c.firsts
	}
	p := c.check(line, &f)
	for k := range f.paths {
		where[k] = f.paths[k].where()
	}
	return p
}

// samePaths tells whether paths are the ones c.paths were made for, key
// by key (the same strings compare at the cost of a pointer test). The
// search bits kept for them (search, lens, firsts) hold when every path
// that can be followed is at its start.
func (c *Checker) samePaths(paths [][]string) bool {
	if len(paths) != len(c.paths) || len(paths) == 0 {
		return false
	}
	for k, keys := range paths {
		had := c.paths[k].keys
		if len(had) != len(keys) {
			return false
		}
		for i := range keys {
			if had[i] != keys[i] {
				return false
			}
		}
	}
	return true
}

// where is the path's answer once the walk is done.
func (pf *pathFind) where() Where {
	switch {
	case pf.pending:
		return Where{State: Unknown} // the value never ended: not valid
	case pf.state == searching:
		return Where{State: Absent}
	}
	return Where{State: pf.state, Start: pf.start, End: pf.end}
}

// maxFindDepth is the longest path the walk follows: the finder keeps one
// bit per depth.
const maxFindDepth = 62

func isObject(line []byte) bool {
	i := skipSpace(line, 0)
	return i < len(line) && line[i] == '{'
}

// FindState is what Find found.
type FindState uint8

const (
	searching FindState = iota // within the walk only: nothing found yet
	Present                    // the value is line[Start:End]
	Absent                     // the line has no such value
	Unknown                    // look it up another way
)

// Where is the answer of Find.
type Where struct {
	State      FindState
	Start, End int
}

// finder follows paths through a walk; or, when indexing, gathers every
// member of the top-level object, each one pending from its key to the
// end of its value. Bit d of search is set when some path searches the
// object at depth d for a key (or, indexing, for d = 1); bit d of pend
// when a value found began at depth d and has not yet ended. The walk
// tests those bits, and a key's length and first byte against lens and
// firsts, and calls in only when they say it may matter.
type finder struct {
	search, pend uint64
	lens         uint64    // bit l set when a key searched is l bytes long (63: 63 or more)
	firsts       [4]uint64 // bit c set when a key searched begins with the byte c
	paths        []pathFind
	indexing     bool
	members      []Member
}

// pathFind follows one path. The object at depth matched+1 is the one
// searched for keys[matched]: it is the value of the last member named
// keys[matched-1] so far in the object searched before it. state is the
// answer so far; a member that names the key searched overrides it. While
// pending, the path's value has begun, at depth.
type pathFind struct {
	keys       []string
	matched    int
	depth      int
	state      FindState
	pending    bool
	start, end int
	// arrays has bit m set when the container searched for keys[m] is an
	// array: its elements are counted, elem of them so far, for the one at
	// index want (-1 once the search has come back up to it, past the one).
	arrays     uint64
	elem, want int
}

// wants tells whether a key without escapes, b[keyStart:keyEnd], may be
// one searched, by its length and its first byte.
func (f *finder) wants(b []byte, keyStart, keyEnd int) bool {
	n := keyEnd - keyStart
	if f.lens>>min(n, 63)&1 == 0 {
		return false
	}
	if n == 0 {
		return true
	}
	c := b[keyStart]
	return f.firsts[c>>6]>>(c&63)&1 != 0
}

// searchAgain sets the search bits from the paths.
func (f *finder) searchAgain() {
	f.search, f.lens, f.firsts = 0, 0, [4]uint64{}
	for k := range f.paths {
		if pf := &f.paths[k]; pf.state != Unknown {
			f.search |= 1 << (pf.matched + 1)
			key := pf.keys[pf.matched]
			f.lens |= 1 << min(len(key), 63)
			if len(key) > 0 {
				f.firsts[key[0]>>6] |= 1 << (key[0] & 63)
			}
		}
	}
}

// member is told of each member of an object at a depth searched: its key
// with the quotes, b[keyStart-1:keyEnd+1], whether the key has an escape,
// and where its value starts.
func (f *finder) member(b []byte, keyStart, keyEnd int, escaped bool, i, depth int) {
	if f.indexing {
		f.members = append(f.members, Member{KeyStart: keyStart, KeyEnd: keyEnd, Escaped: escaped, Start: i})
		f.pend |= 1 << depth
		return
	}
	if i >= len(b) {
		return
	}
	changed := false
	for k := range f.paths {
		pf := &f.paths[k]
		if pf.state == Unknown || pf.matched+1 != depth {
			continue
		}
		want := pf.keys[pf.matched]
		if !escaped && keyEnd-keyStart != len(want) || !keyIs(b[keyStart-1:keyEnd+1], escaped, want) {
			continue
		}
		// This member overrides whatever an earlier one of its name led to.
		changed = f.matchedValue(pf, b, i, depth) || changed
	}
	if changed {
		f.searchAgain()
	}
}

// element is told of each element of an array at a depth searched, that
// starts at b[i].
func (f *finder) element(b []byte, i, depth int) {
	changed := false
	for k := range f.paths {
		pf := &f.paths[k]
		if pf.state == Unknown || pf.matched+1 != depth || pf.arrays>>pf.matched&1 == 0 {
			continue
		}
		pf.elem++
		if pf.elem-1 == pf.want {
			changed = f.matchedValue(pf, b, i, depth) || changed
		}
	}
	if changed {
		f.searchAgain()
	}
}

// matchedValue is told of the value at b[i], at depth, that the key pf
// searches names: the path's value, pending until it ends, or the
// container the path goes on in. It tells whether the search moved.
func (f *finder) matchedValue(pf *pathFind, b []byte, i, depth int) bool {
	if pf.matched+1 == len(pf.keys) {
		pf.state, pf.pending, pf.start, pf.depth = searching, true, i, depth
		f.pend |= 1 << depth
		return false
	}
	pf.state = searching
	if i >= len(b) {
		return false // the line ends where the value should start: malformed
	}
	switch c := b[i]; c {
	case '{', '[':
		if j := skipSpace(b, i+1); j < len(b) && b[j] == c+2 {
			pf.state = Absent // empty: the walk does not go in
			break
		}
		pf.matched++
		pf.arrays &^= 1 << pf.matched
		if c == '[' {
			want, ok := index(pf.keys[pf.matched])
			if !ok {
				pf.matched--
				pf.state = Absent // a name, in an array
				break
			}
			pf.arrays |= 1 << pf.matched
			pf.elem, pf.want = 0, want
		}
	default:
		pf.state = Absent // the path goes on through a scalar
	}
	return true
}

// index is the array index a key names, as Lookup reads it.
func index(k string) (int, bool) {
	n := 0
	for j := 0; j < len(k); j++ {
		if k[j] < '0' || k[j] > '9' || n > 1<<30 {
			return 0, false
		}
		n = n*10 + int(k[j]-'0')
	}
	return n, true
}

// ended is told where the values pending at depth end.
func (f *finder) ended(i, depth int) {
	f.pend &^= 1 << depth
	if f.indexing {
		f.members[len(f.members)-1].End = i
		return
	}
	for k := range f.paths {
		if pf := &f.paths[k]; pf.pending && pf.depth == depth {
			pf.pending, pf.end, pf.state = false, i, Present
		}
	}
}

// closed is told that an object or array at a depth searched ends: a path that
// searched it goes on in the one around it, where a later member may
// override what was found.
func (f *finder) closed(depth int) {
	changed := false
	for k := range f.paths {
		if pf := &f.paths[k]; pf.state != Unknown && pf.matched+1 == depth && pf.matched > 0 {
			if pf.matched--; pf.arrays>>pf.matched&1 != 0 {
				pf.want = -1 // its element is passed: no other is the one
			}
			changed = true
		}
	}
	if changed { // else the bits are what they were: the line's own end, most often
		f.searchAgain()
	}
}

// Member is one member of an object: its key's text, between the quotes,
// is line[KeyStart:KeyEnd] (escaped as written when Escaped), and its value
// line[Start:End].
type Member struct {
	KeyStart, KeyEnd int
	Escaped          bool
	Start, End       int
}

// Index is Check that also gathers, as the walk passes, the members of the
// line's object, in order: object is false when the line is not one. A
// name may come more than once; the last member of a name is the one that
// counts (see LastMember). The members mean nothing unless the line is
// Valid, and are the Checker's own, valid until its next check.
func (c *Checker) Index(line []byte) (p Problem, members []Member, object bool) {
	f := finder{indexing: true, members: c.members[:0]}
	if object = isObject(line); object {
		f.search, f.lens = 1<<1, ^uint64(0)
		f.firsts = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	}
	p = c.check(line, &f)
	c.members = f.members
	return p, f.members, object
}

// LastMember returns the member of members, from Index on line, that a
// lookup of name takes: the last one of that name, escaped keys compared
// by their text.
func LastMember(line []byte, members []Member, name string) (Member, bool) {
	for k := len(members) - 1; k >= 0; k-- {
		m := &members[k]
		if !m.Escaped && m.KeyEnd-m.KeyStart != len(name) {
			continue // not the name, without a call
		}
		if m.KeyIs(line, name) {
			return *m, true
		}
	}
	return Member{}, false
}
