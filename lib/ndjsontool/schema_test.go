package ndjsontool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func censusOf(t *testing.T, input string, o CensusOptions) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	st := &Stream{In: strings.NewReader(input), Out: &out, Voice: testVoice{&errb}, Workers: 3}
	if err := Census(context.Background(), st, o); err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String()
}

// Memory stays bounded on input whose keys are ids: past MaxPaths, values
// are counted as dropped, not described; past MaxDistinct a path's
// distinct count is capped.
func TestCensusCaps(t *testing.T) {
	var in strings.Builder
	for i := range MaxPaths + 500 {
		fmt.Fprintf(&in, "{\"id\":%d,\"by\":{\"k%d\":1}}\n", i, i)
	}
	out, errs := censusOf(t, in.String(), CensusOptions{JSON: true})
	rows := strings.Count(out, "\n")
	if rows != MaxPaths+1 { // the line's own row besides
		t.Errorf("%d rows, want %d", rows, MaxPaths+1)
	}
	if !strings.Contains(errs, "values at paths past the first 10000 were not described") {
		t.Errorf("stderr %q", errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r censusRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Path == "id" && (r.Distinct != MaxDistinct || !r.More || len(r.Examples) != MaxExamples) {
			t.Errorf("id: %s", l)
		}
	}
}

// The census is the same whatever the chunking and the workers: each
// chunk's tree is merged in input order, so paths come first seen first.
func TestCensusOrderAcrossChunks(t *testing.T) {
	var in strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&in, "{\"a%d\":%d}\n", i%7, i)
	}
	out, _ := censusOf(t, in.String(), CensusOptions{JSON: true})
	var paths []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r censusRow
		json.Unmarshal([]byte(l), &r)
		paths = append(paths, r.Path)
		if r.Path == "a3" && (r.Count != 200000/7 || string(r.Min) != "3" || *r.Missing != 200000-200000/7) {
			t.Errorf("a3: %s", l)
		}
	}
	if got := strings.Join(paths, " "); got != " a0 a1 a2 a3 a4 a5 a6" {
		t.Errorf("paths %q", got)
	}
}

// A name given twice in an object is one value, its last member's, as
// every verb reads it: counted once, so that MISSING (and the JSON
// Schema's required) tells the lines without it. In a small object and
// in one past the size where names are looked up in a map; escaped or
// not, by their text.
func TestCensusRepeatedNames(t *testing.T) {
	var big strings.Builder
	big.WriteString(`{"n":"first"`)
	for i := range 40 {
		fmt.Fprintf(&big, `,"k%d":%d`, i, i)
	}
	big.WriteString(`,"\u006e":2}`)
	for _, first := range []string{`{"n":"first","\u006e":2}`, big.String()} {
		out, _ := censusOf(t, first+"\n{}\n", CensusOptions{JSON: true})
		var n *censusRow
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var r censusRow
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if r.Path == "n" {
				n = &r
			}
		}
		if n == nil || n.Count != 1 || n.Missing == nil || *n.Missing != 1 || n.Types["integer"] != 1 || n.Types["string"] != 0 {
			t.Errorf("%.40s…: the row of n is %+v, want count 1, missing 1, one integer", first, n)
		}
	}
}
