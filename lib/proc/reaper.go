package proc

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// childInfo is the siginfo_t that waitid fills for a child (SIGCHLD):
// unix.Siginfo leaves the union opaque, and si_pid is its first field.
type childInfo struct {
	signo, errno, code, _ int32
	pid                   int32
	uid                   uint32
	status                int32
	_                     [100]byte
}

// Reaper owns every wait of a process that is a child subreaper: its own
// children, and the orphans of their trees that the kernel reparents to
// it (a daemon that double-forked out of its group). Children started
// through it are Childs like any other, but their exit is collected here,
// so Exited closes once a child is reaped, and Signal stops at that moment
// too. An orphan nobody adopted is collected and its exit kept a while;
// Adopt makes one a Child, so that a daemon's exit reaches whoever follows
// it. A process that has a Reaper must start every child through it.
type Reaper struct {
	mu       sync.Mutex
	children map[int]*Child
	orphans  []orphanExit   // the last few orphans collected, newest last
	before   map[int]uint64 // the children the process had before it was a subreaper (pid: start)
}

// orphanExit is an orphan the reaper collected before anyone adopted it:
// kept a while, so that Adopt still learns how it ended.
type orphanExit struct {
	pid   int
	start uint64
	exit  Exit
}

// keptOrphans is how many collected orphans a Reaper remembers.
const keptOrphans = 32

// ErrNotOrphan is a process Adopt cannot take: gone before it was known,
// or not a child of this process.
var ErrNotOrphan = errors.New("not an orphan of this subreaper")

// NewReaper makes this process a child subreaper and starts reaping.
func NewReaper() *Reaper {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	r := &Reaper{children: map[int]*Child{}, before: map[int]uint64{}}
	if hasChildren() { // rarely: a shell's logger, forked before it exec'd us
		for _, pid := range Children(os.Getpid()) {
			if in, err := Stat(pid); err == nil {
				r.before[pid] = in.Start
			}
		}
	}
	// The handler goes in on the reaper's goroutine: the runtime's first
	// signal.Notify starts its signal thread (~0.2 ms), which the caller
	// need not wait for. A child that exits before it is in is collected
	// by the loop's first look, which comes after.
	go func() {
		sigs := make(chan os.Signal, 16)
		signal.Notify(sigs, syscall.SIGCHLD)
		r.loop(sigs)
	}()
	return r
}

// hasChildren reports whether the process has a child, exited or not:
// one system call (waitid says ECHILD when there is none), where reading
// the children from /proc costs a file per thread.
func hasChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return !errors.Is(err, unix.ECHILD)
}

// Start starts cmd as a Child whose exit this reaper collects; what the
// leader leaves in its group when it exits (a daemon it forked) runs on.
func (r *Reaper) Start(cmd *exec.Cmd, o Options) (*Child, error) {
	return r.start(cmd, o, false)
}

// start starts cmd as a Child whose exit this reaper collects, having
// killed what the leader left in its group first when endGroup.
func (r *Reaper) start(cmd *exec.Cmd, o Options, endGroup bool) (*Child, error) {
	prepare(cmd, o)
	// Held across the start, so that a child that dies at once is not
	// collected before it is known.
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{}), reaper: r, endGroup: endGroup}
	r.children[cmd.Process.Pid] = c
	return c, nil
}

// Adopt makes a Child of p, a process the kernel reparented to this
// subreaper (a daemon whose parent exited), named by pid and start time:
// its exit is then collected for the Child, not dropped. An orphan the
// reaper collected moments before is still found, already exited, with
// its exit. The Child is no group's leader: its Signal reaches p alone.
func (r *Reaper) Adopt(p Info) (*Child, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := &Child{pid: p.PID, exited: make(chan struct{}), reaper: r}
	for _, o := range r.orphans {
		if o.pid == p.PID && o.start == p.Start {
			c.reaped, c.exit = true, o.exit
			close(c.exited)
			return c, nil
		}
	}
	now, err := Stat(p.PID)
	if err != nil || now.Start != p.Start || now.PPID != os.Getpid() || r.children[p.PID] != nil {
		return nil, ErrNotOrphan
	}
	r.children[p.PID] = c
	return c, nil
}

// Started reports whether pid is a child started or adopted through the
// reaper and not yet collected: one of the process's own.
func (r *Reaper) Started(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.children[pid] != nil
}

func (r *Reaper) loop(sigs <-chan os.Signal) {
	for {
		for r.reapOne() {
		}
		<-sigs
	}
}

// reapOne collects one exited child, if there is one. It looks first
// without reaping, so that a Child is marked reaped under its lock at the
// moment its pid is released, and no Signal can reach a recycled group.
func (r *Reaper) reapOne() bool {
	var info childInfo
	err := unix.Waitid(unix.P_ALL, 0, (*unix.Siginfo)(unsafe.Pointer(&info)), unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if errors.Is(err, unix.EINTR) {
		return true
	}
	pid := int(info.pid)
	if err != nil || pid <= 0 {
		return false
	}
	r.mu.Lock()
	c := r.children[pid]
	delete(r.children, pid)
	if c == nil { // an orphan nobody adopted: collect it, and keep its exit a while
		r.collectOrphan(pid)
		r.mu.Unlock()
		return true
	}
	r.mu.Unlock()
	c.mu.Lock()
	if c.endGroup { // the leader is a zombie still: its group id is its own
		_ = unix.Kill(-pid, unix.SIGKILL)
	}
	last, _ := Stat(pid) // a zombie's stat is still there
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, 0, nil)
	c.reaped, c.exit, c.comm = true, ExitOf(ws), last.Comm
	if c.cmd != nil {
		_ = c.cmd.Process.Release()
	}
	c.mu.Unlock()
	close(c.exited)
	return true
}

// collectOrphan reaps an exited orphan, its start time read first (a
// zombie's stat is still there), and remembers how it ended.
func (r *Reaper) collectOrphan(pid int) {
	info, _ := Stat(pid)
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, 0, nil)
	r.orphans = append(r.orphans, orphanExit{pid: pid, start: info.Start, exit: ExitOf(ws)})
	if len(r.orphans) > keptOrphans {
		r.orphans = r.orphans[len(r.orphans)-keptOrphans:]
	}
}

var _ [unsafe.Sizeof(unix.Siginfo{}) - unsafe.Sizeof(childInfo{})]struct{} // same size
var _ [unsafe.Sizeof(childInfo{}) - unsafe.Sizeof(unix.Siginfo{})]struct{}

// EndAll ends every process this one still has as a child: those started
// through the reaper and not yet collected, and the orphans of their trees
// the kernel handed to it; not a child it had before it was a subreaper
// (what a shell forked before it exec'd the program). Each gets SIGKILL,
// and so again does what each leaves to this subreaper as it dies, until
// none is left or the deadline passes. A host calls it last, after its
// own way of stopping what it started: what an agent's tree left behind
// it, or was spawning while it died, does not outlive the host. It
// returns the pids still there at the deadline.
func (r *Reaper) EndAll(deadline time.Time) []int { return r.end(deadline, false) }

// EndOrphans is EndAll for the orphans alone: a child started through
// the reaper and not yet collected runs on, with what it runs (a run's
// svc mcp, whose services a run may keep); what the kernel handed to
// this subreaper is ended, and what it leaves to it in turn.
func (r *Reaper) EndOrphans(deadline time.Time) []int { return r.end(deadline, true) }

func (r *Reaper) end(deadline time.Time, orphans bool) []int {
	self := os.Getpid()
	for {
		if !hasChildren() { // most often: no /proc to read (a file per thread)
			return nil
		}
		var live []int
		for _, pid := range Children(self) {
			in, err := Stat(pid)
			if err != nil || in.State == 'Z' || r.before[pid] == in.Start || orphans && r.Started(pid) { // a zombie is the loop's to collect
				continue
			}
			live = append(live, pid)
			Signal(in, unix.SIGKILL) // confirmed by pid and start time: a reused pid is a stranger's

		}
		if len(live) == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(2 * time.Millisecond)
	}
}
