package monitor

import (
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
)

// restartCause is why the monitor restarts a launch that has not ended:
// neither counts as a crash, against Spec.MaxRestarts or its backoff.
type restartCause int

const (
	forUnhealthy restartCause = iota // its health probes failed (health.go)
	forChange                        // a file changed, or a dependency restarted on one (changes.go, cascade.go)
)

// restartFor stops the current launch as a stop would (the stop signal
// to its group, then the rest of the tree, SIGKILL after the grace),
// records its end and starts the next one at once.
func (m *monitor) restartFor(cause restartCause, change *svc.Change) error {
	l := m.cur
	m.held, m.holdEnds = nil, nil
	proc.LadderSparing(os.Getpid(), m.group(l), m.spec.Signal(), m.spec.StopGrace, svc.IsMonitor)
	var exit proc.Exit
	select {
	case <-l.main().Exited():
		exit = l.main().Wait()
	case <-time.After(5 * time.Second):
	}
	l.end()
	m.drainLaunch(l)
	m.rec.addLaunch(l, exit)
	now := time.Now()
	if err := m.relaunch(); err != nil {
		return err
	}
	// One write with the new pid: a state that counts the restart names
	// the launch it started.
	m.rec.set(func(s *svc.State) {
		s.Status, s.URL, s.Ports, s.ReadyAt, s.Followed = svc.Starting, "", nil, nil, nil
		s.StopCause, s.StopNote = nil, ""
		if s.Health != nil {
			s.Health.Failures, s.Health.Since = 0, nil
		}
		switch cause {
		case forUnhealthy:
			s.Restarted.Unhealthy++
		case forChange:
			s.Restarted.Change++
			c := *change
			c.RestartedAt = now
			s.Change = &c
		}
	})
	return nil
}

// note writes a row of svc's own into the service's log, between the
// service's rows ("svc: …").
func (m *monitor) note(format string, args ...any) {
	m.logMu.Lock()
	defer m.logMu.Unlock()
	fmt.Fprintf(m.log, "svc: "+format+"\n", args...)
}

// writeLog is the service's output into the log; note's rows go between.
func (m *monitor) writeLog(data []byte) {
	m.logMu.Lock()
	defer m.logMu.Unlock()
	m.log.Write(data)
}

// settled gives the memory a restart's readiness used back to the
// system once the next launch is ready: the heap of a monitor that has
// restarted its service a few times otherwise stays near the runtime's
// 4 MB minimum goal, twice what an idle monitor needs. One collection
// per restart.
func settled(l *launched) {
	if l.n > 1 {
		debug.FreeOSMemory()
	}
}

// changedInBackoff records a change that cut short the wait before a
// restart after a crash: the restart is the crash's, made at once.
func (m *monitor) changedInBackoff(c svc.Change) {
	c.RestartedAt = time.Now()
	m.rec.set(func(s *svc.State) { s.Change = &c })
}

// noteChange writes the row that says why the service restarts on a
// change: "svc: restarting: src/a.py changed (and 2 more)", or after
// the service depended on.
func (m *monitor) noteChange(c svc.Change) {
	more := ""
	if c.Files > 1 {
		more = fmt.Sprintf(" (and %d more)", c.Files-1)
	}
	if c.Via != "" {
		m.note("restarting after %s, which restarted: %s changed%s", c.Via, c.File, more)
		return
	}
	m.note("restarting: %s changed%s", c.File, more)
}
