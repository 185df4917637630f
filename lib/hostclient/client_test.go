package hostclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
)

var agentHost string // the built agent-host binary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hostclient-")
	if err != nil {
		panic(err)
	}
	agentHost = filepath.Join(dir, "agent-host")
	if b := os.Getenv("AGENTRY_BIN"); b != "" {
		agentHost = filepath.Join(b, "agent-host")
	} else if out, err := exec.Command("go", "build", "-o", agentHost, "../../cmd/agent-host").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building agent-host: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const grace = 300 * time.Millisecond

// implementations runs f against both clients.
func implementations(t *testing.T, f func(t *testing.T, c Client)) {
	t.Run("inprocess", func(t *testing.T) {
		c := InProcess(host.Options{Backend: "echo", Version: "test", MaxLine: 1 << 20, InterruptGrace: grace, DrainTimeout: 5 * time.Second,
			Factory: func(name string, cfg json.RawMessage) (host.Backend, error) { return echo.New(cfg) }}, nil)
		defer c.Close()
		f(t, c)
	})
	t.Run("subprocess", func(t *testing.T) {
		c, err := Subprocess(SubprocessOptions{Path: agentHost, Args: []string{"--interrupt-grace", grace.String(), "--drain-timeout", "5s"}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		f(t, c)
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func hello(t *testing.T, c Client) *protocol.Ready {
	t.Helper()
	r, err := c.Hello(ctx(t), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func types(evs []protocol.AgentEvent) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Type)
	}
	return strings.Join(s, " ")
}

func TestHelloFirst(t *testing.T) {
	implementations(t, func(t *testing.T, c Client) {
		_, err := c.SessionInfo(ctx(t), "c1")
		var re *RemoteError
		if !errors.As(err, &re) || re.Code != protocol.CodeNotReady {
			t.Fatalf("before hello: %v", err)
		}
		if err := c.Ping(ctx(t)); err != nil {
			t.Fatalf("ping before hello: %v", err)
		}
		r := hello(t, c)
		if r.Protocol != 1 || r.Instance == "" || r.Backend != "echo" || r.Limits.MaxConcurrentRuns == 0 {
			t.Errorf("ready %+v", r)
		}
		if _, err := c.Hello(ctx(t), "again", nil); !errors.As(err, &re) || re.Code != protocol.CodeBadRequest {
			t.Errorf("second hello: %v", err)
		}
	})
}

func TestTurn(t *testing.T) {
	implementations(t, func(t *testing.T, c Client) {
		hello(t, c)
		run, err := c.RunTurn(ctx(t), "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "hello brave new world"})
		if err != nil {
			t.Fatal(err)
		}
		evs, done, err := run.Collect(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if got := types(evs); got != "run_started text_delta text_delta text_delta text_delta usage completed" {
			t.Errorf("events %s", got)
		}
		var text string
		for _, e := range evs {
			if e.Type == protocol.EvTextDelta {
				text += e.Text
			}
		}
		if text != "hello brave new world" || evs[len(evs)-1].Text != text {
			t.Errorf("text %q", text)
		}
		if done.StopReason != protocol.StopCompleted || done.Events != len(evs) || done.Usage == nil || done.Usage.OutputTokens != 4 {
			t.Errorf("run_done %+v", done)
		}
		info, err := c.SessionInfo(ctx(t), "c1")
		if err != nil || info == nil || info.Turns != 1 || info.SessionID == "" {
			t.Errorf("session %+v, %v", info, err)
		}
	})
}

func TestBusyAndInterrupt(t *testing.T) {
	implementations(t, func(t *testing.T, c Client) {
		hello(t, c)
		slow, err := c.RunTurn(ctx(t), "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "!slow=50ms\n" + strings.Repeat("word ", 200)})
		if err != nil {
			t.Fatal(err)
		}
		first := <-slow.Events()
		if first.Type != protocol.EvRunStarted {
			t.Fatalf("first event %s", first.Type)
		}
		busy, err := c.RunTurn(ctx(t), "r2", protocol.ChatRunParams{ChatID: "c1", Prompt: "x"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = busy.Wait(ctx(t))
		var re *RemoteError
		if !errors.As(err, &re) || re.Code != protocol.CodeBusy || !re.Retryable {
			t.Fatalf("second turn on a busy chat: %v", err)
		}
		other, _ := c.RunTurn(ctx(t), "r3", protocol.ChatRunParams{ChatID: "c2", Prompt: "other chat"})
		if d, err := other.Wait(ctx(t)); err != nil || d.StopReason != protocol.StopCompleted {
			t.Fatalf("another chat while c1 is busy: %+v %v", d, err)
		}
		if ok, err := c.Interrupt(ctx(t), "c1", ""); !ok || err != nil {
			t.Fatalf("interrupt: %v %v", ok, err)
		}
		evs, done, err := slow.Collect(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		if last.Type != protocol.EvError || last.Error.Code != protocol.CodeInterrupted || done.StopReason != protocol.StopInterrupted {
			t.Errorf("interrupted run ended %+v, %+v", last, done)
		}
		if ok, _ := c.Interrupt(ctx(t), "c1", ""); ok {
			t.Error("interrupt with nothing running said it interrupted")
		}
	})
}

// A backend that ignores the interrupt is ended by the host after the grace.
func TestInterruptLadder(t *testing.T) {
	implementations(t, func(t *testing.T, c Client) {
		hello(t, c)
		run, _ := c.RunTurn(ctx(t), "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "!hang\nnever"})
		<-run.Events()
		start := time.Now()
		if ok, err := c.Interrupt(ctx(t), "c1", "r1"); !ok || err != nil {
			t.Fatalf("interrupt: %v %v", ok, err)
		}
		done, err := run.Wait(ctx(t))
		if err != nil || done.StopReason != protocol.StopInterrupted {
			t.Fatalf("%+v %v", done, err)
		}
		if waited := time.Since(start); waited < grace {
			t.Errorf("ended after %v, before the %v grace", waited, grace)
		}
		if d, err := mustRun(t, c, "r2", "c1", "the chat works again"); err != nil || d.StopReason != protocol.StopCompleted {
			t.Errorf("next turn: %+v %v", d, err)
		}
	})
}

func mustRun(t *testing.T, c Client, runID, chat, prompt string) (*protocol.RunDone, error) {
	r, err := c.RunTurn(ctx(t), runID, protocol.ChatRunParams{ChatID: chat, Prompt: prompt})
	if err != nil {
		return nil, err
	}
	return r.Wait(ctx(t))
}

func TestBackendFailures(t *testing.T) {
	implementations(t, func(t *testing.T, c Client) {
		hello(t, c)
		for _, p := range []string{"!panic", "!error=backend_failed", "!bogus"} {
			r, _ := c.RunTurn(ctx(t), "r-"+p, protocol.ChatRunParams{ChatID: "c1", Prompt: p + "\nx"})
			evs, done, err := r.Collect(ctx(t))
			if err != nil || done.StopReason != protocol.StopError || evs[len(evs)-1].Type != protocol.EvError {
				t.Errorf("%s: %s %+v %v", p, types(evs), done, err)
			}
		}
		if d, err := mustRun(t, c, "r9", "c1", "still alive"); err != nil || d.StopReason != protocol.StopCompleted {
			t.Errorf("after failures: %+v %v", d, err)
		}
	})
}

func TestOtherRequests(t *testing.T) {
	implementations(t, func(t *testing.T, c Client) {
		hello(t, c)
		if err := c.WarmSession(ctx(t), "c1"); err != nil {
			t.Error(err)
		}
		tools, err := c.SetMCPServers(ctx(t), "c1", map[string]json.RawMessage{"tools": json.RawMessage(`{"url":"http://127.0.0.1:1/x"}`)})
		if err != nil || strings.Join(tools.Added, ",") != "tools" {
			t.Errorf("set_mcp_servers %+v %v", tools, err)
		}
		tools, err = c.SetMCPServers(ctx(t), "c1", map[string]json.RawMessage{})
		if err != nil || strings.Join(tools.Removed, ",") != "tools" {
			t.Errorf("set_mcp_servers again %+v %v", tools, err)
		}
		if _, err := c.RefreshTools(ctx(t), "c1"); err != nil {
			t.Error(err)
		}
		models, total, err := c.ListModels(ctx(t), "all")
		if err != nil || total != 1 || models[0].ID != "echo-1" {
			t.Errorf("models %+v %d %v", models, total, err)
		}
		if u, err := c.PlanUsage(ctx(t)); err != nil || u != nil {
			t.Errorf("plan usage %+v %v", u, err)
		}
		if cleared, err := c.ResetSession(ctx(t), "c1"); !cleared || err != nil {
			t.Errorf("reset %v %v", cleared, err)
		}
		if s, err := c.SessionInfo(ctx(t), "c1"); s != nil || err != nil {
			t.Errorf("after reset %+v %v", s, err)
		}
		r, _ := c.RunOneShot(ctx(t), "o1", protocol.OneShotParams{Prompt: "one shot", ContextLabel: "test"})
		if d, err := r.Wait(ctx(t)); err != nil || d.StopReason != protocol.StopCompleted {
			t.Errorf("one shot %+v %v", d, err)
		}
	})
}

// Many runs at once, over many chats, all answered and all in order.
func TestConcurrentRuns(t *testing.T) {
	implementations(t, func(t *testing.T, c Client) {
		hello(t, c)
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				prompt := fmt.Sprintf("chat %d says hello", i)
				r, err := c.RunTurn(ctx(t), fmt.Sprint("r", i), protocol.ChatRunParams{ChatID: fmt.Sprint("c", i), Prompt: prompt})
				if err != nil {
					t.Error(err)
					return
				}
				evs, done, err := r.Collect(ctx(t))
				if err != nil || done.Events != len(evs) || evs[len(evs)-1].Text != prompt {
					t.Errorf("run %d: %s %+v %v", i, types(evs), done, err)
				}
			}()
		}
		for range 20 {
			if err := c.Ping(ctx(t)); err != nil {
				t.Error(err)
			}
		}
		wg.Wait()
	})
}

func TestShutdownDrains(t *testing.T) {
	implementations(t, func(t *testing.T, c Client) {
		hello(t, c)
		run, _ := c.RunTurn(ctx(t), "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "!slow=20ms\na b c d e"})
		<-run.Events()
		if err := c.Shutdown(ctx(t)); err != nil {
			t.Fatal(err)
		}
		done, err := run.Wait(ctx(t))
		if err != nil || done.StopReason != protocol.StopCompleted {
			t.Fatalf("the run in flight was not drained: %+v %v", done, err)
		}
		if _, err := c.RunTurn(ctx(t), "r2", protocol.ChatRunParams{ChatID: "c1", Prompt: "x"}); err == nil {
			t.Error("a run started after shutdown")
		}
	})
}

// The host dies mid-turn: the run and every pending call fail at once,
// and with Restart the next call gets a fresh host, which says so.
func TestHostDies(t *testing.T) {
	var restarts []string
	c, err := Subprocess(SubprocessOptions{Path: agentHost, Restart: true, MaxBackoff: 200 * time.Millisecond,
		OnRestart: func(n int, cause error, r *protocol.Ready) { restarts = append(restarts, r.Instance) }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := hello(t, c)
	slow, _ := c.RunTurn(ctx(t), "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "!slow=1s\na b c"})
	<-slow.Events()
	dying, _ := c.RunTurn(ctx(t), "r2", protocol.ChatRunParams{ChatID: "c2", Prompt: "!exit=3\n"})
	done, err := slow.Wait(ctx(t))
	if !errors.Is(err, ErrHostDied) || done == nil || done.StopReason != protocol.StopLost {
		t.Fatalf("run in flight when the host died: %+v %v", done, err)
	}
	if _, err := dying.Wait(ctx(t)); !errors.Is(err, ErrHostDied) || !strings.Contains(err.Error(), "exited 3") {
		t.Errorf("the run that killed it: %v", err)
	}
	d, err := mustRun(t, c, "r3", "c1", "after the restart")
	if err != nil || d.StopReason != protocol.StopCompleted {
		t.Fatalf("after restart: %+v %v", d, err)
	}
	if len(restarts) != 1 || restarts[0] == first.Instance {
		t.Errorf("restarts %v (first instance %s)", restarts, first.Instance)
	}
}

// A host that stops answering is treated as dead when a ping times out.
func TestPingDeadline(t *testing.T) {
	c, err := Subprocess(SubprocessOptions{Path: agentHost})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hello(t, c)
	s := c.(*client).c.(*subprocess)
	s.mu.Lock()
	pid := s.child.PID()
	s.mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// SIGSTOP takes effect asynchronously: wait until the host is stopped.
	if !await.Until(10*time.Second, func() bool {
		in, err := proc.Stat(pid)
		return err == nil && in.State == 'T'
	}) {
		t.Fatal("the host did not stop")
	}
	pctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.Ping(pctx); !errors.Is(err, ErrHostDied) {
		t.Fatalf("ping of a stopped host: %v", err)
	}
	if _, err := c.SessionInfo(ctx(t), "c1"); !errors.Is(err, ErrHostDied) {
		t.Errorf("call after the host was declared dead: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the stopped host was not killed and reaped")
	}
}
