package host

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/agentry/agentry/lib/protocol"
)

// ToolDescriber is a backend that knows its agent's tools: it says what a
// call of one is, in terms a face can show (the ACP face's tool calls,
// their diffs and the plan), so that no face needs to know any CLI's tool
// names. A backend without it has its calls shown by name alone.
type ToolDescriber interface {
	// DescribeTool describes a call of tool name with input, as the
	// backend reported it in a tool_call event or a permission request.
	DescribeTool(name string, input json.RawMessage) ToolView
}

// ToolView is a tool call as a person is shown it.
type ToolView struct {
	// Title is a short line saying what the call does ("Read /w/a.go",
	// the command it runs).
	Title string
	// Kind is what sort of tool it is: one of the Tool* kinds; "" is
	// ToolOther.
	Kind string
	// Paths are the files it touches.
	Paths []string
	// Diffs are the edits it makes, in order.
	Diffs []Diff
	// SetsPlan says the call sets the agent's plan, to Plan, whole.
	SetsPlan bool
	Plan     []protocol.PlanStep
}

// Diff is one edit of a file: Old is the text replaced, nil when the call
// makes the file; New is the text in its place ("" for a file deleted).
type Diff struct {
	Path string
	Old  *string
	New  string
}

// The kinds of tool (the Agent Client Protocol's words, which a face
// maps to its own).
const (
	ToolRead    = "read"
	ToolEdit    = "edit"
	ToolDelete  = "delete"
	ToolMove    = "move"
	ToolSearch  = "search"
	ToolExecute = "execute"
	ToolThink   = "think"
	ToolFetch   = "fetch"
	ToolOther   = "other"
)

// DescribeTool is b's view of a call of tool name, or, when b does not
// describe its tools, the call by its name alone.
func DescribeTool(b Backend, name string, input json.RawMessage) ToolView {
	if d, ok := b.(ToolDescriber); ok {
		return d.DescribeTool(name, input)
	}
	return ToolView{Title: name, Kind: ToolOther}
}

// CommandText is a command given as a string or as argv.
func CommandText(raw json.RawMessage) string {
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

// ServersChanged is the refresh a backend reports when a chat's MCP
// servers go from was to now: the names added and removed, each sorted,
// and no errors yet (the backend adds its own).
func ServersChanged[V any](was, now map[string]V) *protocol.ToolRefresh {
	r := &protocol.ToolRefresh{Added: []string{}, Removed: []string{}, Errors: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if _, ok := was[name]; !ok {
			r.Added = append(r.Added, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(was)) {
		if _, ok := now[name]; !ok {
			r.Removed = append(r.Removed, name)
		}
	}
	return r
}
