package codex

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
)

// stopMarked ends the processes that carry the chat's mark, with their
// children and their group, and one that left the tree (setsid, its
// parent gone), and leaves another chat's alone.
func TestStopMarked(t *testing.T) {
	start := func(mark string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", "sleep 600 & sleep 600; :")
		if mark == "mine" {
			cmd = exec.Command("sh", "-c", "(setsid sleep 601 &); sleep 600 & sleep 600; :")
		}
		cmd.Env = append(os.Environ(), markVar+"="+mark)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	mine, theirs := start("mine"), start("theirs")
	defer func() {
		_ = syscall.Kill(-theirs.Process.Pid, syscall.SIGKILL)
		_ = theirs.Wait()
	}()
	tree := func(pid int) []proc.Info { return proc.Tree(pid, 0) }
	escaped := func() []proc.Info {
		var out []proc.Info
		for _, p := range proc.All() {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID)); string(b) == "sleep\x00601\x00" && hasEnv(p.PID, markVar+"=mine") {
				out = append(out, p)
			}
		}
		return out
	}
	if !await.Until(5*time.Second, func() bool {
		return len(tree(mine.Process.Pid)) == 2 && len(tree(theirs.Process.Pid)) == 2 && len(escaped()) == 1
	}) {
		t.Fatal("the sleeps did not start")
	}
	kids := append(tree(mine.Process.Pid), escaped()...)
	waited := make(chan struct{})
	go func() { _ = mine.Wait(); close(waited) }()
	if n := stopMarked(os.Getpid(), "mine"); n != 4 {
		t.Errorf("signalled %d, want the shell, its 2 sleeps and the one that left", n)
	}
	<-waited
	if left := proc.WaitGone(kids, time.Now().Add(2*time.Second), nil); len(left) > 0 {
		t.Errorf("left %v", left)
	}
	if len(tree(theirs.Process.Pid)) != 2 {
		t.Error("another chat's processes were stopped")
	}
}
