package peers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/tests/acpclient"
)

// The promises of agent-host-acp(7) that the claude backend keeps, each
// against the real pinned CLI behind the fake Anthropic API (issue 47).

// claudeACP runs agent-host --acp --backend claude with the flags given,
// under the official SDK's client, initialized.
func claudeACP(t *testing.T, flags ...string) (*acpclient.Client, *server) {
	t.Helper()
	need(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Fatal("no @agentclientprotocol/sdk in $AGENTRY_PEERS/acp (tests/peers/install.sh installs it) or no node")
	}
	api := fakeAnthropic(t)
	env := append(claudeEnv(t, api), "AGENT_HOST_CLAUDE_BIN="+claudeBin, "XDG_STATE_HOME="+t.TempDir())
	hostBin := filepath.Join(filepath.Dir(runagentBin), "agent-host")
	argv := append([]string{hostBin, "--acp", "--backend", "claude", "--interrupt-grace", "5s"}, flags...)
	c := acpclient.Start(t, sdk, env, t.TempDir(), argv...)
	if _, init := c.Call("initialize", map[string]any{"protocolVersion": 1}); init.Error != nil {
		t.Fatalf("initialize: %s", init.Error.Message)
	}
	return c, api
}

// newACPSession opens a session in a directory of its own.
func newACPSession(t *testing.T, c *acpclient.Client) (string, string) {
	t.Helper()
	work := t.TempDir()
	_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	id := sessionIDOf(t, res)
	return id, work
}

func sessionIDOf(t *testing.T, res acpclient.Event) string {
	t.Helper()
	if res.Error != nil {
		t.Fatalf("%s", res.Error.Message)
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res.Result, &s)
	if s.SessionID == "" {
		t.Fatalf("no sessionId in %s", res.Result)
	}
	return s.SessionID
}

// cmdlineHas: the descendants of pid whose command line holds s.
func cmdlineHas(pid int, s string) []int {
	var out []int
	for _, p := range proc.Descendants(pid) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			out = append(out, p)
		}
	}
	return out
}

// The end of input mid-turn is the editor's stop: the turn is cancelled
// (and answered), the tree is gone within 3 s, and the command the turn
// ran never gets to write its file (it would 4 s in).
func TestACPClaudeEndOfInputMidTurn(t *testing.T) {
	c, _ := claudeACP(t)
	s, work := newACPSession(t, c)
	setMode(t, c, s, "level-2")
	tag := c.Send("session/prompt", acpclient.Prompt(s,
		`CALL Bash {"command":"python3 -c 'import time; time.sleep(4.0417)' && touch late.txt","description":"wait"}`))
	if !await.Until(30*time.Second, func() bool { return len(cmdlineHas(c.PID, "time.sleep(4.0417)")) > 0 }) {
		t.Fatal("the command never started")
	}
	pids := append([]int{c.PID}, proc.Descendants(c.PID)...)
	began := time.Now()
	c.EOF()
	evs := c.Wait(tag)
	if r := acpclient.StopReason(evs[len(evs)-1]); r != "cancelled" {
		t.Errorf("the turn in flight at the end of input ended %s", r)
	}
	var left []int
	for _, pid := range pids {
		if !await.Until(3*time.Second-time.Since(began), func() bool { return gone(pid) }) {
			left = append(left, pid)
		}
	}
	if len(left) > 0 {
		t.Errorf("%d of the tree's %d processes %v left 3 s after stdin closed: %v", len(left), len(pids), pids, left)
	} else {
		t.Logf("the tree was gone %v after stdin closed", time.Since(began))
	}
	late := filepath.Join(work, "late.txt")
	if await.Until(6*time.Second-time.Since(began), func() bool { _, err := os.Stat(late); return err == nil }) {
		t.Error("the command of the turn cut short by the end of input went on to write late.txt")
	}
}
