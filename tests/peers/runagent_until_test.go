package peers

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/agentrun"
)

// --until 'test -f done.txt' where the model writes the file only on its
// second attempt (when runagent tells it the check failed): two attempts,
// exit 0, the check's status in --json.
func TestUntil(t *testing.T) {
	need(t)
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			fl := newFlaky(t, a.fake(t))
			// The prompt runagent sends after a failed check, up to the
			// command's name, becomes the call that makes the file.
			head, _, _ := strings.Cut(agentrun.UntilPrompt, "%s")
			fl.rewrite[head] = a.shell("touch done.txt") + " "
			work := t.TempDir()
			events := filepath.Join(t.TempDir(), "events.ndjson")
			r := runagent(t, a.env(t, fl.server), work, append(a.args, "-l", "2", "--until", "test -f done.txt", "--json", "--events", events, "SAY not yet")...)
			res := parseLoop(t, r)
			if r.code != 0 || !res.OK || len(res.Attempts) != 2 {
				t.Fatalf("exit %d %+v\nstderr %s", r.code, res, r.stderr)
			}
			// The usage events are each attempt's own, as --json's are:
			// they add up to the run's (claude's cost after a resume is
			// the session's running total; codex's tokens the thread's).
			cost, in := usageEvents(t, events)
			if u := res.Usage; deref64(u.InputTokens) != in || u.CostUSD != nil && fmt.Sprintf("%.9f", *u.CostUSD) != fmt.Sprintf("%.9f", cost) {
				t.Errorf("the events' usage adds up to cost %v, %d in; --json says %v, %d", cost, in, u.CostUSD, deref64(u.InputTokens))
			}
			first, second := res.Attempts[0], res.Attempts[1]
			if first.Check == nil || first.Check.OK || first.Check.Status != "exited 1" || second.Kind != "until" || second.Check == nil || !second.Check.OK {
				t.Errorf("attempts: %+v %+v / %+v %+v", first, first.Check, second, second.Check)
			}
			if _, err := os.Stat(filepath.Join(work, "done.txt")); err != nil {
				t.Errorf("done.txt: %v", err)
			}
			// A check that never passes: --attempts answers, then exit 1.
			r = runagent(t, a.env(t, fl.server), t.TempDir(), append(a.args, "-l", "2", "--until", "echo still failing; false", "--attempts", "2", "--json", "SAY not yet")...)
			res = parseLoop(t, r)
			if r.code != 1 || res.OK || len(res.Attempts) != 2 || !strings.Contains(res.Reason, "the check still fails after 2 answers: exited 1") ||
				res.Attempts[1].Check == nil || res.Attempts[1].Check.Tail != "still failing" {
				t.Errorf("a check that never passes: exit %d %+v", r.code, res)
			}
		})
	}
}

// --preflight at level 2 in a read-only working copy fails before any
// request reaches the API (exit 2, the fake's log empty); so does an
// agent that cannot start, and a claude with no credential.
func TestPreflight(t *testing.T) {
	need(t)
	ro := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", ro).Run(); err != nil {
		if os.Getuid() == 0 {
			t.Skip("cannot mount a read-only tmpfs here")
		}
		os.Chmod(ro, 0o555)
	} else {
		t.Cleanup(func() { exec.Command("umount", ro).Run() })
	}
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			api := a.fake(t)
			env := a.env(t, api)
			for _, args := range [][]string{{"--preflight"}, {"--until", "true"}} {
				r := runagent(t, env, ro, append(append(a.args, "-l", "2"), append(args, "SAY hi")...)...)
				if r.code != 2 || !strings.Contains(r.stderr, "runagent: error: preflight: the working copy is not writable: EROFS") || requestsOf(api) != 0 {
					t.Errorf("%v: exit %d, %d requests\nstderr %s", args, r.code, requestsOf(api), r.stderr)
				}
			}
			bin := "RUNAGENT_CLAUDE_BIN="
			if a.name == "codex" {
				bin = "RUNAGENT_CODEX_BIN="
			}
			broken := filepath.Join(t.TempDir(), "broken")
			os.WriteFile(broken, []byte("#!/bin/sh\necho cannot load libfoo.so >&2\nexit 127\n"), 0o755)
			r := runagent(t, append(env, bin+broken), t.TempDir(), append(a.args, "-l", "2", "--preflight", "SAY hi")...)
			if r.code != 2 || !strings.Contains(r.stderr, "cannot start: "+a.name+" --version exited 127: cannot load libfoo.so") || requestsOf(api) != 0 {
				t.Errorf("an agent that cannot start: exit %d\nstderr %s", r.code, r.stderr)
			}
		})
	}
	api := fakeAnthropic(t)
	var env []string
	for _, kv := range claudeEnv(t, api) {
		if !strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
			env = append(env, kv)
		}
	}
	r := runagent(t, env, t.TempDir(), "-l", "2", "--preflight", "SAY hi")
	if r.code != 2 || !strings.Contains(r.stderr, "runagent: error: preflight: claude is not signed in") || requestsOf(api) != 0 {
		t.Errorf("claude not signed in: exit %d\nstderr %s", r.code, r.stderr)
	}
}

// requestsOf is how many requests the fake API has had.
func requestsOf(s *server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// usageEvents adds up the usage events of an --events file.
func usageEvents(t *testing.T, events string) (cost float64, in int64) {
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var m struct {
			Event struct {
				Type  string `json:"type"`
				Usage struct {
					InputTokens int64   `json:"inputTokens"`
					CostUSD     float64 `json:"costUsd"`
				} `json:"usage"`
			} `json:"event"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Event.Type == "usage" {
			cost += m.Event.Usage.CostUSD
			in += m.Event.Usage.InputTokens
		}
	}
	return cost, in
}
