// Package grant decides what a headless agent may do: the permission level,
// the harness (Claude Code or Codex), and from them the exact argv,
// environment and codex configuration of the run — a pure function of
// (level, harness, options) that runagent --print-args shows without
// starting anything. It also reads what the agent said: its answer, or why
// there is none.
//
// The levels:
//
//	1  no built-in code tool exists at all (absent, not refused: codex
//	   gets no shell and the read-only sandbox); the run happens in an
//	   empty directory it cannot write to
//	2  the code tools Read, Glob, Grep, Edit, Write and Bash, in the working copy
//	3  as 2
//
// No level ever gets a subagent tool; every level loads none of the user's
// own settings and exactly one MCP server: the run's tools URL, if given.
package grant

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Harnesses.
const (
	Claude = "claude"
	Codex  = "codex"
)

// ParseHarness checks a harness name; an unknown one is an error, never a
// quiet fallback to the other harness.
func ParseHarness(name string) (string, error) {
	switch name {
	case "", Claude:
		return Claude, nil
	case Codex:
		return Codex, nil
	}
	return "", &OptionError{Option: "Harness", Value: name, Reason: fmt.Sprintf("unknown agent %q: the agents are claude and codex", name)}
}

// OptionError is an option a grant cannot be made with. Option is the
// field of Options ("Effort", "SessionID", "MaxBudgetUSD" …), or of the
// two fields whose values do not go together, the one named first; With
// names the other ("Resume", "Priced", "Level", "Harness"). Value is the
// value given, as text, where it is the point; Takes, the values the
// option takes, where it takes only some (Effort). Reason is the plain
// sentence, which names no program's flag: each face words the error for
// its reader from the fields.
type OptionError struct {
	Option string
	Value  string
	With   string
	Takes  []string
	Reason string
}

func (e *OptionError) Error() string { return e.Reason }

// CodeTools are the built-in tools levels 2 and 3 get.
func CodeTools() []string { return []string{"Read", "Glob", "Grep", "Edit", "Write", "Bash"} }

// QuestionTool is Claude Code's tool for putting questions to the user.
const QuestionTool = "AskUserQuestion"

// MCPName is the name the run's tools server has.
const MCPName = "tools"

// Options are the inputs of a grant.
type Options struct {
	Level    int
	Harness  string
	ToolsURL string // the run's MCP server, if any
	Model    string
	// SessionID starts a claude session with this UUID; Resume continues
	// a claude session or a codex thread.
	SessionID string
	Resume    string
	// Program overrides the harness's binary name (tests use fakes).
	Program string
	// MCPServers, when set, are the run's MCP servers by name, each with
	// its configuration as claude takes it; they replace ToolsURL (claude).
	MCPServers map[string]json.RawMessage
	// Stream starts claude in streaming mode: one user message per stdin
	// line, partial messages streamed (agent-host's claude backend).
	Stream bool
	// ServicesURL is the run's svc mcp (runagent --services), an MCP
	// server named "svc" beside the tools URL; levels 2 and 3 only.
	ServicesURL string
	// AppendSystemPrompt is added to the agent's system prompt (claude) or
	// developer instructions (codex, in its configuration file).
	AppendSystemPrompt string
	// FilesDir is a private directory the runner writes the grant's Files
	// into before the agent starts: claude's MCP configuration and system
	// prompt then go there, not on its argv, which every user of the
	// machine can read. Empty: they go on the argv.
	FilesDir string
	// Schema is a JSON Schema the answer must conform to: its compact
	// text for claude's --json-schema, its file for codex's
	// --output-schema.
	Schema, SchemaFile string
	// MaxTurns and MaxBudgetUSD are passed to claude, which enforces them;
	// codex has neither (runagent counts its tool calls itself, and it
	// reports no cost).
	MaxTurns     int
	MaxBudgetUSD float64
	// Effort is the reasoning effort: claude's --effort, codex's
	// model_reasoning_effort.
	Effort string
	// PartialMessages makes claude stream text deltas, so that a watchdog
	// or an event log sees a long answer as it comes.
	PartialMessages bool
	// Ask has the agent ask (agent-host's permissions "ask") before a
	// tool call the level does not allow: claude is offered every code
	// tool, with only the level's own allowed, and asks on its stdio.
	Ask bool
	// Questions offers claude's AskUserQuestion, and has the CLI ask on
	// its stdio (a can_use_tool control request, which needs streaming
	// input): the runner puts the questions to a person and answers with
	// their choice, or tells the agent nobody answered. The tool is
	// never allowed outright (so never answered with nothing), and the
	// level's other tools are as without it. Without Questions claude is
	// not offered the tool at all.
	Questions bool
	// AskAll has the CLI ask on its stdio for what the level does not
	// allow, with the level's own flags otherwise unchanged: the runner
	// then has every call asked by a PreToolUse hook it registers in the
	// stream-json initialize request (Claude Code never asks for reads
	// or read-only commands by itself), so that a policy sees each one.
	AskAll bool
	// NoTools takes every tool away whatever the level (a wrap-up turn):
	// claude gets no built-in tool and no MCP server (the schema's
	// StructuredOutput stays); codex, which cannot be run without its
	// shell, the read-only sandbox.
	NoTools bool
	// Priced: the caller computes codex's cost from its tokens, so a
	// budget can be kept for codex too.
	Priced bool
}

// Efforts are the reasoning efforts each harness takes.
var Efforts = map[string][]string{
	Claude: {"low", "medium", "high", "xhigh", "max"},
	Codex:  {"minimal", "low", "medium", "high", "xhigh"},
}

// ServicesName is the name the run's svc mcp has.
const ServicesName = "svc"

// Grant is everything a run is allowed, and how to start it.
type Grant struct {
	Harness string   `json:"agent"`
	Level   int      `json:"level"`
	Argv    []string `json:"argv"`
	// Scratch: run in an empty directory, not the working copy (level 1:
	// the agent can write nowhere); otherwise in the working copy.
	Scratch      bool     `json:"scratch"`
	BuiltinTools []string `json:"builtinTools"`
	// AskTools are offered too, but each call is asked for (Options.Ask).
	AskTools   []string `json:"askTools,omitempty"`
	MCPServers []string `json:"mcpServers"`
	Subagents  bool     `json:"subagents"`
	// CodexConfig is the configuration the grant itself requires of a
	// codex run; the user's provider settings are merged under it.
	CodexConfig string `json:"codexConfig,omitempty"`
	// Files are what the argv names in Options.FilesDir, for the runner to
	// write (0600) before the agent starts.
	Files []File `json:"files,omitempty"`
}

// File is one file of a grant: its path and what it holds.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// passValue appends flag and value to argv: on the argv itself, or, with a
// FilesDir, the path of a file of the grant named name that holds it, under
// fileFlag (flag itself when empty).
func (g *Grant) passValue(argv []string, o Options, flag, fileFlag, name, value string) []string {
	if o.FilesDir == "" {
		return append(argv, flag, value)
	}
	if fileFlag == "" {
		fileFlag = flag
	}
	path := filepath.Join(o.FilesDir, name)
	g.Files = append(g.Files, File{Path: path, Content: value})
	return append(argv, fileFlag, path)
}

// isUUID: s is a UUID in its 8-4-4-4-12 hex form. (By hand: a regexp
// compiled at init would cost every runagent start.)
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// For computes the grant. It starts nothing and touches no file.
func For(o Options) (*Grant, error) {
	if o.Level < 1 || o.Level > 3 {
		return nil, &OptionError{Option: "Level", Value: strconv.Itoa(o.Level), Reason: fmt.Sprintf("level %d: the levels are 1, 2 and 3", o.Level)}
	}
	h, err := ParseHarness(o.Harness)
	if err != nil {
		return nil, err
	}
	if o.SessionID != "" && o.Resume != "" {
		return nil, &OptionError{Option: "SessionID", With: "Resume", Reason: "a session id to start with and a session to resume cannot be given together"}
	}
	if err := checkLimits(o, h); err != nil {
		return nil, err
	}
	if o.ServicesURL != "" && o.Level == 1 {
		return nil, &OptionError{Option: "ServicesURL", With: "Level", Reason: "svc's tools need level 2 or 3: level 1 has no code tools, and so no servers to start"}
	}
	if o.NoTools {
		o.ToolsURL, o.MCPServers, o.ServicesURL, o.Ask, o.Questions = "", nil, "", false, false
	}
	g := &Grant{Harness: h, Level: o.Level, Scratch: o.Level == 1, BuiltinTools: []string{}, MCPServers: []string{}}
	if o.Level >= 2 && !o.NoTools {
		g.BuiltinTools = CodeTools()
	}
	if o.Ask {
		if h != Claude {
			return nil, &OptionError{Option: "Ask", With: "Harness", Value: h, Reason: "asking for permissions is for claude here; codex asks through its app-server"}
		}
		// Reads and edits as the level allows them; the rest is asked.
		// (Claude Code itself never asks for reads, nor for read-only
		// shell commands such as ls.)
		g.BuiltinTools, g.AskTools = nil, nil
		for _, tool := range CodeTools() {
			if o.Level >= 2 && tool != "Bash" {
				g.BuiltinTools = append(g.BuiltinTools, tool)
			} else {
				g.AskTools = append(g.AskTools, tool)
			}
		}
		if g.BuiltinTools == nil {
			g.BuiltinTools = []string{}
		}
	}
	if o.Questions && h != Claude {
		return nil, &OptionError{Option: "Questions", With: "Harness", Value: h, Reason: "questions are for claude here; codex asks through its app-server"}
	}
	if o.AskAll && h != Claude {
		return nil, &OptionError{Option: "AskAll", With: "Harness", Value: h, Reason: "asking for every call is for claude here; codex asks through its app-server"}
	}
	if o.Questions {
		// Offered, never allowed: each question is asked on stdio.
		g.AskTools = append(g.AskTools, QuestionTool)
	}
	if o.ToolsURL != "" {
		g.MCPServers = []string{MCPName}
	}
	if o.MCPServers != nil {
		g.MCPServers = slices.Sorted(maps.Keys(o.MCPServers))
	}
	if o.ServicesURL != "" {
		g.MCPServers = append(g.MCPServers, ServicesName)
	}
	prog := o.Program
	if prog == "" {
		prog = h
	}
	switch h {
	case Claude:
		if o.SessionID != "" && !isUUID(o.SessionID) {
			return nil, &OptionError{Option: "SessionID", Value: o.SessionID, Reason: fmt.Sprintf("session id %q is not a UUID, which claude requires", o.SessionID)}
		}
		g.Argv = claudeArgv(prog, o, g)
	case Codex:
		if o.SessionID != "" {
			return nil, &OptionError{Option: "SessionID", With: "Harness", Value: o.SessionID, Reason: "a session id is for claude; codex names its own threads (resume one instead)"}
		}
		g.Argv = codexArgv(prog, o)
		g.CodexConfig = codexConfig(o)
	}
	return g, nil
}

// checkLimits refuses what a harness cannot do.
func checkLimits(o Options, h string) error {
	switch {
	case o.MaxTurns < 0:
		return &OptionError{Option: "MaxTurns", Value: strconv.Itoa(o.MaxTurns), Reason: "the turn limit cannot be negative"}
	case o.MaxBudgetUSD < 0:
		return &OptionError{Option: "MaxBudgetUSD", Value: strconv.FormatFloat(o.MaxBudgetUSD, 'f', -1, 64), Reason: "the budget cannot be negative"}
	case o.MaxBudgetUSD > 0 && h == Codex && !o.Priced:
		return &OptionError{Option: "MaxBudgetUSD", With: "Priced", Value: strconv.FormatFloat(o.MaxBudgetUSD, 'f', -1, 64),
			Reason: "a budget needs a price for codex: codex reports no cost, so no budget can be kept without one"}
	case o.Effort != "" && !slices.Contains(Efforts[h], o.Effort):
		return &OptionError{Option: "Effort", Value: o.Effort, Takes: slices.Clone(Efforts[h]),
			Reason: fmt.Sprintf("effort %q: %s takes %s", o.Effort, h, strings.Join(Efforts[h], ", "))}
	case (o.Schema == "") != (o.SchemaFile == ""):
		return &OptionError{Option: "Schema", Reason: "a schema needs both its text and its file"}
	}
	return nil
}

func claudeArgv(prog string, o Options, g *Grant) []string {
	servers := map[string]any{}
	if o.ToolsURL != "" {
		servers[MCPName] = map[string]string{"type": "http", "url": o.ToolsURL}
	}
	if o.MCPServers != nil {
		servers = map[string]any{}
		for name, cfg := range o.MCPServers {
			servers[name] = cfg
		}
	}
	if o.ServicesURL != "" {
		servers[ServicesName] = map[string]string{"type": "http", "url": o.ServicesURL}
	}
	mcp, _ := json.Marshal(map[string]any{"mcpServers": servers})
	argv := []string{prog, "-p"}
	if o.Stream {
		argv = append(argv, "--input-format", "stream-json")
	}
	argv = append(argv, "--output-format", "stream-json", "--verbose")
	if o.Stream || o.PartialMessages {
		argv = append(argv, "--include-partial-messages")
	}
	offered := append(append([]string(nil), g.BuiltinTools...), g.AskTools...)
	if len(servers) == 0 {
		// Nothing secret: no file, so no directory for one, to make and remove
		// on every run (0.3-0.8 ms a directory made and removed on a disk-backed
		// $TMPDIR here).
		argv = append(argv, "--mcp-config", string(mcp))
	} else {
		argv = g.passValue(argv, o, "--mcp-config", "", "mcp.json", string(mcp))
	}
	argv = append(argv, "--strict-mcp-config", "--setting-sources", "", "--tools", strings.Join(offered, ","))
	if o.Ask || o.Questions || o.AskAll {
		// Not in claude --help, but it alone turns asking on (PEERS.md).
		argv = append(argv, "--permission-prompt-tool", "stdio")
	}
	// --tools decides what exists; --allowedTools what runs with nobody at
	// a keyboard. Task (subagents) is in neither, at any level.
	var allowed []string
	for _, name := range g.MCPServers {
		allowed = append(allowed, "mcp__"+name+"__*")
	}
	for _, t := range g.BuiltinTools {
		if o.Level >= 2 && !o.NoTools && (t == "Edit" || t == "Write") {
			// Not pre-approved: acceptEdits accepts an edit in the working
			// copy, and one outside it, which nobody is there to approve,
			// is refused; asking, the CLI asks agentry for each, which
			// allows one in the working copy and puts any other to the
			// daemon. Pre-approved, they wrote anywhere.
			continue
		}
		allowed = append(allowed, t)
	}
	if len(allowed) > 0 {
		argv = append(argv, "--allowedTools", strings.Join(allowed, ","))
	}
	if o.Level >= 2 && !o.Ask && !o.NoTools {
		// (Asking, the default mode: acceptEdits would also let shell
		// commands that write files in the working copy run unasked.)
		argv = append(argv, "--permission-mode", "acceptEdits")
	}
	if o.Model != "" {
		argv = append(argv, "--model", o.Model)
	}
	if o.AppendSystemPrompt != "" {
		argv = g.passValue(argv, o, "--append-system-prompt", "--append-system-prompt-file", "system-prompt.md", o.AppendSystemPrompt)
	}
	if o.Schema != "" {
		argv = append(argv, "--json-schema", o.Schema)
	}
	if o.MaxTurns > 0 {
		argv = append(argv, "--max-turns", strconv.Itoa(o.MaxTurns))
	}
	if o.MaxBudgetUSD > 0 {
		argv = append(argv, "--max-budget-usd", strconv.FormatFloat(o.MaxBudgetUSD, 'f', -1, 64))
	}
	if o.Effort != "" {
		argv = append(argv, "--effort", o.Effort)
	}
	switch {
	case o.SessionID != "":
		argv = append(argv, "--session-id", o.SessionID)
	case o.Resume != "":
		argv = append(argv, "--resume", o.Resume)
	}
	// No positional argument: the prompt goes on stdin, and flags such as
	// --allowedTools take several values.
	return argv
}

func codexArgv(prog string, o Options) []string {
	argv := []string{prog, "exec"}
	// Exec-level options go before "resume": codex rejects -s after it.
	if o.Level == 1 || o.NoTools {
		argv = append(argv, "-s", "read-only")
	} else {
		argv = append(argv, "-s", "workspace-write", "-c", "sandbox_workspace_write.network_access=true")
	}
	if o.Model != "" {
		argv = append(argv, "-m", o.Model)
	}
	if o.Effort != "" {
		argv = append(argv, "-c", "model_reasoning_effort="+strconv.Quote(o.Effort))
	}
	if o.SchemaFile != "" {
		argv = append(argv, "--output-schema", o.SchemaFile)
	}
	if o.Resume != "" {
		argv = append(argv, "resume", o.Resume, "-")
	}
	// No --ephemeral: any run may be resumed.
	return append(argv, "--json", "--skip-git-repo-check", "--ignore-rules")
}

// codexConfig is what the grant requires of codex's config.toml.
func codexConfig(o Options) string {
	var b strings.Builder
	b.WriteString("# Written by runagent for one run; the grant's keys.\n")
	if o.AppendSystemPrompt != "" {
		// In the file, not a -c on the argv: every user can read an argv.
		// A quoted Go string is a TOML basic string.
		fmt.Fprintf(&b, "developer_instructions = %s\n", strconv.Quote(o.AppendSystemPrompt))
	}
	b.WriteString("[features]\nmulti_agent = false\nplugins = false\n")
	if o.Level == 1 || o.NoTools {
		// No shell at all, as claude's level 1 has none: codex's
		// read-only sandbox alone would still let a shell read every
		// file the user can (~/.ssh, the credential in CODEX_HOME).
		b.WriteString("shell_tool = false\nunified_exec = false\nview_image = false\n")
	}
	b.WriteString("\n")
	b.WriteString("[analytics]\nenabled = false\n")
	if o.ToolsURL != "" {
		fmt.Fprintf(&b, "\n[mcp_servers.%s]\nurl = %q\ndefault_tools_approval_mode = \"approve\"\n", MCPName, o.ToolsURL)
	}
	if o.ServicesURL != "" {
		fmt.Fprintf(&b, "\n[mcp_servers.%s]\nurl = %q\ndefault_tools_approval_mode = \"approve\"\n", ServicesName, o.ServicesURL)
	}
	return b.String()
}

// Row is one line of the level table.
type Row struct {
	Level     int      `json:"level"`
	Where     string   `json:"where"`
	Claude    []string `json:"claudeTools"`
	Codex     string   `json:"codexSandbox"`
	MCP       string   `json:"mcp"`
	Subagents bool     `json:"subagents"`
	Settings  string   `json:"userSettings"`
	// SameAs is the level whose grant this one is today, if any: level 3
	// grants what level 2 does, until it means more.
	SameAs int `json:"sameAs,omitempty"`
}

// Table is the level table runagent grants prints; services is how a run
// is given svc's tools, in the face's words ("" for no way).
func Table(services string) []Row {
	var rows []Row
	for level := 1; level <= 3; level++ {
		r := Row{Level: level, Where: "the working copy", Claude: CodeTools(), Codex: "workspace-write, network on",
			MCP: "the run's tools URL only", Settings: "none loaded"}
		if level == 1 {
			r.Where, r.Claude, r.Codex = "an empty directory it cannot write to", []string{}, "read-only, no shell"
		} else if services != "" {
			r.MCP += " (and svc's, with " + services + ")"
		}
		if level == 3 {
			r.SameAs = 2
		}
		rows = append(rows, r)
	}
	return rows
}
