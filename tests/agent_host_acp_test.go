package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/tests/acpclient"
)

// sdk is the official ACP TypeScript SDK's directory, or the test skips.
func sdk(t *testing.T) string {
	dir := acpclient.SDK()
	if dir == "" && os.Getenv("AGENTRY_PEERS") != "" {
		t.Fatal("AGENTRY_PEERS is set (make test-peers) but its acp/ has no @agentclientprotocol/sdk, or there is no node")
	}
	if dir == "" {
		t.Skip("no @agentclientprotocol/sdk (make test-peers installs it into $AGENTRY_PEERS/acp; or set AGENTRY_ACP_SDK) or no node")
	}
	return dir
}

func startACP(t *testing.T, args ...string) *acpclient.Client {
	env := append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	return acpclient.Start(t, sdk(t), env, t.TempDir(), append([]string{filepath.Join(binDir, "agent-host"), "--acp"}, args...)...)
}

// A text turn, a tool call asked and allowed, one rejected, the mode
// changed, a cancel, and errors, all read by the official SDK.
func TestACPEchoThroughSDK(t *testing.T) {
	c := startACP(t, "--backend", "echo")
	s := c.NewSession(t.TempDir())

	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "streamed back to you"))
	if got := acpclient.Text(evs); got != "streamed back to you" || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("text turn: %q, %s", got, acpclient.StopReason(res))
	}

	evs, res = c.Call("session/prompt", acpclient.Prompt(s, "!tool=Bash\ntouch ok.txt"))
	kinds := strings.Join(acpclient.Kinds(evs), " ")
	if !strings.HasPrefix(kinds, "tool_call:pending permission tool_call_update:in_progress tool_call_update:completed") || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("allowed: %s; %s", kinds, acpclient.StopReason(res))
	}

	c.Permission("reject")
	evs, res = c.Call("session/prompt", acpclient.Prompt(s, "!tool=Bash\nrm -rf /"))
	kinds = strings.Join(acpclient.Kinds(evs), " ")
	if !strings.HasPrefix(kinds, "tool_call:pending permission tool_call_update:failed agent_message_chunk") || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("rejected: %s; %s", kinds, acpclient.StopReason(res))
	}

	_, res = c.Call("session/set_config_option", map[string]any{"sessionId": s, "configId": "mode", "value": "level-2"})
	if res.Error != nil {
		t.Fatalf("set_config_option: %s", res.Error.Message)
	}
	evs, _ = c.Call("session/prompt", acpclient.Prompt(s, "!tool=Bash\ntouch unasked.txt"))
	if kinds := strings.Join(acpclient.Kinds(evs), " "); strings.Contains(kinds, "permission") {
		t.Errorf("asked at a mode that does not ask: %s", kinds)
	}

	tag := c.Send("session/prompt", acpclient.Prompt(s, "!sleep=60s\nnever"))
	began := time.Now()
	c.Notify("session/cancel", map[string]any{"sessionId": s})
	evs = c.Wait(tag)
	if r := acpclient.StopReason(evs[len(evs)-1]); r != "cancelled" || time.Since(began) > 2*time.Second {
		t.Errorf("cancel: %s after %v", r, time.Since(began))
	}

	_, res = c.Call("no/such_method", map[string]any{})
	if res.Error == nil || res.Error.Code == nil || *res.Error.Code != -32601 {
		t.Errorf("an unknown method: %+v", res.Error)
	}
	_, res = c.Call("session/prompt", map[string]any{"sessionId": s, "prompt": []any{map[string]any{"type": "image", "data": "AA==", "mimeType": "image/png"}}})
	if res.Error == nil || !strings.Contains(res.Error.Message, "image") {
		t.Errorf("an image: %+v", res.Error)
	}
	_, res = c.Call("session/close", map[string]any{"sessionId": s})
	if res.Error != nil {
		t.Errorf("session/close: %s", res.Error.Message)
	}
	if ex := c.End(); ex.Code == nil || *ex.Code != 0 {
		t.Errorf("agent-host exited %v %v at the end of input", ex.Code, ex.Signal)
	}
}

// tree is the agent's process and its descendants now.
func tree(pid int) []int { return append([]int{pid}, proc.Descendants(pid)...) }

// leftOf reports which of pids are still alive.
func leftOf(pids []int) []int {
	var left []int
	for _, p := range pids {
		if alive(p) {
			left = append(left, p)
		}
	}
	return left
}

// execTurn starts an exec turn whose command leaves a grandchild running,
// and waits until it has.
func execTurn(t *testing.T, pidfile string, args ...string) (*acpclient.Client, string, string, []int) {
	script := `sleep 4812 & echo $! > ` + pidfile + `; echo started; wait`
	c := startACP(t, append(args, "--backend", "exec", "--", "sh", "-c", script)...)
	s := c.NewSession(t.TempDir())
	tag := c.Send("session/prompt", acpclient.Prompt(s, "go"))
	c.Until(func(ev acpclient.Event) bool { return ev.Update.SessionUpdate == "agent_message_chunk" })
	waitPid(t, pidfile)
	pids := tree(c.PID)
	if len(pids) < 3 {
		t.Fatalf("the tree is %v: want agent-host, sh and sleep", pids)
	}
	return c, s, tag, pids
}

// The end of input ends a session's whole tree: the turn in flight gets
// the drain, is cancelled, and nothing of it is left (counted).
func TestACPEndOfInputLeavesNothing(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	c, _, _, pids := execTurn(t, pidfile, "--drain-timeout", "200ms", "--interrupt-grace", "1s")
	ex := c.End()
	if ex.Code == nil || *ex.Code != 0 {
		t.Errorf("exit %v %v", ex.Code, ex.Signal)
	}
	if left := leftOf(pids); len(left) > 0 {
		t.Errorf("%d of the %d processes of the tree %v outlived the end of input: %v", len(left), len(pids), pids, left)
	}
}

// SIGTERM and SIGHUP cancel the turn at once, answer it, and end the tree.
func TestACPSignalsLeaveNothing(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			c, _, tag, pids := execTurn(t, pidfile, "--interrupt-grace", "1s")
			if err := syscall.Kill(c.PID, sig); err != nil {
				t.Fatal(err)
			}
			evs := c.Wait(tag)
			if r := acpclient.StopReason(evs[len(evs)-1]); r != "cancelled" {
				t.Errorf("the turn in flight: %s", r)
			}
			c.End()
			if left := leftOf(pids); len(left) > 0 {
				t.Errorf("%d of the %d processes %v outlived %v: %v", len(left), len(pids), pids, sig, left)
			}
		})
	}
}

// The client dying mid-turn (SIGKILL) ends the tree well within the
// drain: the turn's next update finds no reader, and that is a signal.
func TestACPClientDeathLeavesNothing(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	script := `sleep 4815 & echo $! > ` + pidfile + `; while :; do echo tick; sleep 0.1; done`
	c := startACP(t, "--drain-timeout", "60s", "--interrupt-grace", "1s", "--backend", "exec", "--", "sh", "-c", script)
	s := c.NewSession(t.TempDir())
	c.Send("session/prompt", acpclient.Prompt(s, "go"))
	c.Until(func(ev acpclient.Event) bool { return ev.Update.SessionUpdate == "agent_message_chunk" })
	waitPid(t, pidfile)
	pids := tree(c.PID)
	began := time.Now()
	c.Kill()
	for _, p := range pids {
		if !await.Until(10*time.Second, func() bool { in, err := proc.Stat(p); return err != nil || in.State == 'Z' }) {
			t.Errorf("process %d of the tree %v outlived its client by 10 s (the drain is 60 s)", p, pids)
		}
	}
	t.Logf("the tree of %d was gone %v after the client died", len(pids), time.Since(began))
}

// session/close ends that session's tree, and the connection goes on.
func TestACPCloseEndsTheSessionTree(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	c, s, tag, pids := execTurn(t, pidfile, "--interrupt-grace", "1s")
	evs, res := c.Call("session/close", map[string]any{"sessionId": s})
	if res.Error != nil {
		t.Fatalf("session/close: %s", res.Error.Message)
	}
	if left := leftOf(pids[1:]); len(left) > 0 {
		t.Errorf("the closed session's processes %v outlived it: %v", pids[1:], left)
	}
	turn := "unanswered before session/close"
	for _, ev := range evs {
		if ev.Tag == tag {
			turn = acpclient.StopReason(ev)
		}
	}
	if turn != "cancelled" {
		t.Errorf("the closed session's turn: %s", turn)
	}
	if !alive(c.PID) {
		t.Error("agent-host ended with the session")
	}
	c.End()
}

// Ten sessions opened, used and closed on one connection leave one
// process: agent-host.
func TestACPTenSessionsLeaveOneProcess(t *testing.T) {
	c := startACP(t, "--backend", "exec", "--", "sh", "-c", "sleep 4813 & echo hi")
	c.NewSession(t.TempDir())
	for i := 0; i < 10; i++ {
		_, res := c.Call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
		var s struct {
			SessionID string `json:"sessionId"`
		}
		if res.Error != nil {
			t.Fatal(res.Error.Message)
		}
		_ = json.Unmarshal(res.Result, &s)
		c.Call("session/prompt", acpclient.Prompt(s.SessionID, "x"))
		c.Call("session/close", map[string]any{"sessionId": s.SessionID})
	}
	if n := len(tree(c.PID)); n != 1 {
		t.Errorf("%d processes after ten sessions: %v", n, tree(c.PID))
	}
	c.End()
}
