package proc

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
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
// too. A process that has a Reaper must start every child through it.
type Reaper struct {
	mu       sync.Mutex
	children map[int]*Child
}

// NewReaper makes this process a child subreaper and starts reaping.
func NewReaper() *Reaper {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	r := &Reaper{children: map[int]*Child{}}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD)
	go r.loop(sigs)
	return r
}

// Start starts cmd as a Child whose exit this reaper collects.
func (r *Reaper) Start(cmd *exec.Cmd, o Options) (*Child, error) {
	prepare(cmd, o)
	// Held across the start, so that a child that dies at once is not
	// collected before it is known.
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{cmd: cmd, exited: make(chan struct{}), reaper: r}
	r.children[cmd.Process.Pid] = c
	return c, nil
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
	r.mu.Unlock()
	if c == nil { // an orphan the kernel gave us: collect and forget it
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		return true
	}
	c.mu.Lock()
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, 0, nil)
	c.reaped, c.exit = true, ExitOf(ws)
	_ = c.cmd.Process.Release()
	c.mu.Unlock()
	close(c.exited)
	return true
}

var _ [unsafe.Sizeof(unix.Siginfo{}) - unsafe.Sizeof(childInfo{})]struct{} // same size
var _ [unsafe.Sizeof(childInfo{}) - unsafe.Sizeof(unix.Siginfo{})]struct{}
