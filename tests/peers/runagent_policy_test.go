package peers

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// raPushes are issue 46's disguises of git push, which a policy's deny
// "git push*" must catch wherever the agent runs them.
var raPushes = []string{"git -C . push origin x", "true && git push", "sh -c 'git push'", "env A=1 git push", `find . -exec git push \;`}

const raPolicy = `[commands]
deny = ["git push*", "rm -rf *"]
allow = ["npm test"]

[paths]
deny_write = ["**/.env"]
`

// raPolicyResult is runagent --json with its denials.
type raPolicyResult struct {
	OK      bool   `json:"ok"`
	Text    string `json:"text"`
	Reason  string `json:"reason"`
	Denials []struct {
		Tool    string `json:"tool"`
		Rule    string `json:"rule"`
		Match   string `json:"match"`
		Verdict string `json:"verdict"`
	} `json:"denials"`
}

// runagent --policy with claude and codex: each of the five pushes is
// denied and never runs (the git wrapper first on PATH records nothing),
// npm test runs, --json lists each denial with its rule; a policy with an
// unknown key is exit 2 before the agent starts (the fake API saw no
// request).
func TestRunagentPolicy(t *testing.T) {
	need(t)
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			work, bin := t.TempDir(), t.TempDir()
			marker := filepath.Join(t.TempDir(), "git-ran")
			os.WriteFile(filepath.Join(work, "package.json"), []byte(`{"name":"p","version":"1.0.0","scripts":{"test":"echo NPM-TEST-RAN"}}`), 0o644)
			// The wrapper records a push; claude's own git calls (its status
			// of the working copy) go on to git.
			realGit, _ := exec.LookPath("git")
			os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\nfor a; do [ \"$a\" = push ] && { echo \"$@\" >> "+marker+"; exit 0; }; done\n"+
				"[ -n \""+realGit+"\" ] && exec \""+realGit+"\" \"$@\"\nexit 1\n"), 0o755)
			pol := filepath.Join(t.TempDir(), "policy.toml")
			os.WriteFile(pol, []byte(raPolicy), 0o600)
			steps := "STEPS:\n"
			for _, c := range append(raPushes, "npm test") {
				if a.name == "codex" { // no login shell, which would reset PATH
					steps += fmt.Sprintf("CALL exec_command {\"cmd\":%q,\"login\":false}\n", c)
				} else {
					steps += a.shell(c) + "\n"
				}
			}
			api := a.fake(t)
			env := append(a.env(t, api), "PATH="+bin+":"+os.Getenv("PATH"))
			r := runagent(t, env, work, append(a.args, "-l", "2", "--policy", pol, "--json", steps)...)
			var res raPolicyResult
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatalf("--json: %v\nstdout %s\nstderr %s", err, r.stdout, r.stderr)
			}
			if os.Getenv("PEERS_DUMP") != "" {
				t.Logf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if b, err := os.ReadFile(marker); err == nil {
				t.Errorf("a denied git push ran: %q", b)
			}
			if r.code != 0 || !res.OK || !strings.Contains(res.Text, "NPM-TEST-RAN") {
				t.Errorf("exit %d %+v\nstderr %s", r.code, res, r.stderr)
			}
			if len(res.Denials) != len(raPushes) {
				t.Fatalf("%d denials, want %d: %+v", len(res.Denials), len(raPushes), res.Denials)
			}
			for _, d := range res.Denials {
				if d.Rule != `commands.deny "git push*" (`+pol+`:2)` || !strings.HasPrefix(d.Match, "git push") || d.Verdict != "deny" || d.Tool == "" {
					t.Errorf("denial %+v", d)
				}
			}

			bad := filepath.Join(t.TempDir(), "bad.toml")
			os.WriteFile(bad, []byte("[commands]\ndeny = [\"git push*\"]\nfrob = [\"x\"]\n"), 0o600)
			api = a.fake(t)
			r = runagent(t, a.env(t, api), work, append(a.args, "-l", "2", "--policy", bad, "hi")...)
			api.mu.Lock()
			n := api.requests
			api.mu.Unlock()
			if r.code != 2 || !strings.Contains(r.stderr, bad+":3: commands.frob: an unknown key") || n != 0 {
				t.Errorf("a bad policy: exit %d, %d requests\nstderr %s", r.code, n, r.stderr)
			}
		})
	}
}
