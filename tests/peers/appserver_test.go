package peers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/protocol"
)

// codexHost is agent-host --backend codex against the fake Responses API,
// with the HOME its processes run with (to find them by).
func codexHost(t *testing.T) (hostclient.Client, string) {
	t.Helper()
	env := append(codexEnv(t, fakeOpenAI(t)), "AGENT_HOST_CODEX_BIN="+codexBin)
	var home string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "HOME="); ok {
			home = v
		}
	}
	c, err := hostclient.Subprocess(hostclient.SubprocessOptions{Path: filepath.Join(filepath.Dir(runagentBin), "agent-host"),
		Args: []string{"--backend", "codex", "--interrupt-grace", "5s"}, Env: env, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Hello(ctx, "peers", json.RawMessage(`{"codex":{"level":1}}`)); err != nil {
		t.Fatal(err)
	}
	return c, home
}

// appServers are the codex app-server processes running with HOME home.
func appServers(home string) []int {
	var pids []int
	for _, pid := range procsWithEnv("HOME=" + home) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if strings.Contains(string(cmdline), "app-server") {
			pids = append(pids, pid)
		}
	}
	return pids
}

func firstDelta(t *testing.T, r *hostclient.Run) {
	t.Helper()
	for ev := range r.Events() {
		if ev.Type == protocol.EvTextDelta {
			return
		}
	}
	t.Fatal("the run ended before its first text delta")
}

// One app-server per chat: two turns on it keep the thread; an interrupt
// is turn/interrupt, and the chat goes on; a server killed mid-turn fails
// that run only, and the next turn resumes the thread in a new one.
func TestHostCodexAppServer(t *testing.T) {
	need(t)
	c, home := codexHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	evs, done, err := runTurn(t, c, "r1", "c1", "SAY remember EPSILON-5")
	if err != nil || done.StopReason != protocol.StopCompleted || last(evs).Text != "remember EPSILON-5" {
		t.Fatalf("turn 1: %+v %+v %v", evs, done, err)
	}
	servers := appServers(home)
	if len(servers) != 1 {
		t.Fatalf("%d app-servers for one chat", len(servers))
	}

	r, err := c.RunTurn(ctx, "r2", protocol.ChatRunParams{ChatID: "c1", Prompt: "SLOW 400"})
	if err != nil {
		t.Fatal(err)
	}
	firstDelta(t, r)
	start := time.Now()
	if ok, err := c.Interrupt(ctx, "c1", ""); !ok || err != nil {
		t.Fatalf("interrupt: %v %v", ok, err)
	}
	if done, err := r.Wait(ctx); err != nil || done.StopReason != protocol.StopInterrupted || time.Since(start) > 2*time.Second {
		t.Fatalf("interrupted: %+v %v after %v", done, err, time.Since(start))
	}
	if now := appServers(home); len(now) != 1 || now[0] != servers[0] {
		t.Errorf("the interrupt replaced the app-server: %v then %v", servers, now)
	}

	r, err = c.RunTurn(ctx, "r3", protocol.ChatRunParams{ChatID: "c1", Prompt: "SLOW 400"})
	if err != nil {
		t.Fatal(err)
	}
	firstDelta(t, r)
	syscall.Kill(servers[0], syscall.SIGKILL)
	if done, err := r.Wait(ctx); err != nil || done.StopReason != protocol.StopError {
		t.Fatalf("a dead app-server: %+v %v", done, err)
	}
	evs, done, err = runTurn(t, c, "r4", "c1", "RECALL")
	if err != nil || done.StopReason != protocol.StopCompleted || !strings.Contains(last(evs).Text, "EPSILON-5") {
		t.Fatalf("after a restart: %+v %+v %v", last(evs), done, err)
	}
	if now := appServers(home); len(now) != 1 || now[0] == servers[0] {
		t.Errorf("app-servers after the restart: %v", now)
	}
	c.Close()
	if left := procsWithEnv("HOME=" + home); len(left) > 0 {
		t.Errorf("still running after the host closed: %v", left)
	}
}

// codex's approval requests, put to the daemon: denied, allowed (the
// command then runs, as codex runs an approved command), unanswered,
// interrupted while pending.
func TestHostCodexPermissions(t *testing.T) {
	need(t)
	c, home := codexHost(t)
	ctx := context.Background()
	work := t.TempDir()
	const call = `CALL exec_command {"cmd":"echo hello > out.txt"}`
	ask := func(t *testing.T, runID string, timeoutMs int64) (*hostclient.Run, *protocol.PermissionRequest) {
		return askTurn(t, c, runID, "command", protocol.ChatRunParams{ChatID: "c1", Prompt: call, Workspace: work, Level: 2, PermissionTimeoutMs: timeoutMs})
	}
	noFile := func(t *testing.T) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(work, "out.txt")); err == nil {
			t.Error("out.txt was written")
		}
	}

	t.Run("denied", func(t *testing.T) {
		r, q := ask(t, "r1", 60000)
		if err := c.AnswerPermission(ctx, "r1", q.RequestID, hostclient.Answer{Decision: "deny"}); err != nil {
			t.Fatal(err)
		}
		evs, done := collect(t, r)
		if done.StopReason != protocol.StopCompleted || !strings.Contains(last(evs).Text, "rejected by user") {
			t.Errorf("ended %s with %q", done.StopReason, last(evs).Text)
		}
		noFile(t)
		resolution(t, r, q, "deny/daemon")
	})

	t.Run("allowed", func(t *testing.T) {
		r, q := ask(t, "r2", 60000)
		if err := c.AnswerPermission(ctx, "r2", q.RequestID, hostclient.Answer{Decision: "allow"}); err != nil {
			t.Fatal(err)
		}
		_, done := collect(t, r)
		if done.StopReason != protocol.StopCompleted {
			t.Errorf("ended %s", done.StopReason)
		}
		if b, err := os.ReadFile(filepath.Join(work, "out.txt")); err != nil || string(b) != "hello\n" {
			t.Errorf("out.txt: %q %v", b, err)
		}
		resolution(t, r, q, "allow/daemon")
	})

	t.Run("unanswered", func(t *testing.T) {
		r, q := ask(t, "r3", 1500)
		evs, done := collect(t, r)
		if done.StopReason != protocol.StopCompleted || !strings.Contains(last(evs).Text, "rejected by user") {
			t.Errorf("ended %s with %q", done.StopReason, last(evs).Text)
		}
		noFile(t)
		resolution(t, r, q, "deny/timeout")
	})

	t.Run("interrupted", func(t *testing.T) {
		r, q := ask(t, "r4", 60000)
		if ok, err := c.Interrupt(ctx, "c1", ""); !ok || err != nil {
			t.Fatalf("interrupt: %v %v", ok, err)
		}
		_, done := collect(t, r)
		if done.StopReason != protocol.StopInterrupted {
			t.Errorf("ended %s", done.StopReason)
		}
		noFile(t)
		resolution(t, r, q, "deny/interrupt")
	})

	c.Close()
	if left := procsWithEnv("HOME=" + home); len(left) > 0 {
		t.Errorf("still running after the host closed: %v", left)
	}
}

// one_shot on codex: a server of its own for each, gone after it, and no
// thread carried from one to the next.
func TestHostCodexOneShot(t *testing.T) {
	need(t)
	c, home := codexHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for i, prompt := range []string{"SAY first of two", "RECALL"} {
		r, err := c.RunOneShot(ctx, "o"+strconv.Itoa(i), protocol.OneShotParams{Prompt: prompt})
		if err != nil {
			t.Fatal(err)
		}
		evs, done, err := r.Collect(ctx)
		if err != nil || done.StopReason != protocol.StopCompleted {
			t.Fatalf("one-shot %d: %+v %v", i, done, err)
		}
		if i == 1 && last(evs).Text != "FIRST PROMPT WAS: RECALL" {
			t.Errorf("the second one-shot saw the first: %q", last(evs).Text)
		}
		if left := appServers(home); len(left) != 0 {
			t.Errorf("app-servers after one-shot %d: %v", i, left)
		}
	}
}

// The level's sandbox holds on app-server: a command that opens a socket
// fails at level 1 (read-only, no network) and works at level 2
// (workspace-write with network, the config override thread/start gets).
func TestHostCodexSandboxNetwork(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	env := append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin)
	c, err := hostclient.Subprocess(hostclient.SubprocessOptions{Path: filepath.Join(filepath.Dir(runagentBin), "agent-host"),
		Args: []string{"--backend", "codex"}, Env: env, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := c.Hello(ctx, "peers", nil); err != nil {
		t.Fatal(err)
	}
	// The fake API's own port is a listener on loopback to connect to.
	port := strings.TrimPrefix(api.URL, "http://127.0.0.1:")
	py := `python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", ` + port + `)); print(\"NET-OK\")'`
	for level, want := range map[int]bool{1: false, 2: true} {
		r, err := c.RunTurn(ctx, "r"+strconv.Itoa(level), protocol.ChatRunParams{ChatID: "c" + strconv.Itoa(level), Level: level,
			Workspace: t.TempDir(), Prompt: `CALL exec_command {"cmd":"` + py + `"}`})
		if err != nil {
			t.Fatal(err)
		}
		evs, done, err := r.Collect(ctx)
		if err != nil || done.StopReason != protocol.StopCompleted {
			t.Fatalf("level %d: %+v %v", level, done, err)
		}
		if got := strings.Contains(last(evs).Text, "NET-OK"); got != want {
			t.Errorf("level %d: network %v, want %v: %q", level, got, want, last(evs).Text)
		}
	}
}
