package ndjsontool

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
)

// Keys order as the values do, -r reverses all but a missing value, and a
// string that begins another sorts first.
func TestSortKeys(t *testing.T) {
	order := []string{`-1e400`, `-1e300`, `-9007199254740993`, `-9007199254740992`, `-2`, `-0.5`, `0`, `-0`, `0.5`, `1`, `1.0000000000000000000001`, `3`,
		`9007199254740992`, `9007199254740993`, `1e300`, `1e400`, `1e401`,
		`""`, `"a"`, `"a\u0000"`, `"ab"`, `"b"`, `"é"`, `false`, `true`, `[1]`, `[1,0]`, `{"a":1}`}
	key := func(raw string, rev bool) string {
		return string(appendSortKey(nil, value{raw: []byte(raw), ok: true}, rev))
	}
	for i := 1; i < len(order); i++ {
		a, b := key(order[i-1], false), key(order[i], false)
		if a > b || (a == b) != (order[i-1] == "0" && order[i] == "-0") {
			t.Errorf("%s should sort before %s", order[i-1], order[i])
		}
		ra, rb := key(order[i-1], true), key(order[i], true)
		if ra < rb {
			t.Errorf("reversed, %s should sort after %s", order[i-1], order[i])
		}
	}
	missing := string(appendSortKey(nil, value{}, false))
	null := key("null", false)
	for _, rev := range []bool{false, true} {
		for _, v := range order {
			if key(v, rev) >= missing || key(v, rev) >= string(appendSortKey(nil, value{}, rev)) {
				t.Errorf("%s (reversed %v) does not sort before a missing value", v, rev)
			}
		}
	}
	if null != missing {
		t.Errorf("null and missing differ")
	}
}

// Spilled runs merged give exactly the in-memory order, over many chunks
// and workers, stable; the runs' files are gone.
func TestSortSpills(t *testing.T) {
	var in strings.Builder
	type rec struct{ n, i int }
	var want []rec
	for i := 0; i < 100000; i++ {
		n := (i * 7919) % 1000
		fmt.Fprintf(&in, `{"n":%d,"i":%d,"pad":"%s"}`+"\n", n, i, strings.Repeat("x", i%50))
		want = append(want, rec{n, i})
	}
	sort.SliceStable(want, func(a, b int) bool { return want[a].n < want[b].n })
	tmp := t.TempDir()
	run := func(memory int64) string {
		var out bytes.Buffer
		st := &Stream{In: strings.NewReader(in.String()), Out: &out, Voice: testVoice{io.Discard}, Workers: 4}
		if err := Sort(context.Background(), st, SortOptions{Keys: []string{"n"}, Memory: memory, TempDir: tmp}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	mem, spilled := run(256<<20), run(1<<20)
	if mem != spilled {
		t.Fatal("spilled and in-memory orders differ")
	}
	lines := strings.Split(strings.TrimSuffix(mem, "\n"), "\n")
	for k, l := range lines {
		if !strings.HasPrefix(l, fmt.Sprintf(`{"n":%d,"i":%d,`, want[k].n, want[k].i)) {
			t.Fatalf("line %d: %s, want n %d i %d", k, l, want[k].n, want[k].i)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("runs left behind: %v", left)
	}
}
