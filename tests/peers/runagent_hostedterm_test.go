package peers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
)

// raTree is every process under pid, as /proc says now.
func raTree(pid int) []int {
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			kids[pp] = append(kids[pp], p)
		}
	}
	var out []int
	for todo := kids[pid]; len(todo) > 0; todo = todo[1:] {
		out = append(out, todo[0])
		todo = append(todo, kids[todo[0]]...)
	}
	return out
}

// raAlive says whether pid runs (not a zombie).
func raAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !bytes.Contains(b, []byte(") Z "))
}

// SIGTERM to runagent mid-turn on agentry's host (here with --policy):
// exit 143, and within 3 s nothing it started (the CLI, codex app-server,
// whatever they ran) is left.
func TestRunagentHostedSIGTERM(t *testing.T) {
	need(t)
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			api := a.fake(t)
			pol := filepath.Join(t.TempDir(), "policy.toml")
			os.WriteFile(pol, []byte("[commands]\ndeny = [\"git push*\"]\n"), 0o600)
			cmd := exec.Command(runagentBin, append(a.args, "-l", "2", "--policy", pol)...)
			cmd.Env, cmd.Dir = a.env(t, api), t.TempDir()
			cmd.Stdin = strings.NewReader("SLOW 400")
			errb := new(bytes.Buffer)
			cmd.Stderr = errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			waitRequest(t, api, a.name, errb)
			tree := raTree(cmd.Process.Pid)
			if len(tree) == 0 {
				t.Fatal("runagent started nothing")
			}
			cmd.Process.Signal(syscall.SIGTERM)
			waitEnd(t, cmd, 30*time.Second, "runagent did not end after SIGTERM")
			if code := cmd.ProcessState.ExitCode(); code != 143 || !strings.Contains(errb.String(), "stopped by SIGTERM") {
				t.Errorf("exit %d, stderr %s", code, errb.String())
			}
			if !await.Until(3*time.Second, func() bool {
				for _, p := range tree {
					if raAlive(p) {
						return false
					}
				}
				return true
			}) {
				for _, p := range tree {
					if raAlive(p) {
						b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
						t.Errorf("left running: %d %q", p, b)
						syscall.Kill(p, syscall.SIGKILL)
					}
				}
			}
		})
	}
}
