package codex

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
)

// stopMarked ends the processes that carry the chat's mark, with their
// children and their group, and leaves another chat's alone.
func TestStopMarked(t *testing.T) {
	start := func(mark string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", "sleep 600 & sleep 600; :")
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
	if !await.Until(5*time.Second, func() bool { return len(tree(mine.Process.Pid)) == 2 && len(tree(theirs.Process.Pid)) == 2 }) {
		t.Fatal("the sleeps did not start")
	}
	kids := tree(mine.Process.Pid)
	waited := make(chan struct{})
	go func() { _ = mine.Wait(); close(waited) }()
	if n := stopMarked(os.Getpid(), "mine"); n != 3 {
		t.Errorf("signalled %d, want the shell and its 2 sleeps", n)
	}
	<-waited
	if left := proc.WaitGone(kids, time.Now().Add(2*time.Second), nil); len(left) > 0 {
		t.Errorf("left %v", left)
	}
	if len(tree(theirs.Process.Pid)) != 2 {
		t.Error("another chat's processes were stopped")
	}
}
