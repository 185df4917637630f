package claude

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/policy"
	"github.com/tidwall/gjson"
)

// A run under a policy (Turn.AskAll) has every tool call put to Turn.Ask.
// Claude Code itself never asks for reads or read-only commands (ls,
// Grep, Glob, Read), nor for what --allowedTools or acceptEdits allow;
// but a PreToolUse hook that answers "ask" has it ask for every call,
// whatever the flags (asking on stdio: --permission-prompt-tool stdio).
// The hook is registered in the stream-json initialize request (the
// SDK's hooks) of every CLI, so that a policy's turn needs no other
// process; its callbacks come as hook_callback control requests, and
// outside a policy's turn the answer decides nothing.

// policyHook is the callback id of the PreToolUse hook.
const policyHook = "agentry-policy"

// hooks is the initialize request's hooks: one PreToolUse hook, on
// every tool.
func hooks() map[string]any {
	return map[string]any{"PreToolUse": []any{map[string]any{"hookCallbackIds": []string{policyHook}}}}
}

// hookAnswer answers a hook callback: a run under a policy has the CLI
// ask for the call; any other run leaves it to the CLI (an empty
// answer decides nothing).
func hookAnswer(askAll bool) map[string]any {
	if !askAll {
		return map[string]any{}
	}
	return map[string]any{"continue": true, "hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "permissionDecision": "ask",
		"permissionDecisionReason": "agentry checks every call against the run's policy"}}
}

// callOf is a call of one of Claude Code's tools in a policy's terms:
// Bash's command; the file Write, Edit, MultiEdit and NotebookEdit
// write; the file or directory Read, Grep and Glob read (Grep's and
// Glob's default, the working directory); the URL WebFetch fetches and
// the domains a WebSearch is kept to. Other tools (MCP tools, Task,
// TodoWrite …) are only their name. Dir is left to the caller: the
// hook's input says where the shell is (a cd carries between calls).
func callOf(tool string, input gjson.Result) policy.Call {
	c := policy.Call{Tool: tool}
	str := func(key string) []string {
		if s := input.Get(key).Str; s != "" {
			return []string{s}
		}
		return nil
	}
	switch tool {
	case "Bash":
		c.Command = input.Get("command").Str
	case "Write", "Edit", "MultiEdit":
		c.Writes = str("file_path")
	case "NotebookEdit":
		c.Writes = str("notebook_path")
	case "Read":
		c.Reads = str("file_path")
	case "Grep", "Glob":
		c.Reads = str("path")
		if c.Reads == nil {
			c.Reads = []string{"."}
		}
	case "WebFetch":
		c.Hosts = str("url")
	case "WebSearch":
		for _, d := range input.Get("allowed_domains").Array() {
			c.Hosts = append(c.Hosts, d.Str)
		}
	}
	return c
}

// allowed is what the level lets run with nobody asked, as the CLI's
// flags say it: the grant's built-in tools and its MCP servers' tools.
type allowed struct {
	tools   map[string]bool
	servers []string
}

func allowedOf(g *grant.Grant) allowed {
	a := allowed{tools: map[string]bool{}, servers: g.MCPServers}
	for _, t := range g.BuiltinTools {
		a.tools[t] = true
	}
	return a
}

// granted: the level alone allows a call of tool.
func (a allowed) granted(tool string) bool {
	if a.tools[tool] {
		return true
	}
	for _, s := range a.servers {
		if strings.HasPrefix(tool, "mcp__"+s+"__") {
			return true
		}
	}
	return false
}

// sessionGrants are the calls the daemon allowed for the session
// (allow_session), tool and input alike, for as long as the CLI lives
// (as its own session rules do). Claude Code does not ask again for
// them; a hooked CLI does, and such a call is then Ask.Granted: the
// policy is still checked, the person not asked twice.
type sessionGrants struct {
	mu    sync.Mutex
	calls map[string]bool
}

// key is a call's tool and its input, compacted.
func grantKey(tool string, input json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, input) != nil {
		b.Reset()
		b.Write(input)
	}
	return tool + "\x00" + b.String()
}

func (s *sessionGrants) add(tool string, input json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]bool{}
	}
	s.calls[grantKey(tool, input)] = true
}

func (s *sessionGrants) has(tool string, input json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[grantKey(tool, input)]
}
