package codex

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The calls this backend reports are described by title, kind and files.
func TestDescribeTool(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"command", `{"command":"ls -l","cwd":"/w"}`, "execute|ls -l|[] 0"},
		{"file_change", `{"changes":[{"path":"/w/a","kind":{"type":"add"},"diff":"x\n"},{"path":"/w/b","kind":{"type":"delete"},"diff":"y\n"}]}`, "edit|Edit files|[/w/a /w/b] 2"},
		{"web_search", `{"query":"acp"}`, "fetch|Search the web: acp|[] 0"},
		{"mcp__svc__status", `{"path":"/w"}`, "other|mcp__svc__status|[/w] 0"},
		{"apply_patch", `{"input":"*** Begin Patch"}`, "other|apply_patch|[] 0"},
	} {
		v := new(Backend).DescribeTool(c.name, json.RawMessage(c.input))
		if got := fmt.Sprintf("%s|%s|%v %d", v.Kind, v.Title, v.Paths, len(v.Diffs)); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.name, c.input, got, c.want)
		}
	}
}
