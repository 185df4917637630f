package peers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
