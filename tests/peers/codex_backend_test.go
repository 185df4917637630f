package peers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/backend/codex"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// codexBackend is agent-host's codex backend, in this process, on the
// pinned codex behind the fake OpenAI API: for what the ACP face asks of
// it beyond protocol v1 (fork, additional directories).
func codexBackend(t *testing.T) *codex.Backend {
	api := fakeOpenAI(t)
	env := append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin, "XDG_STATE_HOME="+t.TempDir())
	b, err := codex.New(json.RawMessage(`{"codex":{"level":2}}`), host.Env{Environ: env, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// turnOn runs one turn of chat and returns its text and its tool results.
func turnOn(t *testing.T, b *codex.Backend, chat, work, prompt string) (text string, results []protocol.AgentEvent) {
	t.Helper()
	var mu sync.Mutex
	turn := &host.Turn{RunID: chat + "-" + prompt, Params: protocol.ChatRunParams{ChatID: chat, Prompt: prompt, Level: 2, Workspace: work},
		Emit: func(ev protocol.AgentEvent) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Type {
			case protocol.EvText:
				text += ev.Text
			case protocol.EvToolResult:
				results = append(results, ev)
			}
		}, Log: func(string, string) {}, Interrupted: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := b.RunTurn(ctx, turn); err != nil {
		t.Fatalf("%s: %v", prompt, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return text, results
}

// session/fork on codex: the fork's thread has the other's history and is
// a thread of its own; the other goes on unchanged (issue 47, ACP round 2).
func TestCodexBackendFork(t *testing.T) {
	need(t)
	b := codexBackend(t)
	work := t.TempDir()
	turnOn(t, b, "a", work, "SAY first of a")
	info, err := b.SessionInfo(context.Background(), "a")
	if err != nil || info == nil || info.SessionID == "" {
		t.Fatalf("session info: %+v %v", info, err)
	}
	if err := b.ForkSession(context.Background(), "b", info.SessionID, work); err != nil {
		t.Fatal(err)
	}
	if got, _ := turnOn(t, b, "b", work, "RECALL"); got != "FIRST PROMPT WAS: SAY first of a" {
		t.Errorf("the fork recalls %q", got)
	}
	fork, _ := b.SessionInfo(context.Background(), "b")
	if fork == nil || fork.SessionID == "" || fork.SessionID == info.SessionID {
		t.Errorf("the fork's thread %+v, the other's %s", fork, info.SessionID)
	}
	if got, _ := turnOn(t, b, "a", work, "SAY still a"); got != "still a" {
		t.Errorf("the forked session said %q", got)
	}
}

// additionalDirectories on codex: writable roots of the session's thread,
// also once its thread is loaded (session/load gives them after it).
func TestCodexBackendDirectories(t *testing.T) {
	need(t)
	b := codexBackend(t)
	// Not under /tmp, which codex's workspace-write sandbox lets every
	// command write: not beside the checkout either, which CI may clone
	// there.
	work := t.TempDir()
	other, err := os.MkdirTemp("/var/tmp", "agentry-additional-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	if other, err = filepath.Abs(other); err != nil {
		t.Fatal(err)
	}
	write := `CALL exec_command {"cmd":"echo hi > ` + filepath.Join(other, "x.txt") + `"}`
	turnOn(t, b, "a", work, write)
	if _, err := os.Stat(filepath.Join(other, "x.txt")); err == nil {
		t.Fatal("a directory outside the workspace was writable before it was given")
	}
	if err := b.SetDirectories(context.Background(), "a", []string{other}); err != nil {
		t.Fatal(err)
	}
	_, results := turnOn(t, b, "a", work, write)
	if _, err := os.Stat(filepath.Join(other, "x.txt")); err != nil {
		var outs []string
		for _, r := range results {
			outs = append(outs, r.Output)
		}
		t.Errorf("the additional directory is not writable: %v (%s)", err, strings.Join(outs, " | "))
	}
}
