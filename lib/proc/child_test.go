package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
)

// gone reports whether pid has ended: no such process, or a zombie.
func gone(pid int) bool {
	in, err := Stat(pid)
	return err != nil || in.State == 'Z'
}

// A signal to the child reaches its whole group; Exited closes while the
// leader is still unreaped, so the group can still be named until Wait.
func TestChildSignalsItsGroupAndExitedDoesNotReap(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(exec.Command("sh", "-c", "sleep 300 & echo $! > "+dir+"/child; wait"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := await.PID(filepath.Join(dir, "child"), 10*time.Second)
	if err != nil {
		c.Signal(syscall.SIGKILL)
		c.Wait()
		t.Fatal(err)
	}
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-c.Exited()
	if in, err := Stat(c.PID()); err != nil || in.State != 'Z' {
		t.Errorf("after Exited the leader should be an unreaped zombie: %+v %v", in, err)
	}
	if err := c.Signal(syscall.SIGKILL); err != nil {
		t.Errorf("signalling an exited, unreaped group: %v", err)
	}
	exit := c.Wait()
	if exit.Signal != syscall.SIGTERM || exit.Status() != 143 || exit.String() != "ended by SIGTERM" || exit.OK() {
		t.Errorf("exit %+v: status %d, %q", exit, exit.Status(), exit.String())
	}
	if !await.Until(10*time.Second, func() bool { return gone(grandchild) }) {
		t.Errorf("grandchild %d survived the signal to the group", grandchild)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(c.PID())); err == nil {
		t.Errorf("Wait left the leader unreaped")
	}
	if err := c.Signal(syscall.SIGKILL); err != nil {
		t.Errorf("Signal after Wait must do nothing: %v", err)
	}
	if again := c.Wait(); again.String() != exit.String() {
		t.Errorf("a second Wait says %q, the first %q", again, exit)
	}
}

// End kills what the leader left behind in its group.
func TestChildEndKillsWhatTheLeaderLeft(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(exec.Command("sh", "-c", "sleep 300 & echo $! > "+dir+"/child; exit 3"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	left, err := await.PID(filepath.Join(dir, "child"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	exit := c.End()
	if exit.Code == nil || *exit.Code != 3 || exit.Status() != 3 || exit.String() != "exited 3" {
		t.Errorf("exit %+v (%q)", exit, exit)
	}
	if !await.Until(10*time.Second, func() bool { return gone(left) }) {
		t.Errorf("End left %d running", left)
	}
}

// Stop escalates to SIGKILL when the group ignores the first signal.
func TestChildStopEscalates(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(exec.Command("sh", "-c", "trap '' TERM; echo $$ > "+dir+"/up; while :; do :; done"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := await.PID(filepath.Join(dir, "up"), 10*time.Second); err != nil {
		c.End()
		t.Fatal(err)
	}
	c.Stop(syscall.SIGTERM, 50*time.Millisecond)
	if c.Running() {
		t.Fatal("Stop returned with the leader running")
	}
	if exit := c.Wait(); exit.Signal != syscall.SIGKILL {
		t.Errorf("a TERM-proof child ended %q, want by SIGKILL", exit)
	}
}

// Finish: a child that ends at the end of its input gets no signal; one
// that does not is sent SIGTERM after the grace.
func TestChildFinish(t *testing.T) {
	cmd := exec.Command("cat")
	stdin, _ := cmd.StdinPipe()
	c, err := Start(cmd, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Finish(stdin, 10*time.Second)
	if exit := c.Wait(); exit.Code == nil || *exit.Code != 0 {
		t.Errorf("cat after its input ended: %q, want exit 0", exit)
	}
	cmd = exec.Command("sleep", "30")
	stdin, _ = cmd.StdinPipe()
	if c, err = Start(cmd, Options{}); err != nil {
		t.Fatal(err)
	}
	c.Finish(stdin, 50*time.Millisecond)
	if exit := c.Wait(); exit.Signal != syscall.SIGTERM {
		t.Errorf("sleep, which reads no input: %q, want ended by SIGTERM", exit)
	}
}

// inOwnProcess runs test t again in a process of its own and reports
// true, unless this is that process (false): a subreaper collects every
// child of the process, which would race the other tests' Waits.
func inOwnProcess(t *testing.T) bool {
	if os.Getenv("PROC_TEST_OWN") == t.Name() {
		return false
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "PROC_TEST_OWN="+t.Name())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return true
}

// leaveSleep starts sh through start, which leaves `sleep N` running in
// its group and exits, and returns the sleep's pid once sh is collected;
// file is where sh writes it.
func leaveSleep(t *testing.T, file string, n int, start func(*exec.Cmd) (*Child, error)) int {
	t.Helper()
	c, err := start(exec.Command("sh", "-c", "sleep "+strconv.Itoa(n)+" </dev/null >/dev/null 2>&1 & echo $! > "+file))
	if err != nil {
		t.Fatal(err)
	}
	c.Wait()
	pid, err := await.PID(file, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// The reaper tests run in a process of their own (inOwnProcess).
func TestReaper(t *testing.T) {
	if inOwnProcess(t) {
		return
	}
	r := NewReaper()
	c, err := r.Start(exec.Command("sh", "-c", "exit 7"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	<-c.Exited() // through a reaper, closed once collected
	if exit := c.Wait(); exit.Status() != 7 {
		t.Errorf("the reaper decoded %q, want exited 7", exit)
	}
	// A daemon that leaves its parent: the orphan is reparented to us, and
	// the reaper collects it when it dies instead of leaving a zombie.
	orphan := leaveSleep(t, filepath.Join(t.TempDir(), "orphan"), 300, func(cmd *exec.Cmd) (*Child, error) { return r.Start(cmd, Options{Outlive: true}) })
	if !await.Until(10*time.Second, func() bool { in, err := Stat(orphan); return err == nil && in.PPID == os.Getpid() }) {
		syscall.Kill(orphan, syscall.SIGKILL)
		t.Fatalf("orphan %d was not reparented to the subreaper", orphan)
	}
	syscall.Kill(orphan, syscall.SIGKILL)
	if !await.Until(10*time.Second, func() bool { _, err := os.Stat("/proc/" + strconv.Itoa(orphan)); return err != nil }) {
		t.Errorf("orphan %d was left a zombie", orphan)
	}
}

// A child started with Options.Reaper has what it left in its group
// killed as the reaper collects it; one of Reaper.Start keeps it running.
// EndOrphans ends what was handed to the process (a group the reaper
// left running, an orphan of a new session) and leaves its own live
// children be; EndAll ends those too; both leave a child the process had
// before it became a subreaper alone.
func TestReaperEndsGroupsAndStrays(t *testing.T) {
	if inOwnProcess(t) {
		return
	}
	before := exec.Command("sleep", "4820")
	if err := before.Start(); err != nil {
		t.Fatal(err)
	}
	defer before.Process.Kill()
	r := NewReaper()
	dir := t.TempDir()
	ended := leaveSleep(t, filepath.Join(dir, "ended"), 4821, func(cmd *exec.Cmd) (*Child, error) { return Start(cmd, Options{Reaper: r}) })
	kept := leaveSleep(t, filepath.Join(dir, "kept"), 4821, func(cmd *exec.Cmd) (*Child, error) { return r.Start(cmd, Options{}) })
	if !await.Until(5*time.Second, func() bool { return gone(ended) }) {
		t.Errorf("the sleep %d left in the group of a child started with Options.Reaper outlived its collection", ended)
	}
	if in, err := Stat(kept); err != nil || in.State == 'Z' {
		t.Fatalf("the sleep %d left in the group of a child of Reaper.Start is gone: %v", kept, err)
	}
	// A sleep in a new session, its shell's parent gone: an orphan.
	stray := leaveSleep(t, filepath.Join(dir, "stray"), 4822, func(cmd *exec.Cmd) (*Child, error) {
		cmd.Args[2] = "cd " + dir + " && mkfifo fifo && { setsid sh -c 'sleep 4822 & echo $! > fifo; wait' </dev/null >/dev/null 2>&1 & } && read pid < fifo && echo $pid > stray"
		return Start(cmd, Options{Reaper: r})
	})
	// EndOrphans ends what the kernel handed over (the stray, the sleep
	// whose shell Reaper.Start collected) and leaves a child the reaper
	// started, running still, be.
	own, err := Start(exec.Command("sleep", "4823"), Options{Reaper: r})
	if err != nil {
		t.Fatal(err)
	}
	if left := r.EndOrphans(time.Now().Add(5 * time.Second)); len(left) > 0 {
		t.Errorf("EndOrphans left %v", left)
	}
	if !gone(stray) || !gone(kept) {
		t.Errorf("EndOrphans left an orphan running: stray gone %v, kept gone %v", gone(stray), gone(kept))
	}
	if !own.Running() {
		t.Errorf("EndOrphans ended %d, a child the reaper started", own.PID())
	}
	if left := r.EndAll(time.Now().Add(5 * time.Second)); len(left) > 0 {
		t.Errorf("EndAll left %v", left)
	}
	if !await.Until(5*time.Second, func() bool { return !own.Running() }) {
		t.Errorf("EndAll left %d, a child the reaper started", own.PID())
	}
	for _, pid := range []int{kept, stray} {
		if !gone(pid) {
			t.Errorf("%d outlived EndAll", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if in, err := Stat(before.Process.Pid); err != nil || in.State == 'Z' {
		t.Errorf("EndAll ended %d, the process's child from before it was a subreaper", before.Process.Pid)
	}
}
