package acp

import (
	"encoding/json"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// describe is what a client shows of a call of tool name: the backend's
// own view of it (the face knows no CLI's tools), or its name alone.
func (a *agent) describe(name string, input json.RawMessage) host.ToolView {
	return host.DescribeTool(a.backend, name, input)
}

// kindOf is ACP's kind of tool for a view's kind; "other" for one ACP
// does not have.
func kindOf(v host.ToolView) string {
	switch v.Kind {
	case host.ToolRead, host.ToolEdit, host.ToolDelete, host.ToolMove, host.ToolSearch,
		host.ToolExecute, host.ToolThink, host.ToolFetch:
		return v.Kind
	}
	return "other"
}

// locationsOf are the files a call touches, as ACP's locations.
func locationsOf(v host.ToolView) []toolLocation {
	var locs []toolLocation
	for _, p := range v.Paths {
		locs = append(locs, toolLocation{Path: p})
	}
	return locs
}

// diffsOf are the edits a call makes, as ACP diffs, so that an editor can
// show them (and show them when it is asked about the call).
func diffsOf(v host.ToolView) []any {
	var out []any
	for _, d := range v.Diffs {
		out = append(out, diffContent{Type: "diff", Path: d.Path, OldText: d.Old, NewText: d.New})
	}
	return out
}

// planOf is the plan a call sets, whole, as ACP sends a plan.
func planOf(v host.ToolView) (planUpdate, bool) {
	if !v.SetsPlan {
		return planUpdate{}, false
	}
	return planUpdateOf(v.Plan), true
}

// planUpdateOf is a plan's steps as ACP's plan update.
func planUpdateOf(steps []protocol.PlanStep) planUpdate {
	p := planUpdate{SessionUpdate: "plan", Entries: []planEntry{}}
	for _, st := range steps {
		p.Entries = append(p.Entries, planEntry{Content: st.Step, Priority: "medium", Status: planStatus(st.Status)})
	}
	return p
}

// planStatus is ACP's status of a plan entry: in_progress, completed, or
// pending for anything else.
func planStatus(s string) string {
	if s != "in_progress" && s != "completed" {
		return "pending"
	}
	return s
}
