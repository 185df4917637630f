package peers

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/tests/acpclient"
)

// acpPeer is what an ACP test needs of a real CLI behind agent-host --acp.
type acpPeer struct {
	backend string
	env     []string
	// run is a tool call that runs unasked at level 2; write one that
	// writes out.txt in the session's directory, and asks at level 2 ask;
	// long one that sleeps 4817 s and then writes late.txt.
	run, write, long string
}

// startACPPeer runs agent-host --acp with the peer's backend under the
// official SDK's client, in a session of its own directory.
func startACPPeer(t *testing.T, p acpPeer) (*acpclient.Client, string, string) {
	t.Helper()
	c := runACPPeer(t, p)
	work := t.TempDir()
	return c, c.NewSession(work), work
}

func runACPPeer(t *testing.T, p acpPeer) *acpclient.Client {
	t.Helper()
	need(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Fatal("no @agentclientprotocol/sdk in $AGENTRY_PEERS/acp (tests/peers/install.sh installs it) or no node")
	}
	hostBin := filepath.Join(filepath.Dir(runagentBin), "agent-host")
	return acpclient.Start(t, sdk, p.env, t.TempDir(), hostBin, "--acp", "--backend", p.backend, "--interrupt-grace", "5s")
}

func setMode(t *testing.T, c *acpclient.Client, s, mode string) {
	t.Helper()
	if _, res := c.Call("session/set_config_option", map[string]any{"sessionId": s, "configId": "mode", "value": mode}); res.Error != nil {
		t.Fatalf("mode %s: %s", mode, res.Error.Message)
	}
}

func gone(pid int) bool {
	in, err := proc.Stat(pid)
	return err != nil || in.State == 'Z'
}

// acpScenario is every test of the issue against one real CLI, on one
// connection and one session: a text turn, a tool call at level 2, a
// shell write asked and allowed then rejected at level 2 ask, a cancel
// mid-turn, level 1 stopping the write, and the end of input leaving no
// process of the tree.
func acpScenario(t *testing.T, p acpPeer) {
	c, s, work := startACPPeer(t, p)
	out := filepath.Join(work, "out.txt")

	t.Run("text", func(t *testing.T) {
		evs, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY ACP-FIRST-ANSWER"))
		if got := acpclient.Text(evs); got != "ACP-FIRST-ANSWER" || acpclient.StopReason(res) != "end_turn" {
			t.Errorf("said %q, %s; updates %v", got, acpclient.StopReason(res), acpclient.Kinds(evs))
		}
	})

	t.Run("tool call", func(t *testing.T) {
		setMode(t, c, s, "level-2")
		evs, res := c.Call("session/prompt", acpclient.Prompt(s, p.run))
		var call, done bool
		for _, ev := range evs {
			u := ev.Update
			switch {
			case u.SessionUpdate == "tool_call" && u.Kind == "execute" && strings.Contains(u.Title, "echo"):
				call = true
			case u.SessionUpdate == "tool_call_update" && u.Status == "completed" && call:
				done = true
			case ev.Event == "permission":
				t.Error("asked at level 2")
			}
		}
		if !call || !done || acpclient.StopReason(res) != "end_turn" {
			t.Errorf("tool call %v, completed %v, %s: %v", call, done, acpclient.StopReason(res), acpclient.Kinds(evs))
		}
	})

	ask := func(t *testing.T, answer string) []acpclient.Event {
		t.Helper()
		os.Remove(out)
		c.Permission(answer)
		evs, res := c.Call("session/prompt", acpclient.Prompt(s, p.write))
		kinds := strings.Join(acpclient.Kinds(evs), " ")
		if acpclient.StopReason(res) != "end_turn" {
			t.Errorf("%s: the turn ended %s: %s", answer, acpclient.StopReason(res), kinds)
		}
		call, asked := strings.Index(kinds, "tool_call"), strings.Index(kinds, "permission")
		if asked < 0 || call < 0 || call > asked {
			t.Errorf("%s: the call is not reported before it is asked about: %s", answer, kinds)
		}
		return evs
	}
	t.Run("ask allow", func(t *testing.T) {
		setMode(t, c, s, "level-2-ask")
		ask(t, "allow")
		if _, err := os.Stat(out); err != nil {
			t.Errorf("allowed, and out.txt is not there: %v", err)
		}
	})
	t.Run("ask reject", func(t *testing.T) {
		evs := ask(t, "reject")
		if _, err := os.Stat(out); err == nil {
			t.Error("rejected, and out.txt was written")
		}
		if !strings.Contains(strings.Join(acpclient.Kinds(evs), " "), "tool_call_update:failed") {
			t.Errorf("a rejected call is not failed: %v", acpclient.Kinds(evs))
		}
	})

	t.Run("cancel", func(t *testing.T) {
		tag := c.Send("session/prompt", acpclient.Prompt(s, "SLOW 400"))
		c.Until(func(ev acpclient.Event) bool { return ev.Update.SessionUpdate == "agent_message_chunk" })
		began := time.Now()
		c.Notify("session/cancel", map[string]any{"sessionId": s})
		evs := c.Wait(tag)
		took := time.Since(began)
		if r := acpclient.StopReason(evs[len(evs)-1]); r != "cancelled" || took > 2*time.Second {
			t.Errorf("cancel: %s after %v", r, took)
		}
		evs, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY AFTER-CANCEL"))
		if got := acpclient.Text(evs); got != "AFTER-CANCEL" || acpclient.StopReason(res) != "end_turn" {
			t.Errorf("the turn after a cancel said %q, %s", got, acpclient.StopReason(res))
		}
	})

	t.Run("cancel a running command", func(t *testing.T) {
		setMode(t, c, s, "level-2")
		tag := c.Send("session/prompt", acpclient.Prompt(s, p.long))
		sleeping := func() bool {
			return len(procsWhere("cmdline", func(f []string) bool { return strings.Contains(strings.Join(f, " "), "time.sleep(4817)") })) > 0
		}
		if !await.Until(30*time.Second, sleeping) {
			c.Notify("session/cancel", map[string]any{"sessionId": s})
			evs := c.Wait(tag)
			for _, ev := range evs {
				t.Logf("%s %s %s %s", ev.Event, ev.Update.SessionUpdate, ev.Update.Status, ev.Update.RawOutput)
			}
			t.Fatalf("the command never started: %v", acpclient.Kinds(evs))
		}
		began := time.Now()
		c.Notify("session/cancel", map[string]any{"sessionId": s})
		evs := c.Wait(tag)
		took := time.Since(began)
		if r := acpclient.StopReason(evs[len(evs)-1]); r != "cancelled" || took > 2*time.Second {
			t.Errorf("cancel: %s after %v", r, took)
		}
		if await.Until(3*time.Second, func() bool { return !sleeping() }) {
			t.Logf("the command was gone %v after the cancel", time.Since(began))
		} else {
			t.Error("the cancelled turn's command is still running 3 s after the cancel")
		}
		if _, err := os.Stat(filepath.Join(work, "late.txt")); err == nil {
			t.Error("the cancelled command went on to write late.txt")
		}
	})

	t.Run("level 1 stops writes", func(t *testing.T) {
		os.Remove(out)
		setMode(t, c, s, "level-1")
		c.Permission("allow")
		evs, _ := c.Call("session/prompt", acpclient.Prompt(s, p.write))
		if _, err := os.Stat(out); err == nil {
			t.Errorf("out.txt was written at level 1: %v", acpclient.Kinds(evs))
		}
		for _, ev := range evs {
			if ev.Event == "permission" {
				t.Error("asked at level 1")
			}
		}
	})

	t.Run("end of input leaves nothing", func(t *testing.T) {
		pids := append([]int{c.PID}, proc.Descendants(c.PID)...)
		if len(pids) < 2 {
			t.Fatalf("the tree is %v: no CLI under agent-host between turns", pids)
		}
		ex := c.End()
		if ex.Code == nil || *ex.Code != 0 {
			t.Errorf("agent-host exited %v %v", ex.Code, ex.Signal)
		}
		var left []int
		for _, pid := range pids {
			if !await.Until(3*time.Second, func() bool { return gone(pid) }) {
				left = append(left, pid)
			}
		}
		if len(left) > 0 {
			t.Errorf("%d of the tree's %d processes %v left 3 s after stdin closed: %v", len(left), len(pids), pids, left)
		}
	})

	t.Run("load after restart", func(t *testing.T) {
		c := runACPPeer(t, p)
		c.Call("initialize", map[string]any{"protocolVersion": 1})
		_, list := c.Call("session/list", map[string]any{"cwd": work})
		if !strings.Contains(string(list.Result), s) {
			t.Errorf("session/list: %s", list.Result)
		}
		evs, res := c.Call("session/load", map[string]any{"sessionId": s, "cwd": work, "mcpServers": []any{}})
		if res.Error != nil {
			t.Fatalf("session/load: %s", res.Error.Message)
		}
		var user, said, ran, rejected bool
		status := map[string]string{}
		title := map[string]string{}
		for _, ev := range evs {
			u := ev.Update
			switch u.SessionUpdate {
			case "user_message_chunk":
				user = user || strings.Contains(u.Text(), "SAY ACP-FIRST-ANSWER")
				if strings.Contains(u.Text(), "<system-reminder>") {
					t.Errorf("the CLI's own reminders replayed as the user's words: %q", u.Text())
				}
			case "agent_message_chunk":
				said = said || strings.Contains(u.Text(), "ACP-FIRST-ANSWER")
			case "tool_call":
				title[u.ToolCallID] = u.Title
				status[u.ToolCallID] = u.Status
			case "tool_call_update":
				status[u.ToolCallID] = u.Status
			}
		}
		writes, cut := 0, false
		for id, st := range status {
			ran = ran || (strings.Contains(title[id], "echo ran-it") && st == "completed")
			rejected = rejected || (strings.Contains(title[id], "out.txt") && st == "failed")
			cut = cut || (strings.Contains(title[id], "4817") && st == "failed")
			if strings.Contains(title[id], "out.txt") {
				writes++
			}
		}
		// Every call, as the CLI recorded it: codex's thread/resume leaves
		// out the declined one, the one cancelled as it ran and the one
		// after the mode change restarted it.
		if writes != 3 || !cut {
			t.Errorf("replay: %d of the 3 writes (allowed, rejected, at level 1), the cancelled command failed %v: %v %v", writes, cut, title, status)
		}
		if !user || !said || !ran || !rejected {
			t.Errorf("replay: user %v, answer %v, the run call completed %v, a rejected call failed %v: %v %v", user, said, ran, rejected, title, status)
		}
		c.Permission("allow")
		evs, res = c.Call("session/prompt", acpclient.Prompt(s, "RECALL"))
		// (claude puts its own reminders before the first prompt.)
		if got := acpclient.Text(evs); !strings.HasPrefix(got, "FIRST PROMPT WAS: ") || !strings.HasSuffix(got, "SAY ACP-FIRST-ANSWER") {
			t.Errorf("the loaded session's next turn: %q, %s", got, acpclient.StopReason(res))
		}
		c.End()
	})
}

func TestACPClaude(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	acpScenario(t, acpPeer{backend: "claude", env: append(claudeEnv(t, api), "AGENT_HOST_CLAUDE_BIN="+claudeBin, "XDG_STATE_HOME="+t.TempDir()),
		run:   `CALL Bash {"command":"echo ran-it","description":"say ran-it"}`,
		write: writeCall,
		long:  `CALL Bash {"command":"python3 -c 'import time; time.sleep(4817)' && touch late.txt","description":"wait"}`})
}

func TestACPCodex(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	acpScenario(t, acpPeer{backend: "codex", env: append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin),
		run:   `CALL exec_command {"cmd":"echo ran-it"}`,
		write: `CALL exec_command {"cmd":"echo hello > out.txt"}`,
		long:  `CALL exec_command {"cmd":"python3 -c 'import time; time.sleep(4817)' && touch late.txt"}`})
}

// The thought_level config option is the next turn's reasoning effort,
// as codex sends it to the model.
func TestACPCodexThoughtLevel(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	c, s, _ := startACPPeer(t, acpPeer{backend: "codex", env: append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin)})
	_, res := c.Call("session/set_config_option", map[string]any{"sessionId": s, "configId": "thought_level", "value": "low"})
	if res.Error != nil || !strings.Contains(string(res.Result), `"id":"thought_level"`) {
		t.Fatalf("set thought_level: %+v %s", res.Error, res.Result)
	}
	_, res = c.Call("session/prompt", acpclient.Prompt(s, "SAY thought"))
	if acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("turn: %s", acpclient.StopReason(res))
	}
	last := api.bodies[len(api.bodies)-1]
	if !strings.Contains(last, `"effort":"low"`) {
		_, reasoning, _ := strings.Cut(last, `"reasoning"`)
		t.Errorf("the model was not asked for low effort: %.120s", reasoning)
	}
	c.End()
}

// On claude, thought_level is the CLI's --effort: a change starts the CLI
// again with it, the session resumed, from the next turn.
func TestACPClaudeThoughtLevel(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	c, s, _ := startACPPeer(t, acpPeer{backend: "claude", env: append(claudeEnv(t, api), "AGENT_HOST_CLAUDE_BIN="+claudeBin, "XDG_STATE_HOME="+t.TempDir())})
	for i, effort := range []string{"low", "max"} {
		_, res := c.Call("session/set_config_option", map[string]any{"sessionId": s, "configId": "thought_level", "value": effort})
		if res.Error != nil || !strings.Contains(string(res.Result), `"id":"thought_level"`) {
			t.Fatalf("set thought_level %s: %+v %s", effort, res.Error, res.Result)
		}
		_, res = c.Call("session/prompt", acpclient.Prompt(s, fmt.Sprintf("SAY thought %d", i)))
		if acpclient.StopReason(res) != "end_turn" {
			t.Fatalf("turn at %s: %s", effort, acpclient.StopReason(res))
		}
		last := api.bodies[len(api.bodies)-1]
		if !strings.Contains(last, `"effort":"`+effort+`"`) {
			t.Errorf("the model was not asked for %s effort: %.300s", effort, last)
		}
		if i == 1 && !strings.Contains(last, "SAY thought 0") {
			t.Error("the CLI started again for the new effort did not resume the session")
		}
	}
	c.End()
}

// testPNG is a small real PNG, base64: what an editor attaches.
func testPNG(t *testing.T) string {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range 16 {
		img.Set(i%4, i/4, color.RGBA{R: uint8(40 * i), G: 7, B: 200, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// acpImage sends an image with a prompt, and finds its bytes in what the
// model API was sent.
func acpImage(t *testing.T, p acpPeer, api *server) {
	c, s, _ := startACPPeer(t, p)
	_, init := c.Call("initialize", map[string]any{"protocolVersion": 1})
	if !strings.Contains(string(init.Result), `"image":true`) {
		t.Errorf("initialize: %s", init.Result)
	}
	data := testPNG(t)
	evs, res := c.Call("session/prompt", map[string]any{"sessionId": s, "prompt": []any{
		map[string]any{"type": "text", "text": "SAY I-SEE-IT"},
		map[string]any{"type": "image", "mimeType": "image/png", "data": data},
	}})
	if got := acpclient.Text(evs); got != "I-SEE-IT" || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("said %q, %s", got, acpclient.StopReason(res))
	}
	api.mu.Lock()
	var found bool
	for _, b := range api.bodies {
		found = found || strings.Contains(b, data)
	}
	n := len(api.bodies)
	api.mu.Unlock()
	if !found {
		t.Errorf("none of the %d requests to the model API holds the image's bytes", n)
	}
	c.End()
}

func TestACPClaudeImage(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	acpImage(t, acpPeer{backend: "claude", env: append(claudeEnv(t, api), "AGENT_HOST_CLAUDE_BIN="+claudeBin, "XDG_STATE_HOME="+t.TempDir())}, api)
}

func TestACPCodexImage(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	acpImage(t, acpPeer{backend: "codex", env: append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin)}, api)
}

// codex's apply_patch (here through exec_command, which codex takes as a
// patch) is a tool call whose content is the change's diffs: a hunk's text
// before and after, and an added file's content.
func TestACPCodexDiff(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	c, s, work := startACPPeer(t, acpPeer{backend: "codex", env: append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin)})
	setMode(t, c, s, "level-2")
	if err := os.WriteFile(filepath.Join(work, "a.txt"), []byte("one\ntwo\nthree\nfour\nfive\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	patch := "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n two\n-three\n+THREE\n four\n*** Add File: b.txt\n+new file\n*** End Patch\nEOF\n"
	cmd, _ := json.Marshal(map[string]string{"cmd": patch})
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "CALL exec_command "+string(cmd)))
	if acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("the turn: %s %v", acpclient.StopReason(res), acpclient.Kinds(evs))
	}
	type diff struct {
		Type    string  `json:"type"`
		Path    string  `json:"path"`
		OldText *string `json:"oldText"`
		NewText string  `json:"newText"`
	}
	var diffs []diff
	for _, ev := range evs {
		if ev.Update.SessionUpdate == "tool_call" && ev.Update.Kind == "edit" {
			_ = json.Unmarshal(ev.Update.Content, &diffs)
		}
	}
	var update, add bool
	for _, d := range diffs {
		switch {
		case d.Type == "diff" && d.Path == filepath.Join(work, "a.txt") && d.OldText != nil:
			update = *d.OldText == "two\nthree\nfour\n" && d.NewText == "two\nTHREE\nfour\n"
		case d.Type == "diff" && d.Path == filepath.Join(work, "b.txt"):
			add = d.OldText == nil && d.NewText == "new file\n"
		}
	}
	if !update || !add {
		t.Errorf("the edit's diffs (update %v, add %v): %+v", update, add, diffs)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "one\ntwo\nTHREE\nfour\nfive\n" {
		t.Errorf("a.txt is %q", b)
	}
	c.End()
}

// With codex's plan tool on (its config.toml's [tools.update_plan]), the
// model's update_plan is a plan update, whole, in ACP's statuses, and
// session/load after a restart replays it.
func TestACPCodexPlan(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	env := codexEnv(t, api)
	for _, e := range env {
		if home, ok := strings.CutPrefix(e, "CODEX_HOME="); ok {
			f, err := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("\n[tools.update_plan]\nenabled = true\n")
			f.Close()
		}
	}
	c, s, work := startACPPeer(t, acpPeer{backend: "codex", env: append(env, "AGENT_HOST_CODEX_BIN="+codexBin)})
	evs, res := c.Call("session/prompt", acpclient.Prompt(s,
		`CALL update_plan {"explanation":"first things first","plan":[{"step":"read","status":"completed"},{"step":"write","status":"in_progress"},{"step":"test","status":"pending"}]}`))
	if acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("the turn: %s %v", acpclient.StopReason(res), acpclient.Kinds(evs))
	}
	var got []string
	for _, ev := range evs {
		if ev.Update.SessionUpdate == "plan" {
			var entries []struct{ Content, Priority, Status string }
			if err := json.Unmarshal(ev.Update.Entries, &entries); err != nil {
				t.Fatalf("%s: %v", ev.Update.Entries, err)
			}
			got = got[:0]
			for _, e := range entries {
				got = append(got, e.Content+":"+e.Status)
			}
		}
	}
	if strings.Join(got, " ") != "read:completed write:in_progress test:pending" {
		t.Errorf("the plan: %v (%v)", got, acpclient.Kinds(evs))
	}
	c.End()

	// session/load replays it, from codex's rollout (the thread's turns
	// have no item for it).
	p := acpPeer{backend: "codex", env: append(env, "AGENT_HOST_CODEX_BIN="+codexBin)}
	c = runACPPeer(t, p)
	c.Call("initialize", map[string]any{"protocolVersion": 1})
	evs, res = c.Call("session/load", map[string]any{"sessionId": s, "cwd": work, "mcpServers": []any{}})
	if res.Error != nil {
		t.Fatalf("session/load: %s", res.Error.Message)
	}
	var replayed string
	for _, ev := range evs {
		if ev.Update.SessionUpdate == "plan" {
			replayed = string(ev.Update.Entries)
		}
	}
	if !strings.Contains(replayed, `"content":"write","priority":"medium","status":"in_progress"`) {
		t.Errorf("the plan replayed: %s (%v)", replayed, acpclient.Kinds(evs))
	}
	c.End()
}

// claude's slash commands, as its CLI answers initialize, are an
// available_commands_update in the first turn, with their descriptions.
func TestACPClaudeCommands(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	c, s, _ := startACPPeer(t, acpPeer{backend: "claude", env: append(claudeEnv(t, api), "AGENT_HOST_CLAUDE_BIN="+claudeBin, "XDG_STATE_HOME="+t.TempDir())})
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY hi"))
	if acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("the turn: %s", acpclient.StopReason(res))
	}
	var cmds []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Input       *struct {
			Hint string `json:"hint"`
		} `json:"input"`
	}
	n := 0
	for _, ev := range evs {
		if ev.Update.SessionUpdate == "available_commands_update" {
			n++
			if err := json.Unmarshal(ev.Update.Commands, &cmds); err != nil {
				t.Fatal(err)
			}
		}
	}
	var compact bool
	for _, cmd := range cmds {
		compact = compact || (cmd.Name == "compact" && cmd.Description != "" && cmd.Input != nil && cmd.Input.Hint != "")
	}
	if n != 1 || !compact {
		t.Errorf("%d available_commands_update, %d commands, compact with its description and hint %v", n, len(cmds), compact)
	}
	evs, _ = c.Call("session/prompt", acpclient.Prompt(s, "SAY again"))
	for _, ev := range evs {
		if ev.Update.SessionUpdate == "available_commands_update" {
			t.Error("the same commands sent again in the second turn")
		}
	}
	c.End()
}

// endOfInputMidTurn checks the end of input in the middle of a turn at
// level 2 whose command (its command line has marker) would write
// late.txt 4 s in: the turn is cancelled (and answered), the tree is gone
// within 3 s, and the command never gets to write its file.
func endOfInputMidTurn(t *testing.T, c *acpclient.Client, s, work, prompt, marker string) {
	t.Helper()
	setMode(t, c, s, "level-2")
	tag := c.Send("session/prompt", acpclient.Prompt(s, prompt))
	if !await.Until(30*time.Second, func() bool { return len(cmdlineHas(c.PID, marker)) > 0 }) {
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

// allowAlwaysSurvivesModes checks a grant for the session across mode
// changes, on session s whose prompt writes out.txt in work: allowed for
// the session at level-2-ask, the same write is not asked about after
// level-1 and back (restarted: the backend's processes, procs, are others
// then), nor at level-3-ask, the same grant, which changes no process.
func allowAlwaysSurvivesModes(t *testing.T, c *acpclient.Client, s, work, prompt string, procs func() []int, restarted bool) {
	t.Helper()
	out := filepath.Join(work, "out.txt")
	write := func(t *testing.T) []acpclient.Event {
		t.Helper()
		os.Remove(out)
		evs, res := c.Call("session/prompt", acpclient.Prompt(s, prompt))
		if acpclient.StopReason(res) != "end_turn" {
			t.Fatalf("the turn ended %s: %v", acpclient.StopReason(res), acpclient.Kinds(evs))
		}
		return evs
	}
	setMode(t, c, s, "level-2-ask")
	c.Permission("allow_session")
	if evs := write(t); !asked(evs) {
		t.Fatalf("the first write was not asked about: %v", acpclient.Kinds(evs))
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("allowed for the session, and out.txt is not there: %v", err)
	}
	before := procs()
	setMode(t, c, s, "level-1")
	if _, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY away")); acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("the turn at level 1: %s", acpclient.StopReason(res))
	}
	setMode(t, c, s, "level-2-ask")
	c.Permission("reject") // what would be asked now is rejected, and seen
	evs := write(t)
	if again := procs(); restarted && (len(again) != 1 || len(before) != 1 || again[0] == before[0]) {
		t.Errorf("the backend was not started again for the mode changes: %v then %v", before, again)
	}
	if asked(evs) {
		t.Errorf("the command allowed for the session was asked again after the mode went away and back: %v", acpclient.Kinds(evs))
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("out.txt was not written: %v %v", err, acpclient.Kinds(evs))
	}

	t.Run("same grant, nothing restarted", func(t *testing.T) {
		before := procs()
		setMode(t, c, s, "level-3-ask")
		evs := write(t)
		if after := procs(); len(before) == 0 || !slices.Equal(before, after) {
			t.Errorf("level-2-ask to level-3-ask (the same grant) changed the backend's processes: %v then %v", before, after)
		}
		if asked(evs) {
			t.Errorf("asked at level-3-ask: %v", acpclient.Kinds(evs))
		}
		if _, err := os.Stat(out); err != nil {
			t.Errorf("out.txt was not written at level-3-ask: %v", err)
		}
	})
	c.End()
}
