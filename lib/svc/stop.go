package svc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc/sock"
	"golang.org/x/sys/unix"
)

// Stop asks the service's monitor to stop it and waits until the monitor
// is gone. A service whose monitor was killed is stopped here, by pid and
// start time.
func Stop(d Dir, grace time.Duration) (*StopReport, error) {
	if _, err := os.Stat(d.Path()); err != nil {
		return nil, &NotFoundError{d.Name}
	}
	if !Supervised(d) {
		l, err := Look(d)
		if err != nil {
			return nil, err
		}
		if l.Status.Live() {
			return stopOrphan(d, grace)
		}
		return notRunning(d.Name, l.Status), nil
	}
	mon, monOK := monitorProc(d)
	rep, err := ask(d, Request{Op: OpStop, GraceMs: grace.Milliseconds()})
	if errors.Is(err, ErrNotMonitor) {
		return nil, err
	}
	if err != nil {
		// The service may have ended by itself while the request waited
		// (its monitor was busy stopping what it left, then exited): then
		// there was nothing to stop.
		waitUnlocked(d, 2*time.Second)
		if l, lerr := Look(d); lerr == nil && !l.Status.Live() {
			return notRunning(d.Name, l.Status), nil
		}
		return nil, err
	}
	// Gone means gone: the lock goes with the monitor's first descriptors,
	// and its log and stderr file may still be open for a moment after.
	deadline := time.Now().Add(10 * time.Second)
	waitUnlocked(d, 10*time.Second)
	if monOK {
		proc.WaitGone([]proc.Info{mon}, deadline, nil)
	}
	return rep, nil
}

func notRunning(name string, status Status) *StopReport {
	return &StopReport{Name: name, Status: status, NotRunning: true, Note: "not running"}
}

// ask sends one request to the monitor and reads its reply.
func ask(d Dir, req Request) (*StopReport, error) {
	c, err := dialMonitor(d)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	var rep Reply
	if err := json.NewDecoder(c).Decode(&rep); err != nil {
		return nil, fmt.Errorf("the monitor of %s did not answer: %v", d.Name, err)
	}
	if rep.Error != "" {
		return nil, fmt.Errorf("the monitor of %s refused the request: %s", d.Name, rep.Error)
	}
	if rep.StopReport == nil {
		return nil, fmt.Errorf("the monitor of %s answered with no report", d.Name)
	}
	return rep.StopReport, nil
}

// dialMonitor connects to d's monitor, on the socket state.json records
// (a state from before there was one: the legacy name), and makes sure,
// before anything is sent or read, that what listens there is that
// monitor: by the kernel's record of the listener (SO_PEERCRED), a
// process of this user and, when the state records the monitor's pid,
// that process. Anything else is a *NotMonitorError.
func dialMonitor(d Dir) (*os.File, error) {
	name, monitorPID := d.legacySocket(), 0
	if s, err := ReadState(d); err == nil {
		if s.Socket != "" {
			name = s.Socket
		}
		monitorPID = s.MonitorPID
	}
	c, err := sock.DialUnix(name, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the monitor of %s: %v", d.Name, err)
	}
	p, err := sock.PeerOf(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("cannot tell who listens on the monitor socket of %s: %v", d.Name, err)
	}
	if other := p.UID != os.Geteuid(); other || monitorPID > 0 && p.PID != monitorPID {
		c.Close()
		return nil, &NotMonitorError{Name: d.Name, PID: p.PID, UID: p.UID, OtherUser: other, MonitorPID: monitorPID}
	}
	return c, nil
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
	if err != nil || !isMonitorOf(argv, d) {
		return proc.Info{}, false
	}
	return info, true
}

// stopOrphan stops a service whose monitor is gone but whose process,
// identity confirmed by its start time, still runs: its process group and
// its descendants get the ladder (without the monitor, escapers that left
// both cannot be found). It takes the service's lock first — the dead
// monitor's — so that state.json still has one writer at a time: whoever
// holds the lock.
func stopOrphan(d Dir, grace time.Duration) (*StopReport, error) {
	lock, ok, err := TryLock(d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s is being stopped or started by another svc; try again", d.Name)
	}
	defer lock.Close()
	l, err := Look(d)
	if err != nil {
		return nil, err
	}
	// Identity first: the recorded pid must still have its start time.
	if !l.Status.Live() || !proc.Alive(proc.Info{PID: l.State.PID, Start: l.PIDStart}) {
		return notRunning(d.Name, Stopped), nil
	}
	if grace <= 0 {
		grace = l.Spec.StopGrace
	}
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	rep := &StopReport{Name: d.Name, LadderReport: proc.LadderFromSparing(l.State.PID, l.Spec.Signal(), grace, IsMonitor), Status: Stopped,
		Note: "its monitor was gone; stopped by pid and start time"}
	now := time.Now()
	s := l.State
	s.Status, s.EndedAt = Stopped, &now
	s.LogNote = "the log ends where its monitor died"
	_ = WriteState(d, &s)
	return rep, nil
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
