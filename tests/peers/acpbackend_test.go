package peers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/agentry/agentry/tests/acpclient"
)

// acpAgentPeer is an ACP agent agent-host --backend acp runs: its argv
// and environment, a prompt that has it write file in its working copy
// (asking first), and one that has it run a command that holds the turn.
type acpAgentPeer struct {
	argv  []string
	env   []string
	write string
	file  string
	hold  string
	// holding says the held command runs (its process is there).
	holding func() bool
	// unasked: the agent runs its commands without asking: at level 1
	// and ask levels its own sandbox stops the write, and the tripwire
	// ends the turn when the agent reports the command (codex-acp does
	// not report one that ends at once).
	unasked bool
}

func hostBin() string { return filepath.Join(filepath.Dir(runagentBin), "agent-host") }

// hostWithACP starts agent-host --backend acp -- argv through the
// subprocess client.
func hostWithACP(t *testing.T, p acpAgentPeer) hostclient.Client {
	t.Helper()
	c, err := hostclient.Subprocess(hostclient.SubprocessOptions{Path: hostBin(),
		Args: append([]string{"--backend", "acp", "--interrupt-grace", "3s", "--log-level", "debug", "--"}, p.argv...), Env: p.env, Dir: t.TempDir(),
		Notice: func(m protocol.Msg) {
			if l, ok := m.(*protocol.Log); ok {
				t.Logf("agent-host: %s %s", l.Level, l.Msg)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Hello(ctx, "peers", nil); err != nil {
		t.Fatal(err)
	}
	return c
}

func acpTurn(t *testing.T, c hostclient.Client, runID string, p protocol.ChatRunParams) ([]protocol.AgentEvent, *protocol.RunDone) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	r, err := c.RunTurn(ctx, runID, p)
	if err != nil {
		t.Fatal(err)
	}
	evs, done, err := r.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return evs, done
}

func kinds(evs []protocol.AgentEvent) string {
	var ks []string
	for _, ev := range evs {
		k := ev.Type
		if ev.Error != nil {
			k += ":" + ev.Error.Code + ":" + ev.Error.Message
		}
		ks = append(ks, k)
	}
	return strings.Join(ks, " ")
}

// reported: the agent reported a tool call.
func reported(evs []protocol.AgentEvent) bool {
	for _, ev := range evs {
		if ev.Type == protocol.EvToolCall {
			return true
		}
	}
	return false
}

// violated: the turn ended on the tripwire.
func violated(evs []protocol.AgentEvent) bool {
	l := last(evs)
	return l.Error != nil && l.Error.Code == "level_violated"
}

// acpBackendScenario is the tests against one agent: level 1
// stops the write, level 2 lets it happen, an ask level puts it to the
// daemon whose answer decides, and SIGTERM mid-turn leaves nothing of the
// agent's tree.
func acpBackendScenario(t *testing.T, p acpAgentPeer) {
	c := hostWithACP(t, p)
	work := t.TempDir()
	file := filepath.Join(work, p.file)
	chat := 0
	params := func(level int) protocol.ChatRunParams {
		chat++
		return protocol.ChatRunParams{ChatID: fmt.Sprint("c", chat), Prompt: p.write, Workspace: work, Level: level}
	}

	t.Run("level 1", func(t *testing.T) {
		os.Remove(file)
		evs, done := acpTurn(t, c, "r1", params(1))
		if _, err := os.Stat(file); err == nil {
			t.Errorf("%s written at level 1: %s", p.file, kinds(evs))
		}
		if p.unasked && reported(evs) && !violated(evs) {
			t.Errorf("the agent's unasked command at level 1 did not trip the wire: %s", kinds(evs))
		}
		t.Logf("level 1: %s %s", done.StopReason, kinds(evs))
		for _, ev := range evs {
			if ev.Type == protocol.EvToolCall || ev.Type == protocol.EvToolResult || ev.Type == protocol.EvText {
				t.Logf("%s %s %s %s", ev.Type, ev.Input, ev.Output, ev.Text)
			}
		}
	})
	t.Run("level 2", func(t *testing.T) {
		os.Remove(file)
		evs, done := acpTurn(t, c, "r2", params(2))
		if _, err := os.Stat(file); err != nil || done.StopReason != protocol.StopCompleted {
			t.Errorf("level 2: %s %v: %s", done.StopReason, err, kinds(evs))
			for _, ev := range evs {
				t.Logf("%s %s %s", ev.Type, ev.Input, ev.Output)
			}
		}
	})
	for _, answer := range []string{"allow", "deny"} {
		t.Run("ask "+answer, func(t *testing.T) {
			os.Remove(file)
			pp := params(2)
			pp.Permissions = protocol.PermissionsAsk
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			r, err := c.RunTurn(ctx, "r-"+answer, pp)
			if err != nil {
				t.Fatal(err)
			}
			if p.unasked {
				evs, done, err := r.Collect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if reported(evs) && (done.StopReason != protocol.StopError || !violated(evs)) {
					t.Errorf("an unasked command at an ask level: %s %s", done.StopReason, kinds(evs))
				}
				if _, err := os.Stat(file); err == nil {
					t.Errorf("%s written", p.file)
				}
				return
			}
			select {
			case q := <-r.Asks():
				if q == nil {
					evs, done, _ := r.Collect(ctx)
					t.Fatalf("ended without asking: %+v %s", done, kinds(evs))
				}
				if err := c.AnswerPermission(ctx, "r-"+answer, q.RequestID, hostclient.Answer{Decision: answer}); err != nil {
					t.Fatal(err)
				}
			case <-ctx.Done():
				t.Fatal("no permission request")
			}
			evs, done, err := r.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(file)
			if (statErr == nil) != (answer == "allow") {
				t.Errorf("%s: %s exists %v; %s %s", answer, p.file, statErr == nil, done.StopReason, kinds(evs))
			}
		})
	}
	c.Close()
	t.Run("SIGTERM mid-turn", func(t *testing.T) { acpSignal(t, p, syscall.SIGTERM) })
}

// acpSignal starts agent-host on a turn that holds, and once the held
// command runs, sends it sig: within 3 s nothing of its tree is left,
// nor the held command, whatever it had become the child of (a sandbox
// wrapper whose parent died while it spawned is orphaned: agent-host, a
// child subreaper, is handed it and ends it).
func acpSignal(t *testing.T, p acpAgentPeer, sig syscall.Signal) {
	work := t.TempDir()
	cmd := exec.Command(hostBin(), append([]string{"--backend", "acp", "--drain-timeout", "1ms", "--interrupt-grace", "1s", "--"}, p.argv...)...)
	cmd.Env, cmd.Dir = p.env, t.TempDir()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	run, _ := json.Marshal(map[string]any{"type": "run_turn", "id": "t1", "runId": "r1",
		"params": map[string]any{"chatId": "c1", "prompt": p.hold, "workspace": work, "level": 2}})
	fmt.Fprintf(stdin, "{\"type\":\"hello\",\"id\":\"h1\",\"protocol\":1}\n%s\n", run)
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var tree []int
	ok := await.Until(90*time.Second, func() bool {
		tree = proc.Descendants(cmd.Process.Pid)
		return p.holding()
	})
	if !ok {
		t.Fatalf("the held command never ran; tree %v", tree)
	}
	tree = proc.Descendants(cmd.Process.Pid)
	began := time.Now()
	_ = cmd.Process.Signal(sig)
	var left []int
	for _, pid := range tree {
		if !await.Until(3*time.Second-time.Since(began), func() bool { return gone(pid) }) {
			left = append(left, pid)
		}
	}
	if len(left) > 0 {
		t.Errorf("%d of the agent's tree of %d %v left 3 s after %v: %v", len(left), len(tree), tree, sig, left)
		killTree(left)
	}
	// The held command may have been on its way into the tree when it was
	// read (codex's sandbox wrapper names it in its own argv, before its
	// bwrap has started it): it is gone within the same 3 s.
	if !await.Until(3*time.Second-time.Since(began), func() bool { return !p.holding() }) {
		t.Error("the held command still runs")
	}
	t.Logf("%v: the tree of %d processes was gone after %v", sig, len(tree), time.Since(began))
	_ = cmd.Wait()
}

func fakeAgentPeer(t *testing.T) acpAgentPeer {
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Skip("no @agentclientprotocol/sdk in $AGENTRY_PEERS/acp")
	}
	wd, _ := os.Getwd()
	// Its held command is a sleep 300. One that ran before the peer was
	// made is something else's on the machine (another test's, going on
	// after it): only a later one is the peer's, so that a stray elsewhere
	// can neither start the test's signal early nor fail it. A sleep 300
	// this peer's own steps leave behind still counts.
	sleepers := func() map[[2]uint64]bool {
		set := map[[2]uint64]bool{}
		for _, pid := range procsWhere("cmdline", func(f []string) bool { return strings.Join(f, " ") == "sleep 300 " }) {
			if in, err := proc.Stat(pid); err == nil && in.State != 'Z' {
				set[[2]uint64{uint64(in.PID), in.Start}] = true
			}
		}
		return set
	}
	before := sleepers()
	return acpAgentPeer{
		argv: []string{"node", filepath.Join(wd, "fakeagent.mjs")}, env: append(os.Environ(), "ACP_SDK="+sdk),
		write: "RUN", file: "w", hold: "HOLD",
		holding: func() bool {
			for s := range sleepers() {
				if !before[s] {
					return true
				}
			}
			return false
		},
	}
}

// The fake agent on the official SDK: the level's edges, the tripwire and
// the cost.
func TestACPBackendFake(t *testing.T) {
	need(t)
	p := fakeAgentPeer(t)
	acpBackendScenario(t, p)

	c := hostWithACP(t, p)
	work := t.TempDir()
	t.Run("mode that asks the most, text and cost", func(t *testing.T) {
		evs, done := acpTurn(t, c, "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "RUN", Workspace: work, Level: 2})
		text := ""
		for _, ev := range evs {
			if ev.Type == protocol.EvText {
				text = ev.Text
			}
		}
		if text != "mode default; ran it all" {
			t.Errorf("said %q: %s", text, kinds(evs))
		}
		if done.Usage == nil || done.Usage.CostUSD != 0.4 {
			t.Errorf("usage %+v", done.Usage)
		}
	})
	t.Run("tripwire", func(t *testing.T) {
		evs, done := acpTurn(t, c, "r2", protocol.ChatRunParams{ChatID: "c2", Prompt: "SNEAK", Workspace: work, Level: 1})
		l := last(evs)
		if done.StopReason != protocol.StopError || l.Error == nil || l.Error.Code != "level_violated" || !strings.Contains(l.Error.Message, "Write sneaked.txt") {
			t.Errorf("an unasked edit at level 1: %s %s", done.StopReason, kinds(evs))
		}
		for _, ev := range evs {
			if ev.Type == protocol.EvTextDelta && strings.Contains(ev.Text, "unasked") {
				t.Error("what the agent said after the violation was passed on")
			}
		}
		// The next turn of the chat starts another agent.
		evs, done = acpTurn(t, c, "r3", protocol.ChatRunParams{ChatID: "c2", Prompt: "SAY again", Workspace: work, Level: 2})
		if done.StopReason != protocol.StopCompleted {
			t.Errorf("after the tripwire: %s %s", done.StopReason, kinds(evs))
		}
	})
}

func acpAdapter(t *testing.T, rel string) string {
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Skip("no ACP adapters in $AGENTRY_PEERS/acp")
	}
	return filepath.Join(sdk, "node_modules", rel)
}

// sleeping: the held command, python3 sleeping 4817 s, runs.
func sleeping() bool {
	return len(procsWhere("cmdline", func(f []string) bool { return strings.Contains(strings.Join(f, " "), "time.sleep(4817)") })) > 0
}

// claude-agent-acp (pinned), on the pinned claude, against the fake
// Anthropic API: it asks before its Bash runs, in its "default" mode.
func TestACPBackendClaude(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "CLAUDE_CODE_EXECUTABLE="+claudeBin)
	acpBackendScenario(t, acpAgentPeer{
		argv: []string{"node", acpAdapter(t, "@zed-industries/claude-agent-acp/dist/index.js")}, env: env,
		write: writeCall, file: "out.txt",
		hold:    `CALL Bash {"command":"python3 -c 'import time; time.sleep(4817)'","description":"wait"}`,
		holding: sleeping,
	})
}

// codex-acp (pinned), on its own codex, against the fake OpenAI API; its
// sandbox needs a bwrap on PATH, which the pinned codex ships.
func TestACPBackendCodex(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	bwrap := filepath.Join(filepath.Dir(filepath.Dir(codexBin)), "codex-resources")
	env := append(codexEnv(t, api), "PATH="+bwrap+":"+os.Getenv("PATH"))
	acpBackendScenario(t, acpAgentPeer{
		argv: []string{acpAdapter(t, "@zed-industries/codex-acp-linux-x64/bin/codex-acp")}, env: env,
		write:   `CALL exec_command {"cmd":"echo hello > out.txt"}`,
		file:    "out.txt",
		hold:    `CALL exec_command {"cmd":"python3 -c 'import time; time.sleep(4817)'"}`,
		holding: sleeping,
		unasked: true,
	})
}

// agent-host --acp --backend acp in front of claude-agent-acp, driven by
// the official SDK's client: the modes are agentry's levels, level 1
// stops a write before the editor is asked, and level 2 ask puts it to
// the editor, whose answer decides.
func TestACPProxyClaude(t *testing.T) {
	need(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Skip("no ACP SDK in $AGENTRY_PEERS/acp")
	}
	api := fakeAnthropic(t)
	env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "CLAUDE_CODE_EXECUTABLE="+claudeBin, "XDG_STATE_HOME="+t.TempDir())
	c := acpclient.Start(t, sdk, env, t.TempDir(), hostBin(), "--acp", "--backend", "acp", "--",
		"node", acpAdapter(t, "@zed-industries/claude-agent-acp/dist/index.js"))
	work := t.TempDir()
	_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	if res.Error != nil {
		t.Fatalf("session/new: %s", res.Error.Message)
	}
	var ns struct {
		SessionID string `json:"sessionId"`
		Modes     struct {
			AvailableModes []struct{ ID string } `json:"availableModes"`
		} `json:"modes"`
	}
	_ = json.Unmarshal(res.Result, &ns)
	var ids []string
	for _, m := range ns.Modes.AvailableModes {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, " ") != "level-1 level-1-ask level-2 level-2-ask level-3 level-3-ask" {
		t.Errorf("the modes are not agentry's levels: %v", ids)
	}
	s := ns.SessionID
	out := filepath.Join(work, "out.txt")

	t.Run("level 1 stops the write unasked", func(t *testing.T) {
		setMode(t, c, s, "level-1")
		c.Permission("allow")
		evs, _ := c.Call("session/prompt", acpclient.Prompt(s, writeCall))
		if _, err := os.Stat(out); err == nil {
			t.Errorf("out.txt written at level 1: %v", acpclient.Kinds(evs))
		}
		for _, ev := range evs {
			if ev.Event == "permission" {
				t.Error("the editor was asked at level 1")
			}
		}
	})
	for _, answer := range []string{"allow", "reject"} {
		t.Run("level 2 ask "+answer, func(t *testing.T) {
			os.Remove(out)
			setMode(t, c, s, "level-2-ask")
			c.Permission(answer)
			evs, res := c.Call("session/prompt", acpclient.Prompt(s, writeCall))
			asked := false
			for _, ev := range evs {
				asked = asked || ev.Event == "permission"
			}
			_, err := os.Stat(out)
			if !asked || (err == nil) != (answer == "allow") || acpclient.StopReason(res) != "end_turn" {
				t.Errorf("%s: asked %v, out.txt %v, %s: %v", answer, asked, err, acpclient.StopReason(res), acpclient.Kinds(evs))
			}
		})
	}
	t.Run("end of input leaves nothing", func(t *testing.T) {
		pids := append([]int{c.PID}, proc.Descendants(c.PID)...)
		c.End()
		var left []int
		for _, pid := range pids {
			if !await.Until(3*time.Second, func() bool { return gone(pid) }) {
				left = append(left, pid)
			}
		}
		if len(left) > 0 {
			t.Errorf("%d of the tree's %d processes left 3 s after stdin closed: %v", len(left), len(pids), left)
			killTree(left)
		}
	})
}

// Qwen Code (pinned), an agent that speaks ACP itself (qwen --acp), on
// the fake OpenAI API through its Responses wire (--auth-type
// openai-responses, OPENAI_BASE_URL): no adapter of a CLI agentry already
// runs.
func TestACPBackendQwen(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	env := append(os.Environ(), "HOME="+t.TempDir(), "OPENAI_API_KEY=fake-key", "OPENAI_BASE_URL="+api.URL+"/v1",
		"OPENAI_MODEL=gpt-5.5", "QWEN_CODE_NO_RELAUNCH=1")
	acpBackendScenario(t, acpAgentPeer{
		argv: []string{"node", acpAdapter(t, "@qwen-code/qwen-code/cli.js"), "--acp", "--auth-type", "openai-responses"}, env: env,
		write:   `CALL run_shell_command {"command":"echo hello > out.txt","description":"write out.txt"}`,
		file:    "out.txt",
		hold:    `CALL run_shell_command {"command":"python3 -c 'import time; time.sleep(4817)'","description":"wait"}`,
		holding: sleeping,
	})
}

// agent-host --acp --backend acp in front of the fake agent:
// session/close ends the agent's whole tree mid-turn, its terminal and
// its grandchild included, and an image goes to an agent that takes
// images.
func TestACPProxyFake(t *testing.T) {
	need(t)
	p := fakeAgentPeer(t)
	c := acpclient.Start(t, acpclient.SDK(), p.env, t.TempDir(), append([]string{hostBin(), "--acp", "--backend", "acp", "--interrupt-grace", "1s", "--"}, p.argv...)...)
	work := t.TempDir()
	_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	s := sessionID(res)

	t.Run("image", func(t *testing.T) {
		data := testPNG(t)
		evs, res := c.Call("session/prompt", map[string]any{"sessionId": s, "prompt": []any{
			map[string]any{"type": "text", "text": "SEE"},
			map[string]any{"type": "image", "mimeType": "image/png", "data": data},
		}})
		if got, want := acpclient.Text(evs), fmt.Sprintf("mode default; SEE image image/png %d", len(data)); got != want || acpclient.StopReason(res) != "end_turn" {
			t.Errorf("said %q, want %q; %s", got, want, acpclient.StopReason(res))
		}
	})
	t.Run("plan, commands and diff", func(t *testing.T) {
		// At level 1 ask the edit is put to the editor, with its diff, and
		// allowed, it may write.
		setMode(t, c, s, "level-1-ask")
		c.Permission("allow")
		evs, res := c.Call("session/prompt", acpclient.Prompt(s, "SHOW"))
		var plan, cmds, diff, askedDiff string
		for _, ev := range evs {
			switch {
			case ev.Update.SessionUpdate == "plan":
				plan = string(ev.Update.Entries)
			case ev.Update.SessionUpdate == "available_commands_update":
				cmds = string(ev.Update.Commands)
			case ev.Update.SessionUpdate == "tool_call" && ev.Update.Kind == "edit":
				diff = string(ev.Update.Content)
			case ev.Event == "permission":
				askedDiff = string(ev.Params)
			}
		}
		if !strings.Contains(plan, `"content":"read"`) || !strings.Contains(plan, `"status":"in_progress"`) {
			t.Errorf("plan %s", plan)
		}
		if !strings.Contains(cmds, `"name":"review","description":"Review the change","input":{"hint":"what to review"}`) {
			t.Errorf("commands %s", cmds)
		}
		if !strings.Contains(diff, `"type":"diff"`) || !strings.Contains(diff, `"oldText":"one\n","newText":"ONE\n"`) {
			t.Errorf("the edit's diff %s", diff)
		}
		if !strings.Contains(askedDiff, `"newText":"ONE\n"`) {
			t.Errorf("the editor was not shown the diff it was asked about: %s", askedDiff)
		}
		if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "ONE\n" || acpclient.StopReason(res) != "end_turn" {
			t.Errorf("a.txt %q, %s", b, acpclient.StopReason(res))
		}
	})
	t.Run("session/close ends the tree", func(t *testing.T) {
		setMode(t, c, s, "level-2")
		tag := c.Send("session/prompt", acpclient.Prompt(s, "HOLD"))
		c.Until(func(ev acpclient.Event) bool { return strings.Contains(ev.Update.Text(), "holding") })
		running := await.Until(10*time.Second, p.holding)
		tree := proc.Descendants(c.PID)
		if !running || len(tree) < 4 {
			t.Fatalf("the terminal's sleep runs %v; the tree is %v", running, tree)
		}
		began := time.Now()
		evs, _ := c.Call("session/close", map[string]any{"sessionId": s})
		answered := false
		for _, ev := range evs {
			answered = answered || ev.Tag == tag
		}
		if !answered {
			c.Wait(tag) // the prompt is answered after the close
		}
		var left []int
		for _, pid := range tree {
			if pid != c.PID && !await.Until(3*time.Second-time.Since(began), func() bool { return gone(pid) }) {
				left = append(left, pid)
			}
		}
		if len(left) > 0 {
			t.Errorf("%d of the tree's %d processes %v left 3 s after session/close: %v", len(left), len(tree), tree, left)
			killTree(left)
		}
	})
	c.End()
}

// SIGHUP (an SSH session gone) ends the agent's tree as SIGTERM does.
func TestACPBackendFakeSIGHUP(t *testing.T) {
	need(t)
	acpSignal(t, fakeAgentPeer(t), syscall.SIGHUP)
}

// session/load through agent-host --acp --backend acp, after a restart,
// takes the session up with claude-agent-acp's own session/load: its
// replay reaches the editor, and the next turn remembers.
func TestACPProxyClaudeLoad(t *testing.T) {
	need(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Skip("no ACP SDK in $AGENTRY_PEERS/acp")
	}
	api := fakeAnthropic(t)
	env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "CLAUDE_CODE_EXECUTABLE="+claudeBin, "XDG_STATE_HOME="+t.TempDir())
	argv := []string{hostBin(), "--acp", "--backend", "acp", "--", "node", acpAdapter(t, "@zed-industries/claude-agent-acp/dist/index.js")}
	c := acpclient.Start(t, sdk, env, t.TempDir(), argv...)
	work := t.TempDir()
	s := c.NewSession(work)
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY ACP-FIRST-ANSWER"))
	if got := acpclient.Text(evs); got != "ACP-FIRST-ANSWER" || acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("said %q, %s", got, acpclient.StopReason(res))
	}
	c.End()

	c = acpclient.Start(t, sdk, env, t.TempDir(), argv...)
	c.Call("initialize", map[string]any{"protocolVersion": 1})
	evs, res = c.Call("session/load", map[string]any{"sessionId": s, "cwd": work, "mcpServers": []any{}})
	if res.Error != nil {
		t.Fatalf("session/load: %s", res.Error.Message)
	}
	var user, said bool
	for _, ev := range evs {
		switch ev.Update.SessionUpdate {
		case "user_message_chunk":
			user = user || strings.Contains(ev.Update.Text(), "SAY ACP-FIRST-ANSWER")
		case "agent_message_chunk":
			said = said || strings.Contains(ev.Update.Text(), "ACP-FIRST-ANSWER")
		}
	}
	if !user || !said {
		t.Errorf("the replay: the prompt %v, the answer %v: %v", user, said, acpclient.Kinds(evs))
	}
	evs, res = c.Call("session/prompt", acpclient.Prompt(s, "RECALL"))
	if got := acpclient.Text(evs); !strings.HasSuffix(got, "SAY ACP-FIRST-ANSWER") {
		t.Errorf("the loaded session's next turn: %q, %s", got, acpclient.StopReason(res))
	}
	c.End()
}
