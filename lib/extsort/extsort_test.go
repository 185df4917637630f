package extsort

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

type rec struct{ key, value string }

func records(n int) []rec {
	r := rand.New(rand.NewPCG(1, 2))
	rs := make([]rec, n)
	for i := range rs {
		rs[i] = rec{fmt.Sprintf("k%03d", r.IntN(500)), fmt.Sprintf("%d:%s", i, strings.Repeat("v", r.IntN(200)))}
	}
	return rs
}

func run(t *testing.T, o Options, rs []rec) []string {
	t.Helper()
	s := New(o)
	defer s.Close()
	for _, r := range rs {
		if err := s.Add([]byte(r.key), []byte(r.value)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := s.Each(func(v []byte) error { got = append(got, string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

// In memory or spilled to many runs, merged in one pass or in several,
// the order is the keys' bytes, equal keys in the order added; the runs'
// files are gone.
func TestOrderStableAcrossRuns(t *testing.T) {
	rs := records(50000)
	want := slices.Clone(rs)
	slices.SortStableFunc(want, func(a, b rec) int { return strings.Compare(a.key, b.key) })
	var wantValues []string
	for _, r := range want {
		wantValues = append(wantValues, r.value)
	}
	dir := t.TempDir()
	for _, mem := range []int64{256 << 20, 1 << 20, 64 << 10, 32 << 10} {
		s := New(Options{Memory: mem, TempDir: dir})
		for _, r := range rs {
			if err := s.Add([]byte(r.key), []byte(r.value)); err != nil {
				t.Fatal(err)
			}
		}
		if mem < 1<<20 && len(s.runs) <= s.fanIn(s.mergeBuffer()) {
			t.Errorf("memory %d: %d runs, want more than one pass merges (%d)", mem, len(s.runs), s.fanIn(s.mergeBuffer()))
		}
		var got []string
		if err := s.Each(func(v []byte) error { got = append(got, string(v)); return nil }); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if !slices.Equal(got, wantValues) {
			t.Errorf("memory %d: the order differs", mem)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("runs left behind: %v", left)
	}
}

// Top keeps the first N of the order, stably.
func TestTop(t *testing.T) {
	rs := records(5000)
	all := run(t, Options{}, rs)
	if got := run(t, Options{Top: 7}, rs); !slices.Equal(got, all[:7]) {
		t.Errorf("top 7: got %v, want %v", got, all[:7])
	}
	if got := run(t, Options{Top: 10000}, rs); !slices.Equal(got, all) {
		t.Errorf("top past the end: not everything, in order")
	}
}

// A record larger than the whole budget still sorts.
func TestRecordOverBudget(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	got := run(t, Options{Memory: 1 << 20, TempDir: t.TempDir()}, []rec{{"b", "small"}, {"a", big}, {"c", "last"}})
	if len(got) != 3 || got[0] != big || got[1] != "small" || got[2] != "last" {
		t.Errorf("got %d records, first %d bytes", len(got), len(got[0]))
	}
}

// The merge holds to the budget: a buffer per run read at once, and the
// one written, fit in it.
func TestMergeWithinBudget(t *testing.T) {
	for _, mem := range []int64{32 << 10, 1 << 20, 64 << 20, 256 << 20, 4 << 30} {
		s := New(Options{Memory: mem})
		size, fan := s.mergeBuffer(), s.fanIn(s.mergeBuffer())
		if int64(size*(fan+1)) > max(mem, int64(3*size)) || fan < 2 {
			t.Errorf("memory %d: %d runs at once through %d-byte buffers", mem, fan, size)
		}
	}
}

// Keys that differ within their first 8 bytes or only past them, with
// zero and 0xff bytes on either side of the 8th (keys of one length, as
// callers make them self-delimiting): held records order by the keys'
// bytes, whatever a key's prefix says, as spilled and merged ones do.
func TestOrderByPrefixAndRest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const bytes = "\x00\x01a\xff"
	var rs []rec
	for i := range 20000 {
		k := []byte("abcdefghijkl")
		for range 1 + r.IntN(3) { // a few bytes changed, most near the 8th
			k[min(11, max(0, 7+int(r.NormFloat64()*2)))] = bytes[r.IntN(len(bytes))]
		}
		rs = append(rs, rec{string(k), fmt.Sprint(i)})
	}
	want := slices.Clone(rs)
	slices.SortStableFunc(want, func(a, b rec) int { return strings.Compare(a.key, b.key) })
	for _, mem := range []int64{256 << 20, 64 << 10} {
		got := run(t, Options{Memory: mem, TempDir: t.TempDir()}, rs)
		for i := range want {
			if got[i] != want[i].value {
				t.Fatalf("memory %d: record %d is %s, want %s (key %q)", mem, i, got[i], want[i].value, want[i].key)
			}
		}
	}
}

// A stream a little over the budget is written to disk once: what is held
// at the end stays in memory and is merged with the run, in order, equal
// keys across the two in the order added.
func TestHeldMergedWhereItIs(t *testing.T) {
	rs := records(8000) // over what a 1 MiB budget holds (its index: 5461 records) once
	want := slices.Clone(rs)
	slices.SortStableFunc(want, func(a, b rec) int { return strings.Compare(a.key, b.key) })
	dir := t.TempDir()
	s := New(Options{Memory: 1 << 20, TempDir: dir})
	defer s.Close()
	for _, r := range rs {
		if err := s.Add([]byte(r.key), []byte(r.value)); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.runs) != 1 || len(s.held) == 0 {
		t.Fatalf("%d runs and %d held before the merge, want 1 and some", len(s.runs), len(s.held))
	}
	var got []string
	if err := s.Each(func(v []byte) error { got = append(got, string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(s.runs) != 1 {
		t.Errorf("%d runs after the merge: what was held went to disk", len(s.runs))
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i].value {
			t.Fatalf("record %d is %s, want %s (key %s)", i, got[i], want[i].value, want[i].key)
		}
	}
}

// What is held is spilled after all when the arena's pages, written full
// before the last spill and kept, the index and a buffer per run would be
// over the budget together: 16 runs' buffers of 16 KiB, with the 768 KiB
// arena of a 1 MiB budget.
func TestHeldSpilledWhenTheMergeWouldNotFit(t *testing.T) {
	s := New(Options{Memory: 1 << 20, TempDir: t.TempDir()})
	defer s.Close()
	value := strings.Repeat("v", 1000)
	added := 0
	for ; len(s.runs) < 16 || len(s.held) < 100; added++ {
		if err := s.Add([]byte(fmt.Sprintf("k%06d", (added*7919)%100000)), []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	runs, n := len(s.runs), 0
	if err := s.Each(func(v []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != added {
		t.Errorf("%d records out, %d in", n, added)
	}
	if len(s.runs) != runs+1 {
		t.Errorf("%d runs after the merge, want %d: what was held stayed in memory over the budget", len(s.runs), runs+1)
	}
}
