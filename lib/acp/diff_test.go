package acp

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/agentry/agentry/lib/backend/codex"
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
	got := diffsOf(new(codex.Backend).DescribeTool("file_change", input))
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
