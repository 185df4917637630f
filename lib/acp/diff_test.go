package acp

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// codex's file changes, as the pinned codex reported them for an
// apply_patch of two hunks in a.txt, an added b.txt, a deleted c.txt and
// d.txt moved to e.txt (the codex backend's file_change input: the
// fileChange item's changes), become one ACP diff per hunk or file.
func TestCodexDiffs(t *testing.T) {
	input, err := os.ReadFile("testdata/codex-file-change.json")
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	want := []any{
		diffContent{Type: "diff", Path: "/w/a.txt", OldText: s("two\nthree\nfour\n"), NewText: "two\nTHREE\nfour\n"},
		diffContent{Type: "diff", Path: "/w/a.txt", OldText: s("ten\neleven\ntwelve\n"), NewText: "ten\nELEVEN\ntwelve\n"},
		diffContent{Type: "diff", Path: "/w/b.txt", NewText: "new file\nsecond line\n"},
		diffContent{Type: "diff", Path: "/w/c.txt", OldText: s("gone\nsoon\n"), NewText: ""},
		diffContent{Type: "diff", Path: "/w/e.txt", OldText: s("move me\nplease\n"), NewText: "move me\nthanks\n"},
	}
	got := diffsOf("file_change", input)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("got %s", g)
	}
	d := loadDefs(t)
	for _, x := range got {
		b, _ := json.Marshal(x)
		if v := d.check(t, "ToolCallContent", b); v != "" {
			t.Errorf("%s: %s", b, v)
		}
	}
}

func TestHunks(t *testing.T) {
	for _, c := range []struct {
		diff string
		want []hunk
	}{
		{"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", []hunk{{"a\n", "b\n"}}},
		{"@@ -1,2 +1,2 @@\n keep\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n", []hunk{{"keep\nold", "keep\nnew"}}},
		{"@@ -3,0 +4,1 @@\n+added\n", []hunk{{"", "added\n"}}},
		{"not a diff", nil},
	} {
		if got := hunks(c.diff); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.diff, got, c.want)
		}
	}
}
