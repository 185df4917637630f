package claude

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// fakeClaude records its /proc/PID/cmdline (what every local user can
// read) in REC.cmdline, and for --mcp-config and --system-prompt-file the
// file's path, mode, its directory's mode and its content in REC.NAME;
// then it answers each user message, and the end of its input, with a
// result.
const fakeClaude = `#!/bin/sh
rec=%REC%
tr '\0' ' ' < /proc/$$/cmdline > "$rec.cmdline"
prev=
for a in "$@"; do
	case "$prev" in
	--mcp-config) name=mcp ;;
	--system-prompt-file) name=prompt ;;
	*) name= ;;
	esac
	if [ -n "$name" ]; then
		echo "$a" > "$rec.$name.path"
		stat -c %a "$a" "$(dirname "$a")" > "$rec.$name.modes"
		cat "$a" > "$rec.$name"
	fi
	prev=$a
done
result='{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1"}'
while IFS= read -r line; do
	case "$line" in
	*'"type":"user"'*) echo "$result" ;;
	esac
done
echo "$result"
`

func fakeBackend(t *testing.T) (*Backend, string) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	prog := filepath.Join(dir, "claude")
	if err := os.WriteFile(prog, []byte(strings.ReplaceAll(fakeClaude, "%REC%", rec)), 0o755); err != nil {
		t.Fatal(err)
	}
	config, _ := json.Marshal(map[string]any{"claude": map[string]any{"program": prog, "workspace": dir}})
	b, err := New(config, host.Env{Environ: os.Environ(), Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, rec
}

func read(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func sink() *host.Turn {
	return &host.Turn{Emit: func(protocol.AgentEvent) {}, Log: func(string, string) {}, Interrupted: make(chan struct{})}
}

// An MCP server's secret header reaches claude in a private file, never
// on its command line; the file goes with the chat.
func TestMCPConfigNotOnArgv(t *testing.T) {
	b, rec := fakeBackend(t)
	ctx := context.Background()
	servers := map[string]json.RawMessage{"svc": json.RawMessage(`{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer SECRET-TOKEN-5309"}}`)}
	if _, err := b.SetMCPServers(ctx, "c1", servers); err != nil {
		t.Fatal(err)
	}
	turn := sink()
	turn.Params = protocol.ChatRunParams{ChatID: "c1", Prompt: "hi"}
	if err := b.RunTurn(ctx, turn); err != nil {
		t.Fatal(err)
	}
	if cmdline := read(t, rec+".cmdline"); strings.Contains(cmdline, "SECRET-TOKEN-5309") || !strings.Contains(cmdline, "--mcp-config") {
		t.Errorf("claude's cmdline: %s", cmdline)
	}
	if got := read(t, rec+".mcp"); !strings.Contains(got, `"Bearer SECRET-TOKEN-5309"`) || !json.Valid([]byte(got)) {
		t.Errorf("the MCP configuration claude read: %s", got)
	}
	if modes := strings.Fields(read(t, rec+".mcp.modes")); strings.Join(modes, " ") != "600 700" {
		t.Errorf("the file's and its directory's modes: %v", modes)
	}
	path := read(t, rec+".mcp.path")
	if _, err := b.ResetSession(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("the chat's directory is left after it ended: %v", err)
	}
}

// A turn's bad reasoningEffort is refused in the protocol's words, before
// anything starts.
func TestBadEffort(t *testing.T) {
	b, rec := fakeBackend(t)
	turn := sink()
	turn.Params = protocol.ChatRunParams{ChatID: "c1", Prompt: "hi", ReasoningEffort: "minimal"}
	err := b.RunTurn(context.Background(), turn)
	var e *protocol.ErrorInfo
	if !errors.As(err, &e) || e.Code != protocol.CodeBadRequest || e.Message != `reasoningEffort "minimal": claude takes low, medium, high, xhigh, max` {
		t.Fatalf("%#v", err)
	}
	if _, err := os.Stat(rec + ".cmdline"); err == nil {
		t.Error("claude was started")
	}
}

// A one-shot's system prompt reaches claude in a private file, never on
// its command line; the file goes with the run.
func TestSystemPromptNotOnArgv(t *testing.T) {
	b, rec := fakeBackend(t)
	turn := sink()
	turn.OneShot = &protocol.OneShotParams{Prompt: "hi", SystemPrompt: "You are UNIQUE-WORD-8123."}
	if _, err := b.OneShot(context.Background(), turn); err != nil {
		t.Fatal(err)
	}
	if cmdline := read(t, rec+".cmdline"); strings.Contains(cmdline, "UNIQUE-WORD-8123") || !strings.Contains(cmdline, "--system-prompt-file") {
		t.Errorf("claude's cmdline: %s", cmdline)
	}
	if got := read(t, rec+".prompt"); got != "You are UNIQUE-WORD-8123." {
		t.Errorf("the system prompt claude read: %q", got)
	}
	if modes := read(t, rec+".prompt.modes"); strings.Join(strings.Fields(modes), " ") != "600 700" {
		t.Errorf("the file's and its directory's modes: %s", modes)
	}
	if _, err := os.Stat(filepath.Dir(read(t, rec+".prompt.path"))); !os.IsNotExist(err) {
		t.Errorf("the run's directory is left after it ended: %v", err)
	}
}
