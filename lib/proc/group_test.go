package proc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A signal to the group reaches the leader's children too, and
// WaitExited leaves the leader unreaped so the group can still be named.
func TestGroupKill(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", "sleep 300 & echo $! > "+dir+"/child; wait")
	InGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(10 * time.Second)
	for child == 0 {
		b, _ := os.ReadFile(dir + "/child")
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if child == 0 && time.Now().After(deadline) {
			t.Fatal("child pid not written")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := SignalGroup(cmd, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := WaitExited(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	// Not reaped: the pid is still there, as a zombie.
	if _, err := os.Stat("/proc/" + strconv.Itoa(cmd.Process.Pid)); err != nil {
		t.Errorf("the leader was reaped by WaitExited: %v", err)
	}
	if err := SignalGroup(cmd, syscall.SIGKILL); err != nil {
		t.Errorf("signalling an exited group: %v", err)
	}
	cmd.Wait()
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Errorf("child %d survived the group kill", child)
}
