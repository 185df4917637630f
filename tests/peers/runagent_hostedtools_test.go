package peers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --tools-url on agentry's host (here with --policy): the run's MCP
// server is given to the chat before its first turn, and its tool works;
// at level 1 Bash is still no tool.
func TestRunagentHostedToolsURL(t *testing.T) {
	need(t)
	api, mcp := fakeAnthropic(t), fakeMCP(t)
	env := claudeEnv(t, api)
	pol := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(pol, []byte("[commands]\ndeny = [\"git push*\"]\n"), 0o600)
	args := []string{"-l", "1", "--policy", pol, "--tools-url", mcp.URL + "/mcp"}
	call := `CALL mcp__tools__echo {"text":"ping from model"}`
	r := runagent(t, env, t.TempDir(), append(args, call)...)
	if strings.Contains(r.stdout, "No such tool available") {
		t.Logf("the MCP tool was not connected yet (retrying once): %s", r.stdout)
		r = runagent(t, env, t.TempDir(), append(args, call)...)
	}
	if r.code != 0 || strings.TrimSpace(r.stdout) != "TOOL_RESULT(False): echo: ping from model" {
		t.Fatalf("MCP at level 1 on the host: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	work := t.TempDir()
	r = runagent(t, env, work, append(args, `CALL Bash {"command":"echo RAN > bash_ran.txt"}`)...)
	if _, err := os.Stat(filepath.Join(work, "bash_ran.txt")); err == nil || r.code != 0 {
		t.Errorf("Bash at level 1 on the host: exit %d, ran %v\nstdout %s\nstderr %s", r.code, err == nil, r.stdout, r.stderr)
	}
}
