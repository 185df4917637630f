package peers

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/tests/acpclient"
	"github.com/tidwall/gjson"
)

// rolloutsOf are the codex rollout files under the sessions directory of
// env's XDG_STATE_HOME whose thread works in cwd.
func rolloutsOf(env []string, cwd string) []string {
	var state string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	var out []string
	_ = filepath.WalkDir(filepath.Join(state, "runagent", "codex-sessions"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		b, _ := os.ReadFile(path)
		first, _, _ := bytes.Cut(b, []byte("\n"))
		if gjson.GetBytes(first, "type").Str == "session_meta" && gjson.GetBytes(first, "payload.cwd").Str == cwd {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// session/new has the session's codex thread started and its rollout
// file written before the first prompt (codex otherwise writes it at the
// thread's first turn, which then pays for it), and the first prompt runs
// on that thread: its turn is in that file, and no other thread was made
// for the session.
func TestACPCodexThreadSavedBeforePrompt(t *testing.T) {
	need(t)
	p := codexPeer(t)
	c, s, work := startACPPeer(t, p)
	if !await.Until(30*time.Second, func() bool { return len(rolloutsOf(p.env, work)) == 1 }) {
		t.Fatalf("no rollout file of the session's thread before its first prompt: %v", rolloutsOf(p.env, work))
	}
	before := rolloutsOf(p.env, work)[0]
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY saved ahead"))
	if res.Error != nil {
		t.Fatalf("prompt: %s", res.Error.Message)
	}
	var said string
	for _, ev := range evs {
		if ev.Update.SessionUpdate == "agent_message_chunk" {
			said += ev.Update.Text()
		}
	}
	if said != "saved ahead" {
		t.Errorf("answer %q, want %q", said, "saved ahead")
	}
	after := rolloutsOf(p.env, work)
	if len(after) != 1 || after[0] != before {
		t.Fatalf("rollout files of the session after its first turn %v, want only %s", after, before)
	}
	if b, _ := os.ReadFile(before); !bytes.Contains(b, []byte("SAY saved ahead")) {
		t.Errorf("the first turn is not in the thread started at session/new (%s)", before)
	}
}
