package grant

import (
	"crypto/rand"
	"fmt"
	"io"
	"strings"
)

// Describe writes the grant as a person reads it: the agent's argv, quoted
// so that it pastes into a shell, then one comment line saying where it
// runs and with what, then the codex configuration the grant imposes.
func (g *Grant) Describe(w io.Writer) {
	quoted := make([]string, len(g.Argv))
	for i, a := range g.Argv {
		quoted[i] = ShellQuote(a)
	}
	fmt.Fprintln(w, strings.Join(quoted, " "))
	where := "in the working copy"
	if g.Scratch {
		where = "in an empty directory it cannot write to"
	}
	tools := "built-in tools: " + orNone(g.BuiltinTools)
	if g.Harness == Codex {
		tools = "no shell; sandbox: read-only"
		if g.Level >= 2 {
			tools = "sandbox: workspace-write, network on"
		}
	}
	same := ""
	if g.Level == 3 {
		same = " (today the same grant as level 2)"
	}
	fmt.Fprintf(w, "# level %d%s, %s: runs %s; %s; MCP servers: %s; subagents: none; the prompt goes on stdin\n",
		g.Level, same, g.Harness, where, tools, orNone(g.MCPServers))
	for _, f := range g.Files {
		fmt.Fprintf(w, "# %s, a file of the run's own (0600), not on the argv:\n", f.Path)
		for _, l := range strings.Split(strings.TrimSpace(f.Content), "\n") {
			fmt.Fprintf(w, "#   %s\n", l)
		}
	}
	if g.CodexConfig != "" {
		fmt.Fprintf(w, "# CODEX_HOME/config.toml, over the user's provider settings:\n")
		for _, l := range strings.Split(strings.TrimSpace(g.CodexConfig), "\n") {
			fmt.Fprintf(w, "#   %s\n", l)
		}
	}
}

// DescribeTable writes the level table, one paragraph per level; services
// is Table's.
func DescribeTable(w io.Writer, services string) {
	for _, r := range Table(services) {
		fmt.Fprintf(w, "level %d: runs in %s\n", r.Level, r.Where)
		if r.SameAs != 0 {
			fmt.Fprintf(w, "  today the same grant as level %d (level %d is kept to mean more later)\n", r.SameAs, r.Level)
		}
		fmt.Fprintf(w, "  claude built-in tools: %s\n  codex sandbox: %s\n  MCP: %s; subagents: none; the user's own settings: %s\n",
			orNone(r.Claude), r.Codex, r.MCP, r.Settings)
	}
}

// NewSessionID is a fresh random (version 4) UUID, the form claude
// requires of --session-id.
func NewSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// ShellQuote quotes s for a POSIX shell, leaving it bare when it holds
// nothing a shell would read specially.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
