package codex

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/agentry/agentry/lib/host"
)

// DescribeTool says what a call is, by the names this backend gives
// codex's items (toolCall, rolloutTool): a command, a file change with its
// diffs, a web search; anything else (an MCP tool, mcp__SERVER__TOOL) by
// its name and the file its input names. It reads nothing of the
// backend's own state.
func (*Backend) DescribeTool(name string, input json.RawMessage) host.ToolView {
	var in struct {
		Command  json.RawMessage `json:"command"`
		FilePath string          `json:"file_path"`
		Path     string          `json:"path"`
		Query    string          `json:"query"`
	}
	_ = json.Unmarshal(input, &in)
	v := host.ToolView{Title: name, Kind: host.ToolOther}
	if file := cmp.Or(in.FilePath, in.Path); file != "" {
		v.Paths = []string{file}
	}
	switch name {
	case "command":
		v.Kind = host.ToolExecute
		if c := host.CommandText(in.Command); c != "" {
			v.Title = c
		}
	case "file_change":
		v.Kind, v.Title = host.ToolEdit, "Edit files"
		v.Paths, v.Diffs = changedFiles(input), changeDiffs(input)
	case "web_search":
		v.Kind, v.Title = host.ToolFetch, "Search the web: "+in.Query
	}
	v.Title = strings.TrimSpace(v.Title)
	return v
}

// changedFiles are the paths of a file_change call's changes.
func changedFiles(input json.RawMessage) []string {
	var in fileChanges
	_ = json.Unmarshal(input, &in)
	var paths []string
	for _, c := range in.Changes {
		if c.Path != "" {
			paths = append(paths, c.Path)
		}
	}
	return paths
}
