package peers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/tests/acpclient"
)

// acpAgent is one ACP agent the bench runs: agent-host --acp, or a
// reference adapter, with its command and environment.
type acpAgent struct {
	name string
	argv []string
	env  []string
}

// treeRSS is the resident memory of pid and its descendants, in kB.
func treeRSS(pid int) int {
	total := 0
	for _, p := range append([]int{pid}, proc.Descendants(pid)...) {
		total += statusKB(p, "VmRSS")
	}
	return total
}

// statusKB is a field of a process's /proc status, in kB.
func statusKB(pid int, field string) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

func alivePids(pids []int) []int {
	var out []int
	for _, p := range pids {
		if !gone(p) {
			out = append(out, p)
		}
	}
	return out
}

func killTree(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

func medianOf(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// acpFigures runs the measurements on one agent: session/new, the
// first chunk and the answer of text turns (turn 1, then the median of the
// rest), the tree's peak RSS during a streamed turn, the processes left
// 3 s after stdin closes, and the processes alive after ten sessions
// opened, used and closed.
func acpFigures(t *testing.T, sdk string, a acpAgent) string {
	c := acpclient.Start(t, sdk, a.env, t.TempDir(), a.argv...)
	var all []int
	defer func() { killTree(alivePids(all)) }()
	began := time.Now()
	c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	initTook := time.Since(began)
	work := t.TempDir()
	began = time.Now()
	_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	newTook := time.Since(began)
	if res.Error != nil {
		return a.name + ": session/new failed: " + res.Error.Message
	}
	s := sessionID(res)
	turn := func(prompt string) (first, whole time.Duration) {
		began := time.Now()
		tag := c.Send("session/prompt", acpclient.Prompt(s, prompt))
		for _, ev := range c.Until(func(ev acpclient.Event) bool {
			return ev.Tag == tag || (ev.Update.SessionUpdate == "agent_message_chunk" && ev.Update.Text() != "")
		}) {
			if ev.Tag == tag {
				return time.Since(began), time.Since(began)
			}
		}
		first = time.Since(began)
		c.Wait(tag)
		return first, time.Since(began)
	}
	f1, w1 := turn("SAY bench turn 1")
	var firsts, wholes []time.Duration
	for i := 2; i <= 6; i++ {
		f, w := turn(fmt.Sprintf("SAY bench turn %d", i))
		firsts, wholes = append(firsts, f), append(wholes, w)
	}
	// Peak RSS of the tree during a streamed turn (40 deltas, 2 s).
	tag := c.Send("session/prompt", acpclient.Prompt(s, "SLOW 40"))
	peak := 0
	done := make(chan struct{})
	go func() { c.Wait(tag); close(done) }()
	tick := time.NewTicker(20 * time.Millisecond)
sample:
	for {
		select {
		case <-done:
			break sample
		case <-tick.C:
			peak = max(peak, treeRSS(c.PID))
		}
	}
	tick.Stop()
	own := statusKB(c.PID, "VmHWM") // the peak of the agent's own process
	// Ten sessions opened, used and closed.
	for i := 0; i < 10; i++ {
		_, res := c.Call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
		id := sessionID(res)
		c.Call("session/prompt", acpclient.Prompt(id, "SAY short"))
		c.Call("session/close", map[string]any{"sessionId": id})
	}
	// (the first session is still open: one CLI of its own, at most.)
	afterTen := append([]int{c.PID}, proc.Descendants(c.PID)...)
	all = append([]int{c.PID}, proc.Descendants(c.PID)...)
	c.EOF()
	time.Sleep(3 * time.Second) // the measure is what is left after 3 s
	left := alivePids(all)
	return fmt.Sprintf("%-16s initialize %s, session/new %s, turn 1 first chunk %s / answer %s, turns 2-6 median %s / %s, peak tree RSS %d MB (its own process %d MB), "+
		"processes after 10 sessions closed %d, left 3 s after stdin closed %d of %d",
		a.name, ms(initTook), ms(newTook), ms(f1), ms(w1), ms(medianOf(firsts)), ms(medianOf(wholes)), peak/1024, own/1024,
		len(afterTen), len(left), len(all))
}

func sessionID(res acpclient.Event) string {
	var s struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res.Result, &s)
	return s.SessionID
}

func withoutEnv(env []string, key string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return out
}

// TestBenchACP puts agent-host --acp side by side with the reference
// adapters (tests/peers/install.sh installs them, pinned) on the same fake
// APIs, measured the way an editor drives them (measureACP), one row per
// figure with its target: make bench runs it, and counts the MISSED.
func TestBenchACP(t *testing.T) {
	needBench(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Skip("no ACP SDK in $AGENTRY_PEERS/acp")
	}
	hostBin := filepath.Join(filepath.Dir(runagentBin), "agent-host")
	adapters := filepath.Join(sdk, "node_modules")
	t.Run("claude", func(t *testing.T) {
		api := fakeAnthropic(t)
		env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "AGENT_HOST_CLAUDE_BIN="+claudeBin,
			"CLAUDE_CODE_EXECUTABLE="+claudeBin, "XDG_STATE_HOME="+t.TempDir())
		ha := acpAgent{"agent-host", []string{hostBin, "--acp", "--backend", "claude"}, env}
		ra := acpAgent{"claude-agent-acp", []string{"node", filepath.Join(adapters, "@zed-industries/claude-agent-acp/dist/index.js")}, env}
		h, r := measureACP(t, sdk, ha, "--idle-stop", "2s"), measureACP(t, sdk, ra)
		pairedTurns(t, sdk, ha, ra, &h, &r)
		acpRows("claude", "claude-agent-acp", h, r)
	})
	t.Run("codex", func(t *testing.T) {
		api := fakeOpenAI(t)
		env := append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin)
		ha := acpAgent{"agent-host", []string{hostBin, "--acp", "--backend", "codex"}, env}
		ra := acpAgent{"codex-acp", []string{filepath.Join(adapters, "@zed-industries/codex-acp-linux-x64/bin/codex-acp")}, env}
		h, r := measureACP(t, sdk, ha), measureACP(t, sdk, ra)
		pairedTurns(t, sdk, ha, ra, &h, &r)
		acpRows("codex", "codex-acp", h, r)
	})
}
