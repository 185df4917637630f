package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
)

// fakeappserver is a codex app-server that answers everything but ends no
// turn it is asked to interrupt: a turn whose prompt is "hang" streams one
// delta and then nothing; any other is answered with its prompt. Each
// start appends its pid to $FAKE_PIDS.
func fakeappserver() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("codex-cli 0.0.0-fake")
		return
	}
	if f, err := os.OpenFile(os.Getenv("FAKE_PIDS"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	out := json.NewEncoder(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Params struct {
				Input []struct {
					Text string `json:"text"`
				} `json:"input"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		note := func(method string, params any) { out.Encode(map[string]any{"method": method, "params": params}) }
		switch m.Method {
		case "thread/start", "thread/resume":
			out.Encode(map[string]any{"id": m.ID, "result": map[string]any{"thread": map[string]any{"id": "th-1"}}})
		case "turn/start":
			out.Encode(map[string]any{"id": m.ID, "result": map[string]any{"turn": map[string]any{"id": "tu-1", "status": "inProgress"}}})
			prompt := m.Params.Input[0].Text
			note("turn/started", map[string]any{"threadId": "th-1", "turn": map[string]any{"id": "tu-1"}})
			if prompt == "hang" {
				note("item/agentMessage/delta", map[string]any{"threadId": "th-1", "itemId": "m1", "delta": "streaming"})
				continue
			}
			note("item/completed", map[string]any{"threadId": "th-1", "item": map[string]any{"type": "agentMessage", "id": "m2", "text": prompt}})
			note("turn/completed", map[string]any{"threadId": "th-1", "turn": map[string]any{"id": "tu-1", "status": "completed"}})
		default: // initialize, turn/interrupt (ignored: answered, and nothing ends)
			out.Encode(map[string]any{"id": m.ID, "result": map[string]any{}})
		}
	}
}

// An app-server that ignores turn/interrupt is ended by the host's ladder:
// the run ends interrupted after the grace, the server is killed, and the
// chat's next turn runs on a new one.
func TestCodexAppServerIgnoringInterrupt(t *testing.T) {
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "fakeappserver")
	if err := os.Symlink(self, fake); err != nil {
		t.Fatal(err)
	}
	pids := filepath.Join(dir, "pids")
	env := append(os.Environ(), "FAKE_PIDS="+pids, "AGENT_HOST_CODEX_BIN="+fake, "OPENAI_API_KEY=fake", "CODEX_HOME="+dir, "XDG_STATE_HOME="+dir, "HOME="+dir)
	c, err := hostclient.Subprocess(hostclient.SubprocessOptions{Path: filepath.Join(binDir, "agent-host"),
		Args: []string{"--backend", "codex", "--interrupt-grace", "500ms"}, Env: env, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Hello(ctx, "tests", json.RawMessage(`{"codex":{"level":2,"workspace":"`+dir+`"}}`)); err != nil {
		t.Fatal(err)
	}
	r, err := c.RunTurn(ctx, "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range r.Events() {
		if ev.Type == protocol.EvTextDelta {
			break
		}
	}
	first := waitPid(t, pids)
	start := time.Now()
	if ok, err := c.Interrupt(ctx, "c1", ""); !ok || err != nil {
		t.Fatalf("interrupt: %v %v", ok, err)
	}
	done, err := r.Wait(ctx)
	if err != nil || done.StopReason != protocol.StopInterrupted {
		t.Fatalf("the run: %+v %v", done, err)
	}
	if d := time.Since(start); d < 400*time.Millisecond || d > 5*time.Second {
		t.Errorf("ended %v after the interrupt; the grace is 500ms", d)
	}
	if !await.Until(5*time.Second, func() bool {
		in, err := proc.Stat(first)
		return err != nil || in.State == 'Z'
	}) {
		t.Errorf("the app-server %d that ignored the interrupt is still running", first)
		syscall.Kill(first, syscall.SIGKILL)
	}
	r, err = c.RunTurn(ctx, "r2", protocol.ChatRunParams{ChatID: "c1", Prompt: "after"})
	if err != nil {
		t.Fatal(err)
	}
	evs, done, err := r.Collect(ctx)
	if err != nil || done.StopReason != protocol.StopCompleted || evs[len(evs)-1].Text != "after" {
		t.Fatalf("the next turn: %+v %+v %v", evs, done, err)
	}
	b, _ := os.ReadFile(pids)
	if n := len(strings.Fields(string(b))); n != 2 {
		t.Errorf("%d app-servers started, want 2: %q", n, b)
	}
}
