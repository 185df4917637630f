package svc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"golang.org/x/sys/unix"
)

// ErrNameTaken is returned when a live service already has the name.
var ErrNameTaken = errors.New("name taken")

// StartOptions are what svc start needs.
type StartOptions struct {
	Home   string
	Name   string // empty: derived from the command
	Spec   Spec
	Settle time.Duration
	// Monitor is the argv that runs the monitor: the svc binary and its
	// hidden subcommand; the service's directory and spec are appended.
	Monitor []string
}

// StartResult is the first true thing about a started service.
type StartResult struct {
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	PID     int     `json:"pid,omitempty"`
	URL     string  `json:"url,omitempty"`
	Port    int     `json:"port,omitempty"`
	ReadyBy string  `json:"readyBy,omitempty"`
	AfterMs float64 `json:"afterMs"`
	// For a service that ended: its exit code or signal, and its log's tail.
	ExitCode        *int     `json:"exitCode,omitempty"`
	Signal          string   `json:"signal,omitempty"`
	Tail            []string `json:"tail,omitempty"`
	Error           string   `json:"error,omitempty"`
	PortPreoccupied bool     `json:"portPreoccupied,omitempty"`
	PortHolder      string   `json:"portHolder,omitempty"`
	Restarts        int      `json:"restarts,omitempty"`
	// Background: svc run sent the command to the background.
	Background bool `json:"background,omitempty"`
}

// Start starts a service under a new monitor and returns at the first of:
// ready, exit, failure, or the settle window. When ctx is done first, the
// service is left running and Start returns what it knows with ctx's error
// — as soon as the monitor has started the command, so there is a pid to
// show.
func Start(ctx context.Context, o StartOptions) (*StartResult, error) {
	if err := EnsureHome(o.Home); err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = uniqueName(o.Home, DefaultName(o.Spec.Command))
	} else if err := ValidName(name); err != nil {
		return nil, err
	}
	d := Dir{Home: o.Home, Name: name}
	if Supervised(d) {
		return nil, fmt.Errorf("%w: a service called %s is running (svc stop %s, or --name)", ErrNameTaken, name, name)
	}
	if l, err := Look(d); err == nil && Live(l.Status) {
		return nil, fmt.Errorf("%w: %s lost its monitor but its process %d still runs (svc stop %s)", ErrNameTaken, name, l.PID, name)
	}
	if err := os.Mkdir(d.Path(), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	spec, err := json.Marshal(o.Spec)
	if err != nil {
		return nil, err
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer reportR.Close()
	errFile, err := os.OpenFile(d.Path()+"/monitor.err", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		reportW.Close()
		return nil, err
	}
	defer errFile.Close()
	args := append(append([]string{}, o.Monitor[1:]...), d.Home, name, string(spec))
	cmd := exec.Command(o.Monitor[0], args...)
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = errFile, errFile
	cmd.ExtraFiles = []*os.File{reportW}
	if o.Spec.UntilExit > 0 {
		// The process is pinned now, by a pidfd the monitor inherits, so a
		// recycled pid can never stand in for it.
		fd, err := unix.PidfdOpen(o.Spec.UntilExit, 0)
		if err != nil {
			reportW.Close()
			return nil, fmt.Errorf("--until-exit %d: %v", o.Spec.UntilExit, err)
		}
		pidfd := os.NewFile(uintptr(fd), "until-exit")
		defer pidfd.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, pidfd)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		reportW.Close()
		return nil, fmt.Errorf("starting the monitor: %w", err)
	}
	reportW.Close()
	// Reaps the monitor if it ends while we are here; once it has, every
	// file it held is closed.
	monitorGone := make(chan struct{})
	go func() { cmd.Wait(); close(monitorGone) }()
	waitMonitor := func() {
		select {
		case <-monitorGone:
		case <-time.After(2 * time.Second):
		}
	}

	reports := make(chan Report, 8)
	go func() {
		defer close(reports)
		dec := json.NewDecoder(bufio.NewReader(reportR))
		for {
			var r Report
			if dec.Decode(&r) != nil {
				return
			}
			reports <- r
		}
	}()
	// The settle window only starts once the monitor holds the lock and has
	// started the command: under load, a monitor can take longer than the
	// window just to come up, and silence from it proves nothing yet.
	var settle <-chan time.Time
	upTimer := time.NewTimer(30 * time.Second)
	defer upTimer.Stop()
	res := &StartResult{Name: name, Status: Starting}
	begin := time.Now()
	done := ctx.Done()
	for {
		select {
		case <-done:
			if res.PID != 0 {
				return withState(d, res, begin), ctx.Err()
			}
			done = nil // the "started" report will end the wait
		case r, ok := <-reports:
			if !ok {
				if res.PID == 0 {
					return nil, fmt.Errorf("the monitor of %s ended before starting it (see %s/monitor.err)", name, d.Path())
				}
				return withState(d, res, begin), nil
			}
			switch r.Event {
			case "taken":
				return nil, fmt.Errorf("%w: a service called %s is running", ErrNameTaken, name)
			case "failed":
				res.Status, res.Error = Failed, r.Error
				res.AfterMs = ms(time.Since(begin))
				waitMonitor() // the monitor is exiting: let it go first
				return res, nil
			case "started":
				res.PID = r.PID
				if ctx.Err() != nil {
					return withState(d, res, begin), ctx.Err()
				}
				t := time.NewTimer(o.Settle)
				defer t.Stop()
				settle = t.C
			case "ready":
				res.Status, res.URL, res.Port, res.ReadyBy, res.AfterMs, res.Restarts = Ready, r.URL, r.Port, r.By, r.AfterMs, r.Restarts
				if r.PID != 0 {
					res.PID = r.PID
				}
				return res, nil
			case "running":
				res.Status = Running
				return withState(d, res, begin), nil
			case "exited":
				res.Status, res.ExitCode, res.Signal, res.Tail, res.AfterMs = Exited, r.ExitCode, r.Signal, r.Tail, r.AfterMs
				// The monitor exits right after this report; once start
				// returns, every other command must see it gone.
				waitMonitor()
				return res, nil
			}
		case <-settle:
			return withState(d, res, begin), nil
		case <-upTimer.C:
			if res.PID == 0 {
				return nil, fmt.Errorf("the monitor of %s did not start the command within 30s (see %s/monitor.err)", name, d.Path())
			}
		}
	}
}

func withState(d Dir, res *StartResult, begin time.Time) *StartResult {
	res.AfterMs = ms(time.Since(begin))
	if s, err := ReadState(d); err == nil {
		res.PortPreoccupied, res.PortHolder, res.Restarts = s.PortPreoccupied, s.PortHolder, s.Restarts
		if s.PID != 0 {
			res.PID = s.PID
		}
		if res.Port == 0 {
			res.Port = s.Port
		}
	}
	return res
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// uniqueName returns base, or base-2, base-3 … : the first not in use by a
// live service.
func uniqueName(home, base string) string {
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = base + "-" + strconv.Itoa(i)
		}
		if !Supervised(Dir{Home: home, Name: name}) {
			return name
		}
	}
}

// Listing is one service as svc ls shows it, liveness reconciled.
type Listing struct {
	State
	// Supervised: a monitor holds the lock.
	Supervised bool `json:"supervised"`
}

// Look reads one service and reconciles its recorded state with what is
// true: a live status with no monitor is "stopped" unless its process,
// identity confirmed, still runs (then it stays, unsupervised).
func Look(d Dir) (*Listing, error) {
	s, err := ReadState(d)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(d.Path()); serr != nil {
				return nil, fmt.Errorf("no service called %s", d.Name)
			}
			s = &State{Name: d.Name, Status: Stopped}
		} else {
			return nil, err
		}
	}
	l := &Listing{State: *s, Supervised: Supervised(d)}
	if !l.Supervised && Live(s.Status) {
		// The monitor may have written its last state and exited since the
		// read above; it lets go of the lock only after that write, so a
		// second read now is final.
		if again, err := ReadState(d); err == nil {
			l.State = *again
		}
	}
	if !l.Supervised && Live(l.Status) {
		if l.PID == 0 || !proc.Alive(proc.Info{PID: l.PID, Start: l.PIDStart}) {
			l.Status = Stopped
		} else if l.LogNote == "" {
			last, _ := LastRow(d)
			l.LogNote = fmt.Sprintf("its monitor is gone: the log ends at row %d, and nothing it prints now is kept", last)
		}
	}
	return l, nil
}

// Stop asks the service's monitor to stop it and waits until the monitor
// is gone.
func Stop(d Dir, grace time.Duration) (*StopReport, error) {
	if _, err := os.Stat(d.Path()); err != nil {
		return nil, fmt.Errorf("no service called %s", d.Name)
	}
	if !Supervised(d) {
		l, err := Look(d)
		if err != nil {
			return nil, err
		}
		if Live(l.Status) {
			return stopOrphan(d, l, grace), nil
		}
		return &StopReport{Name: d.Name, Status: l.Status, Note: "not running"}, nil
	}
	mon, monOK := monitorProc(d)
	c, err := net.DialTimeout("unix", d.Socket(), 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the monitor of %s: %v", d.Name, err)
	}
	defer c.Close()
	req, _ := json.Marshal(map[string]any{"op": "stop", "graceMs": grace.Milliseconds()})
	if _, err := c.Write(append(req, '\n')); err != nil {
		return nil, err
	}
	var rep StopReport
	if err := json.NewDecoder(c).Decode(&rep); err != nil {
		return nil, fmt.Errorf("the monitor of %s did not answer: %v", d.Name, err)
	}
	// Gone means gone: the lock goes with the monitor's first descriptors,
	// and its log and stderr file may still be open for a moment after.
	deadline := time.Now().Add(10 * time.Second)
	waitUnlocked(d, 10*time.Second)
	if monOK {
		proc.WaitGone([]proc.Info{mon}, deadline, nil)
	}
	return &rep, nil
}

// monitorProc returns the monitor process of a supervised service, from
// its state, once /proc confirms the pid runs svc's monitor for this very
// service.
func monitorProc(d Dir) (proc.Info, bool) {
	s, err := ReadState(d)
	if err != nil || s.MonitorPID <= 0 {
		return proc.Info{}, false
	}
	info, err := proc.Stat(s.MonitorPID)
	if err != nil {
		return proc.Info{}, false
	}
	argv, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.MonitorPID))
	if err != nil || !bytes.Contains(argv, []byte("\x00"+MonitorCommand+"\x00"+d.Home+"\x00"+d.Name+"\x00")) {
		return proc.Info{}, false
	}
	return info, true
}

// stopOrphan stops a service whose monitor is gone but whose process,
// identity confirmed by its start time, still runs: its process group and
// its descendants get the ladder (without the monitor, escapers that left
// both cannot be found).
func stopOrphan(d Dir, l *Listing, grace time.Duration) *StopReport {
	if grace <= 0 {
		grace = l.Spec.StopGrace
	}
	if grace <= 0 {
		grace = 5 * time.Second
	}
	// Identity first: the recorded pid must still have its start time.
	if !proc.Alive(proc.Info{PID: l.PID, Start: l.PIDStart}) {
		return &StopReport{Name: d.Name, Status: Stopped, Note: "not running"}
	}
	rep := LadderFrom(l.PID, grace)
	rep.Name, rep.Status = d.Name, Stopped
	rep.Note = "its monitor was gone; stopped by pid and start time"
	now := time.Now()
	s := l.State
	s.Status, s.EndedAt = Stopped, &now
	s.LogNote = "the log ends where its monitor died"
	_ = WriteState(d, &s)
	return &rep
}

// waitUnlocked blocks until the monitor has released the lock (it exits
// right after its last state write), or the timeout.
func waitUnlocked(d Dir, timeout time.Duration) bool {
	f, err := os.Open(d.LockPath())
	if err != nil {
		return true
	}
	// The goroutine owns f: on a timeout it is still blocked in flock on
	// f's descriptor, which must not be closed (and its number reused)
	// under it. It unlocks and closes f once flock returns.
	done := make(chan error, 1)
	go func() {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH)
		if err == nil {
			unix.Flock(int(f.Fd()), unix.LOCK_UN)
		}
		f.Close()
		done <- err
	}()
	select {
	case err := <-done:
		return err == nil
	case <-time.After(timeout):
		return false
	}
}

// Remove forgets a service that is not running.
func Remove(d Dir) error {
	if Supervised(d) {
		return fmt.Errorf("%s is running; svc stop it first, or svc rm --force", d.Name)
	}
	if _, err := os.Stat(d.Path()); err != nil {
		return fmt.Errorf("no service called %s", d.Name)
	}
	return os.RemoveAll(d.Path())
}

// Follow calls fn for each row after since as the log grows, until the
// service has ended and its log is drained (nil), or ctx is done (nil: the
// caller asked to stop).
func Follow(ctx context.Context, d Dir, since int64, fn func(row int64, line []byte) error) error {
	w, _ := newWatcher(d.Path())
	defer w.close()
	for {
		alive := Supervised(d)
		last, err := ReadRows(d, since, fn)
		if err != nil {
			return err
		}
		since = last
		if !alive {
			_, err := ReadRows(d, since, fn) // anything written before the end
			return err
		}
		if w.wait(ctx, 250*time.Millisecond) != nil {
			return nil
		}
	}
}

// WaitReady waits until the service is ready (nil), has ended (an error
// naming its status), the timeout passes (os.ErrDeadlineExceeded) or ctx
// is done (its error).
func WaitReady(ctx context.Context, d Dir, timeout time.Duration) (*Listing, error) {
	w, _ := newWatcher(d.Path())
	defer w.close()
	deadline := time.Now().Add(timeout)
	for {
		l, err := Look(d)
		if err != nil {
			return nil, err
		}
		switch {
		case l.Status == Ready:
			return l, nil
		case !Live(l.Status):
			return l, fmt.Errorf("%s is %s, not ready", d.Name, l.Status)
		case l.Status == Running:
			return l, fmt.Errorf("%s is running but showed no readiness within its ready timeout", d.Name)
		}
		left := time.Until(deadline)
		if timeout > 0 && left <= 0 {
			return l, os.ErrDeadlineExceeded
		}
		if timeout <= 0 {
			left = time.Hour
		}
		if err := w.wait(ctx, min(left, 250*time.Millisecond)); err != nil {
			return l, err
		}
	}
}

// watcher wakes on changes in a directory (inotify). The inotify
// descriptor is non-blocking and read through the runtime's poller, so a
// deadline bounds each wait, cancelling ctx ends one at once, and no
// goroutine is left blocked in a read after close. A nil watcher (no
// inotify here) waits out each timeout; the timeout is also the floor for
// an event missed.
type watcher struct {
	f   *os.File
	buf []byte
}

func newWatcher(dir string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE|unix.IN_DELETE); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &watcher{f: os.NewFile(uintptr(fd), "inotify:"+dir), buf: make([]byte, 4096)}, nil
}

// wait returns when something in the directory changed or timeout has
// passed (nil), or when ctx is done (its error).
func (w *watcher) wait(ctx context.Context, timeout time.Duration) error {
	if w == nil {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		return ctx.Err()
	}
	w.f.SetReadDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { w.f.SetReadDeadline(time.Unix(1, 0)) })
	w.f.Read(w.buf) // events, a deadline, or ctx: each is a reason to look again
	stop()
	return ctx.Err()
}

func (w *watcher) close() {
	if w != nil {
		w.f.Close()
	}
}
