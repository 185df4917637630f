package claude

import (
	"encoding/json"
	"fmt"
	"testing"
)

// Claude Code's tools are described by title, kind and file.
func TestDescribeTool(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"Bash", `{"command":"ls -l"}`, "execute|ls -l|[]"},
		{"Bash", `{"command":["go","test"]}`, "execute|go test|[]"},
		{"Read", `{"file_path":"/w/a.go"}`, "read|Read /w/a.go|[/w/a.go]"},
		{"NotebookEdit", `{"path":"/w/n.ipynb"}`, "edit|NotebookEdit /w/n.ipynb|[/w/n.ipynb]"},
		{"Grep", `{"pattern":"func main"}`, "search|Grep func main|[]"},
		{"WebFetch", `{"url":"https://x.test/"}`, "fetch|Fetch https://x.test/|[]"},
		{"WebSearch", `{"query":"acp"}`, "fetch|Search the web: acp|[]"},
		{"Task", `{}`, "think|Task|[]"},
		{"mcp__svc__status", `{"path":"/w"}`, "other|mcp__svc__status|[/w]"},
		{"Weird", `not json`, "other|Weird|[]"},
	} {
		v := new(Backend).DescribeTool(c.name, json.RawMessage(c.input))
		if got := fmt.Sprintf("%s|%s|%v", v.Kind, v.Title, v.Paths); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.name, c.input, got, c.want)
		}
		if v.SetsPlan || len(v.Diffs) > 0 {
			t.Errorf("%s: a plan or diffs: %+v", c.name, v)
		}
	}
}
