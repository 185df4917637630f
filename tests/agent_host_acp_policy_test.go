package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/tests/acpclient"
)

// agent-host --acp --policy: a call the policy denies is shown to the
// editor as failed, with the rule that stopped it, and never runs.
func TestACPPolicyDenied(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(pol, []byte("[commands]\ndeny = [\"touch *\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startACP(t, fakeACPAgent(t, "--policy", pol)...)
	work := t.TempDir()
	s := c.NewSession(work)
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "RUN touch denied.txt"))
	var shown bool
	for _, ev := range evs {
		u := ev.Update
		if ev.Event == "update" && u.SessionUpdate == "tool_call_update" && u.Status == "failed" &&
			strings.Contains(string(u.Content), `Denied by agentry's policy: rule commands.deny \"touch *\" (`+pol+`:2) matched `+"`touch denied.txt`") {
			shown = true
		}
	}
	if !shown || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the editor was not shown the denial and its rule (%s): %v", acpclient.StopReason(res), acpclient.Kinds(evs))
		for _, ev := range evs {
			t.Logf("%s %s %s %s", ev.Event, ev.Update.SessionUpdate, ev.Update.Status, ev.Update.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "denied.txt")); err == nil {
		t.Error("the denied command ran")
	}
}
