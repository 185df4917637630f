package acp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMCPServersShapes(t *testing.T) {
	servers := map[string]json.RawMessage{
		"fs":  json.RawMessage(`{"type":"stdio","command":"/bin/fs","args":["-v"],"env":{"B":"2","A":"1"}}`),
		"web": json.RawMessage(`{"type":"http","url":"http://h/mcp","headers":{"X":"y"}}`),
		"ev":  json.RawMessage(`{"type":"sse","url":"http://h/sse","headers":{}}`),
		"bad": json.RawMessage(`{"type":"ws","url":"ws://h"}`),
	}
	var caps agentCaps
	caps.McpCapabilities.HTTP = true
	list, errs := caps.mcpServers(servers)
	got, _ := json.Marshal(list)
	want := `[{"args":["-v"],"command":"/bin/fs","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"name":"fs"},` +
		`{"headers":[{"name":"X","value":"y"}],"name":"web","type":"http","url":"http://h/mcp"}]`
	if string(got) != want {
		t.Errorf("servers:\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(errs["ev"], "no sse MCP servers") || !strings.Contains(errs["bad"], `"ws"`) || len(errs) != 2 {
		t.Errorf("errors: %v", errs)
	}
}
