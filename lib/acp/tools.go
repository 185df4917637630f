package acp

import (
	"encoding/json"
	"strings"
)

// describe is what a client shows of a tool call: a title, ACP's kind of
// tool, and the files it touches, from the backend's tool name and input
// (Claude Code's tools; codex's items as the codex backend names them:
// command, file_change, web_search, mcp__SERVER__TOOL).
func describe(name string, input json.RawMessage) (title, kind string, locs []toolLocation) {
	var in struct {
		Command  json.RawMessage `json:"command"`
		FilePath string          `json:"file_path"`
		Path     string          `json:"path"`
		Pattern  string          `json:"pattern"`
		URL      string          `json:"url"`
		Query    string          `json:"query"`
		Changes  json.RawMessage `json:"changes"`
	}
	_ = json.Unmarshal(input, &in)
	file := in.FilePath
	if file == "" {
		file = in.Path
	}
	if file != "" {
		locs = []toolLocation{{Path: file}}
	}
	kind, title = "other", name
	switch name {
	case "Bash", "command", "BashOutput", "KillShell":
		kind = "execute"
		if c := commandText(in.Command); c != "" {
			title = c
		}
	case "Read", "NotebookRead":
		kind, title = "read", "Read "+file
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		kind, title = "edit", name+" "+file
	case "file_change":
		kind, title = "edit", "Edit files"
		locs = changedFiles(in.Changes)
	case "Glob", "Grep":
		kind, title = "search", name+" "+in.Pattern
	case "WebFetch":
		kind, title = "fetch", "Fetch "+in.URL
	case "WebSearch", "web_search":
		kind, title = "fetch", "Search the web: "+in.Query
	case "TodoWrite", "Task":
		kind = "think"
	}
	return strings.TrimSpace(title), kind, locs
}

// diffsOf are the edits a call of Claude Code's Edit, MultiEdit or Write,
// or codex's file change, makes, as ACP diffs, so that an editor can show
// them (and show them when it is asked about the call).
func diffsOf(name string, input json.RawMessage) []any {
	if name == "file_change" {
		return codexDiffs(input)
	}
	var in struct {
		FilePath  string `json:"file_path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
		Content   string `json:"content"`
		Edits     []struct {
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		} `json:"edits"`
	}
	if json.Unmarshal(input, &in) != nil || in.FilePath == "" {
		return nil
	}
	var out []any
	switch name {
	case "Edit":
		old := in.OldString
		out = append(out, diffContent{Type: "diff", Path: in.FilePath, OldText: &old, NewText: in.NewString})
	case "MultiEdit":
		for _, e := range in.Edits {
			old := e.OldString
			out = append(out, diffContent{Type: "diff", Path: in.FilePath, OldText: &old, NewText: e.NewString})
		}
	case "Write":
		out = append(out, diffContent{Type: "diff", Path: in.FilePath, NewText: in.Content})
	}
	return out
}

// planOf is the plan a call of Claude Code's TodoWrite sets, whole, as ACP
// sends a plan.
func planOf(name string, input json.RawMessage) (planUpdate, bool) {
	if name != "TodoWrite" {
		return planUpdate{}, false
	}
	var in struct {
		Todos []struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"todos"`
	}
	if json.Unmarshal(input, &in) != nil {
		return planUpdate{}, false
	}
	p := planUpdate{SessionUpdate: "plan", Entries: []planEntry{}}
	for _, td := range in.Todos {
		p.Entries = append(p.Entries, planEntry{Content: td.Content, Priority: "medium", Status: planStatus(td.Status)})
	}
	return p, true
}

// planStatus is ACP's status of a plan entry: in_progress, completed, or
// pending for anything else.
func planStatus(s string) string {
	if s != "in_progress" && s != "completed" {
		return "pending"
	}
	return s
}

// commandText is a command given as a string or as argv.
func commandText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var argv []string
	if json.Unmarshal(raw, &argv) == nil {
		return strings.Join(argv, " ")
	}
	return ""
}

// changedFiles are the paths of codex's file changes.
func changedFiles(raw json.RawMessage) []toolLocation {
	var changes []struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(raw, &changes)
	var locs []toolLocation
	for _, c := range changes {
		if c.Path != "" {
			locs = append(locs, toolLocation{Path: c.Path})
		}
	}
	return locs
}
