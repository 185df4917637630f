package claude

import (
	"encoding/json"
	"strings"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// toolInput is what Claude Code's tools take that a description reads.
type toolInput struct {
	Command   json.RawMessage `json:"command"`
	FilePath  string          `json:"file_path"`
	Path      string          `json:"path"`
	Pattern   string          `json:"pattern"`
	URL       string          `json:"url"`
	Query     string          `json:"query"`
	OldString string          `json:"old_string"`
	NewString string          `json:"new_string"`
	Content   string          `json:"content"`
	Edits     []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
	Todos []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"todos"`
}

// DescribeTool says what a call of one of Claude Code's tools is: its
// title, kind and file; the edits of Edit, MultiEdit and Write; the plan
// TodoWrite sets. It reads nothing of the backend's own state.
func (*Backend) DescribeTool(name string, input json.RawMessage) host.ToolView {
	var in toolInput
	ok := json.Unmarshal(input, &in) == nil
	file := in.FilePath
	if file == "" {
		file = in.Path
	}
	v := titled(name, file, in)
	if file != "" {
		v.Paths = []string{file}
	}
	if ok {
		v.Diffs = edits(name, in)
		v.SetsPlan, v.Plan = name == "TodoWrite", todos(name, in)
	}
	return v
}

// titled is a call's title and kind, by its tool.
func titled(name, file string, in toolInput) host.ToolView {
	kind, title := host.ToolOther, name
	switch name {
	case "Bash", "BashOutput", "KillShell":
		kind = host.ToolExecute
		if c := host.CommandText(in.Command); c != "" {
			title = c
		}
	case "Read", "NotebookRead":
		kind, title = host.ToolRead, "Read "+file
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		kind, title = host.ToolEdit, name+" "+file
	case "Glob", "Grep":
		kind, title = host.ToolSearch, name+" "+in.Pattern
	case "WebFetch":
		kind, title = host.ToolFetch, "Fetch "+in.URL
	case "WebSearch":
		kind, title = host.ToolFetch, "Search the web: "+in.Query
	case "TodoWrite", "Task":
		kind = host.ToolThink
	}
	return host.ToolView{Title: strings.TrimSpace(title), Kind: kind}
}

// edits are the edits of a call of Edit, MultiEdit or Write.
func edits(name string, in toolInput) []host.Diff {
	if in.FilePath == "" {
		return nil
	}
	var out []host.Diff
	switch name {
	case "Edit":
		old := in.OldString
		out = append(out, host.Diff{Path: in.FilePath, Old: &old, New: in.NewString})
	case "MultiEdit":
		for _, e := range in.Edits {
			old := e.OldString
			out = append(out, host.Diff{Path: in.FilePath, Old: &old, New: e.NewString})
		}
	case "Write":
		out = append(out, host.Diff{Path: in.FilePath, New: in.Content})
	}
	return out
}

// todos is the plan a call of TodoWrite sets: its todos as steps, a status
// other than in_progress or completed pending.
func todos(name string, in toolInput) []protocol.PlanStep {
	if name != "TodoWrite" {
		return nil
	}
	steps := []protocol.PlanStep{}
	for _, td := range in.Todos {
		st := td.Status
		if st != protocol.PlanInProgress && st != protocol.PlanCompleted {
			st = protocol.PlanPending
		}
		steps = append(steps, protocol.PlanStep{Step: td.Content, Status: st})
	}
	return steps
}
