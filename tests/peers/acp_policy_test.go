package peers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/protocol"
	"github.com/agentry/agentry/tests/acpclient"
)

// agent-host --acp --policy with the pinned claude and codex (issue 46): a
// command the policy denies never runs, even at a mode that runs commands
// unasked, and the editor sees its call failed with the rule that stopped
// it.
func acpPolicyDenies(t *testing.T, p questionPeer, call string) {
	pol := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte("[commands]\ndeny = [\"touch *\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, s, work := startQuestionACP(t, p, nil, "--policy", pol)
	setMode(t, c, s, "level-2")
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, call))
	rule := `rule commands.deny \"touch *\" (` + pol + `:2) matched`
	shown := false
	for _, ev := range evs {
		u := ev.Update
		if u.SessionUpdate == "tool_call_update" && u.Status == "failed" && strings.Contains(string(u.Content), rule) {
			shown = true
		}
		if ev.Event == "permission" {
			t.Error("a call the policy denies was put to the editor")
		}
	}
	if !shown || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the editor was not shown the denial with its rule (%s): %v", acpclient.StopReason(res), acpclient.Kinds(evs))
		for _, ev := range evs {
			t.Logf("%s %s %s %s", ev.Event, ev.Update.SessionUpdate, ev.Update.Status, ev.Update.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "denied.txt")); err == nil {
		t.Error("the command the policy denies ran")
	}
}

func TestACPClaudePolicyDenied(t *testing.T) {
	need(t)
	acpPolicyDenies(t, claudeQuestionPeer(t), `CALL Bash {"command":"touch denied.txt"}`)
}

func TestACPCodexPolicyDenied(t *testing.T) {
	need(t)
	acpPolicyDenies(t, codexQuestionPeer(t), `CALL exec_command {"cmd":"touch denied.txt"}`)
}

// A run's policy through agent-host --backend acp, in front of the pinned
// claude-agent-acp and codex-acp (issue 46): the agent's permission
// request names the command (rawInput), the policy denies it, a denied
// event names the rule, and the command never runs. aborts: the agent's
// only way to reject ends its turn (codex-acp's "abort"), so the turn is
// not expected to complete.
func acpBackendPolicyDenies(t *testing.T, p acpAgentPeer, call string, aborts bool) {
	c := hostWithACP(t, p)
	work := t.TempDir()
	evs, done := acpTurn(t, c, "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: call, Workspace: work, Level: 2,
		Policy: "[commands]\ndeny = [\"touch *\"]\n"})
	var denial *protocol.Denial
	for _, ev := range evs {
		if ev.Type == protocol.EvDenied && denial == nil {
			denial = ev.Denial
		}
	}
	if denial == nil || denial.Rule != `commands.deny "touch *" (params.policy:2)` || denial.Match != "touch denied.txt" ||
		(done.StopReason != protocol.StopCompleted && !aborts) {
		t.Errorf("denial %+v, %s: %s", denial, done.StopReason, kinds(evs))
	}
	if _, err := os.Stat(filepath.Join(work, "denied.txt")); err == nil {
		t.Error("the command the policy denies ran")
	}
}

func TestACPBackendClaudePolicy(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "CLAUDE_CODE_EXECUTABLE="+claudeBin)
	acpBackendPolicyDenies(t, acpAgentPeer{argv: []string{"node", acpAdapter(t, "@zed-industries/claude-agent-acp/dist/index.js")}, env: env},
		`CALL Bash {"command":"touch denied.txt","description":"touch"}`, false)
}

func TestACPBackendCodexPolicy(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	bwrap := filepath.Join(filepath.Dir(filepath.Dir(codexBin)), "codex-resources")
	env := append(codexEnv(t, api), "PATH="+bwrap+":"+os.Getenv("PATH"))
	acpBackendPolicyDenies(t, acpAgentPeer{argv: []string{acpAdapter(t, "@zed-industries/codex-acp-linux-x64/bin/codex-acp")}, env: env},
		`CALL exec_command {"cmd":"touch denied.txt","sandbox_permissions":"require_escalated","justification":"touch"}`, true)
}
