package monitor

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/ready"
)

// probeResult is one health probe of a launch: nil when it passed.
type probeResult struct {
	launch int
	failed *svc.HealthFailure
}

// probeHealth starts probing a launch that is ready (or running), every
// HealthEvery until it ends, when the spec has a health probe. Between
// probes it is a timer: nothing runs.
func (m *monitor) probeHealth(l *launched) {
	if !m.spec.Probes() || l.probing {
		return
	}
	l.probing = true
	if m.events.health == nil {
		m.events.health = make(chan probeResult)
	}
	go func(out chan<- probeResult) {
		t := time.NewTimer(m.spec.HealthEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-l.ended():
				return
			}
			began := time.Now()
			r := probeResult{launch: l.n, failed: m.probeOnce()}
			select {
			case out <- r:
			case <-l.ended():
				return
			}
			// The next probe a period after this one began; at once if it took longer.
			t.Reset(max(0, m.spec.HealthEvery-time.Since(began)))
		}
	}(m.events.health)
}

// probeOnce is one probe, its failure recorded as the monitor found it.
func (m *monitor) probeOnce() *svc.HealthFailure {
	h := m.spec.HealthSpec
	var err error
	switch {
	case h.HealthURL != "":
		err = ready.CheckHTTP(h.HealthURL, h.HealthTimeout)
	case h.HealthPort != 0:
		err = ready.CheckPort(h.HealthPort, h.HealthTimeout)
	default:
		return m.healthCommand()
	}
	if err == nil {
		return nil
	}
	f := &svc.HealthFailure{At: time.Now(), Kind: svc.ProbeRefused}
	var st *ready.StatusError
	switch {
	case errors.Is(err, ready.ErrProbeTimeout):
		f.Kind, f.TimeoutMs = svc.ProbeTimeout, proc.Ms(h.HealthTimeout)
	case errors.As(err, &st):
		f.Kind, f.Code = svc.ProbeStatus, st.Code
	default:
		f.Error = err.Error()
	}
	return f
}

// healthCommand runs --health-cmd once, in the service's directory and
// environment, given HealthTimeout to exit 0.
func (m *monitor) healthCommand() *svc.HealthFailure {
	c := proc.ShellCommand([]string{m.spec.HealthCmd})
	c.Dir = m.spec.Cwd
	c.Env = serviceEnv(os.Environ(), m.d.Name, m.spec)
	child, err := m.reaper.Start(c, proc.Options{})
	if err != nil {
		return &svc.HealthFailure{At: time.Now(), Kind: svc.ProbeRefused, Error: err.Error()}
	}
	t := time.NewTimer(m.spec.HealthTimeout)
	defer t.Stop()
	select {
	case <-child.Exited():
		if exit := child.Wait(); !exit.OK() {
			code := -1
			if exit.Code != nil {
				code = *exit.Code
			}
			return &svc.HealthFailure{At: time.Now(), Kind: svc.ProbeExit, Code: code}
		}
		return nil
	case <-t.C:
		child.Stop(syscall.SIGKILL, time.Second)
		return &svc.HealthFailure{At: time.Now(), Kind: svc.ProbeTimeout, TimeoutMs: proc.Ms(m.spec.HealthTimeout)}
	}
}

// sickRestartsMost is how many restarts in a row for failed health
// probes, with no probe passing between them, the monitor makes: a
// server that fails its probe however often it starts is left running,
// unhealthy, rather than restarted for ever.
const sickRestartsMost = 5

// leaveSick gives up restarting a service for its failed probes: it
// stays as it is, unhealthy, and is still probed (one that passes makes
// it ready, and restarts on failure are made again).
func (m *monitor) leaveSick() {
	st := m.rec.get()
	if st.Health != nil && st.Health.GaveUp {
		return
	}
	m.rec.set(func(s *svc.State) {
		if s.Health != nil {
			s.Health.GaveUp = true
		}
	})
	m.note("unhealthy after %d restarts in a row for failed health probes, none passing between them: it is left running, unhealthy, and restarted again only once a probe has passed", sickRestartsMost)
}

// takeHealth records a probe of the current launch: HealthFailures in a
// row make a ready service Unhealthy (a row in the log says why), a
// probe that passes makes it ready again. It reports whether the service
// is to be restarted for it (--restart unhealthy).
func (m *monitor) takeHealth(r probeResult) bool {
	if r.launch != m.cur.n {
		return false
	}
	st := m.rec.get()
	if r.failed == nil {
		m.sickRestarts = 0
		if st.Health != nil && st.Health.Failures == 0 && st.Status != svc.Unhealthy && !st.Health.GaveUp {
			return false // nothing to write: healthy, as it was
		}
		m.rec.set(func(s *svc.State) {
			if s.Health == nil {
				s.Health = &svc.Health{}
			}
			s.Health.Failures, s.Health.Since, s.Health.GaveUp = 0, nil, false
			if s.Status == svc.Unhealthy {
				s.Status = svc.Ready
				if s.ReadyAt == nil {
					s.Status = svc.Running // it never listened
				}
			}
		})
		if st.Status == svc.Unhealthy {
			m.note("healthy again: the health probe passed")
		}
		return false
	}
	var became bool
	m.rec.set(func(s *svc.State) {
		if s.Health == nil {
			s.Health = &svc.Health{}
		}
		s.Health.Failures++
		s.Health.Last = r.failed
		if s.Health.Failures >= m.spec.HealthFailures && (s.Status == svc.Ready || s.Status == svc.Running) {
			now := time.Now()
			s.Status, s.Health.Since, became = svc.Unhealthy, &now, true
		}
	})
	if !became {
		return false
	}
	restart := m.spec.Restart == svc.RestartUnhealthy
	then := "; it keeps running (--restart unhealthy restarts it)"
	if restart {
		then = "; restarting it"
	}
	m.note("unhealthy: %d health probes failed in a row, the last: %s%s", m.spec.HealthFailures, r.failed.Said(m.spec.HealthSpec), then)
	return restart
}
