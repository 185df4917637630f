package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"golang.org/x/sys/unix"
)

// leaderWithSetsidChild starts sh with a child that leaves its group (a
// session of its own) and that sh kills when it gets SIGTERM, as
// postgres's postmaster does its children.
func leaderWithSetsidChild(t *testing.T) (*Child, int) {
	c, child, _ := startSetsid(t, `setsid sleep 4501 & c=$!; trap 'kill $c; wait $c; exit 0' TERM; echo $c > DIR/child; wait`)
	return c, child
}

// startSetsid starts sh -c script, DIR in it a directory of the test's,
// and waits for the process whose pid it writes to DIR/child to be a
// sleep that called setsid; it returns the leader, that pid and the
// directory.
func startSetsid(t *testing.T, script string) (*Child, int, string) {
	t.Helper()
	dir := t.TempDir()
	c, err := Start(exec.Command("sh", "-c", strings.ReplaceAll(script, "DIR", dir)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.End() })
	child, err := await.PID(filepath.Join(dir, "child"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !await.Until(10*time.Second, func() bool { in, err := Stat(child); return err == nil && in.Comm == "sleep" && in.SID == child }) {
		t.Fatal("the child did not call setsid")
	}
	return c, child, dir
}

// What left the group and ends with it is not an escaper: the stop
// signal goes to the group alone, and nothing else is signalled.
func TestLadderLeavesWhatEndsWithTheGroup(t *testing.T) {
	c, child := leaderWithSetsidChild(t)
	rep := Ladder(unix.Getpid(), c.PID(), syscall.SIGTERM, 5*time.Second)
	if rep.Escapers != 0 || rep.SIGKILL || len(rep.Signalled) != 1 || rep.Signalled[0].PID != c.PID() || rep.Signalled[0].Signal != "SIGTERM" {
		t.Errorf("report %+v", rep)
	}
	if !gone(child) {
		t.Errorf("the setsid child %d survived", child)
	}
}

// What outlives the group is signalled on its own, with SIGTERM, and
// counted; the group got the stop signal given.
func TestLadderSignalsWhatOutlivesTheGroup(t *testing.T) {
	// A subreaper, as svc's monitor is, so that the child stays in reach
	// once its parent has gone.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skip(err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	c, child := leaderWithSetsidChild(t)
	defer func() {
		var ws syscall.WaitStatus
		syscall.Wait4(child, &ws, 0, nil) // reparented to us: ours to reap
	}()
	rep := Ladder(unix.Getpid(), c.PID(), syscall.SIGQUIT, 5*time.Second) // sh does not trap QUIT: it leaves the child
	if rep.Escapers != 1 || rep.SIGKILL || len(rep.Signalled) != 2 {
		t.Fatalf("report %+v", rep)
	}
	if s := rep.Signalled[0]; s.PID != c.PID() || s.Signal != "SIGQUIT" || s.Escaper {
		t.Errorf("first %+v", s)
	}
	if s := rep.Signalled[1]; s.PID != child || s.Signal != "SIGTERM" || !s.Escaper || s.ExitMs == nil {
		t.Errorf("second %+v", s)
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]syscall.Signal{"TERM": syscall.SIGTERM, "sigint": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT,
		"usr2": syscall.SIGUSR2, "1": syscall.SIGHUP, " 9 ": syscall.SIGKILL} {
		if got, ok := ParseSignal(in); !ok || got != want {
			t.Errorf("ParseSignal(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "SIG", "BOGUS", "0", "-1", "99", "TERM2"} {
		if got, ok := ParseSignal(in); ok {
			t.Errorf("ParseSignal(%q) = %v, want refused", in, got)
		}
	}
}

// A process spare leaves out is neither signalled nor waited for, and
// neither is what it runs: another's tree that the kernel made part of
// this one.
func TestLadderSparesAnothersTree(t *testing.T) {
	dir := t.TempDir()
	// A second tree: sh (its root, spared) and a sleep under it, in a
	// group of their own, beside this tree's own sleep.
	other, err := Start(exec.Command("sh", "-c", `sleep 4502 & echo $! > `+dir+`/inner; wait`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Signal(syscall.SIGKILL); other.End() })
	mine, err := Start(exec.Command("sleep", "4503"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mine.Signal(syscall.SIGKILL); mine.End() })
	inner, err := await.PID(filepath.Join(dir, "inner"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	spare := func(p Info) bool { return p.PID == other.PID() }
	for _, p := range TreeSparing(unix.Getpid(), 0, spare) {
		if p.PID == other.PID() || p.PID == inner {
			t.Errorf("TreeSparing has %d (%s)", p.PID, p.Comm)
		}
	}
	for _, pid := range DescendantsSparing(unix.Getpid(), spare) {
		if pid == other.PID() || pid == inner {
			t.Errorf("DescendantsSparing has %d", pid)
		}
	}
	rep := LadderSparing(unix.Getpid(), mine.PID(), syscall.SIGTERM, 5*time.Second, spare)
	for _, s := range rep.Signalled {
		if s.PID == other.PID() || s.PID == inner {
			t.Errorf("the ladder signalled %d (%s): %+v", s.PID, s.Comm, rep)
		}
	}
	if !gone(mine.PID()) {
		t.Errorf("this tree's sleep %d survived", mine.PID())
	}
	if gone(inner) || gone(other.PID()) {
		t.Errorf("the spared tree was stopped")
	}
}

// A group member that ignores the stop signal is killed after the grace,
// and what had left the group still gets SIGTERM first, on its own: one
// stubborn member does not cost a daemon its clean shutdown.
func TestLadderEscapersGetSIGTERMPastAStubbornGroup(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skip(err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	c, esc, dir := startSetsid(t, `setsid sleep 4504 & echo $! > DIR/child; sh -c 'trap "" TERM; exec sleep 4505' & echo $! > DIR/stub; exec sleep 4506`)
	defer func() {
		var ws syscall.WaitStatus
		syscall.Wait4(esc, &ws, 0, nil) // reparented to us: ours to reap
	}()
	stub, err := await.PID(filepath.Join(dir, "stub"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !await.Until(10*time.Second, func() bool { st, err := Stat(stub); return err == nil && st.Comm == "sleep" }) {
		t.Fatal("the stubborn child did not start")
	}
	rep := Ladder(unix.Getpid(), c.PID(), syscall.SIGTERM, 300*time.Millisecond)
	var escSig []string
	for _, s := range rep.Signalled {
		if s.PID == esc {
			escSig = append(escSig, s.Signal)
		}
	}
	if len(escSig) != 1 || escSig[0] != "SIGTERM" || !rep.SIGKILL || rep.Escapers != 1 {
		t.Errorf("the escaper got %v; report %+v", escSig, rep)
	}
	if !gone(esc) {
		t.Errorf("the escaper %d survived", esc)
	}
}

// LadderFrom (a service whose monitor is gone): a process that left the
// group is stopped even once its parent, the service's process, has
// ended and it went to init, out of the tree.
func TestLadderFromStopsAnEscaperOrphanedOutOfTheTree(t *testing.T) {
	c, esc, _ := startSetsid(t, `setsid sleep 4507 & echo $! > DIR/child; exec sleep 4508`)
	in, _ := Stat(esc)
	t.Cleanup(func() { Signal(in, syscall.SIGKILL) })
	root, err := Stat(c.PID())
	if err != nil || root.Comm != "sleep" {
		t.Fatalf("root %+v %v", root, err)
	}
	rep := LadderFrom(c.PID(), syscall.SIGTERM, 2*time.Second)
	if !gone(esc) {
		t.Errorf("the escaper %d survived its parent's stop; report %+v", esc, rep)
	}
	if rep.Escapers != 1 {
		t.Errorf("report %+v", rep)
	}
}

// A process that became another's after the stop's first look (a nested
// service's monitor that had not yet written its state) is spared when
// its signal comes, though it was seen before.
func TestLadderSparesWhatBecameAnothers(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skip(err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	// The group takes a while to end on SIGTERM, and leaves its setsid
	// child behind.
	c, esc, dir := startSetsid(t, `setsid sleep 4509 & echo $! > DIR/child; trap 'touch DIR/termed; sleep 0.4; exit 0' TERM; while :; do sleep 1; done`)
	in, _ := Stat(esc)
	defer func() {
		Signal(in, syscall.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(esc, &ws, 0, nil) // reparented to us: ours to reap
	}()
	// Another's from the moment the group has its signal on.
	spare := func(p Info) bool {
		_, err := os.Stat(filepath.Join(dir, "termed"))
		return p.PID == esc && err == nil
	}
	rep := LadderSparing(unix.Getpid(), c.PID(), syscall.SIGTERM, 5*time.Second, spare)
	for _, s := range rep.Signalled {
		if s.PID == esc {
			t.Errorf("the process that became another's was signalled: %+v", rep)
		}
	}
	if gone(esc) {
		t.Error("the process that became another's was stopped")
	}
}
