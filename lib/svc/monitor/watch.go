package monitor

import (
	"fmt"
	"os"
	"regexp"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/ready"
)

// readyReport is a ready Report from one run.
type readyReport struct {
	svc.Report
	at  time.Time
	run int
}

// watch decides one run's readiness: the --ready-* flag given, else an
// endpoint the service prints, probed until it accepts and is the
// service's own.
type watch struct {
	m        *monitor
	run      *run
	lines    <-chan string
	regex    bool        // lines go to a --ready-regex, not to endpoint detection
	watching atomic.Bool // it still reads lines
}

func (m *monitor) newWatch(r *run, lines <-chan string) *watch {
	w := &watch{m: m, run: r, lines: lines, regex: m.spec.ReadyRegex != ""}
	w.watching.Store(w.regex || (m.spec.ReadyURL == "" && m.spec.ReadyPort == 0 && m.spec.ReadyCmd == ""))
	return w
}

func (w *watch) ready(r svc.Report) {
	r.Event, r.AfterMs = svc.EvReady, w.m.sinceStart()
	w.m.events.ready <- readyReport{Report: r, at: time.Now(), run: w.run.n}
}

func (w *watch) decide() {
	defer w.watching.Store(false)
	defer func() { go drain(w.lines) }()
	spec := w.m.spec
	switch {
	case spec.ReadyRegex != "":
		w.byRegex(spec.ReadyRegex)
	case spec.ReadyURL != "":
		drain(w.lines)
		w.poll(10*time.Millisecond, func() bool { return ready.HTTP(spec.ReadyURL) }, svc.Report{URL: spec.ReadyURL, By: "url"})
	case spec.ReadyPort > 0:
		drain(w.lines)
		w.probe(ready.Endpoint{URL: fmt.Sprintf("http://localhost:%d", spec.ReadyPort), Port: spec.ReadyPort}, "port")
	case spec.ReadyCmd != "":
		drain(w.lines)
		w.poll(100*time.Millisecond, w.commandSucceeds, svc.Report{By: "command"})
	default:
		for l := range w.lines {
			if ep, ok := ready.FindEndpoint(l); ok {
				w.watching.Store(false)
				w.probe(ep, "output")
				return
			}
		}
	}
}

func (w *watch) byRegex(expr string) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return
	}
	for l := range w.lines {
		if re.MatchString(l) {
			w.ready(svc.Report{By: "regex"})
			return
		}
	}
}

// poll calls check every interval until it holds or the service ended.
func (w *watch) poll(interval time.Duration, check func() bool, r svc.Report) {
	for !w.m.ended() {
		if check() {
			w.ready(r)
			return
		}
		time.Sleep(interval)
	}
}

// commandSucceeds runs --ready-cmd once; it has 10 seconds to exit 0.
func (w *watch) commandSucceeds() bool {
	c := proc.ShellCommand([]string{w.m.spec.ReadyCmd})
	c.Dir = w.m.spec.Cwd
	child, err := w.m.reaper.Start(c, proc.Options{})
	if err != nil {
		return false
	}
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-child.Exited():
		return child.Wait().OK()
	case <-t.C:
		child.Stop(syscall.SIGKILL, time.Second)
		return false
	}
}

// probe waits until the endpoint's port accepts and belongs to the
// service's tree; a port held by someone else is recorded, not ready.
func (w *watch) probe(ep ready.Endpoint, by string) {
	noted := false
	pgid := w.run.child.PID()
	for !w.m.ended() {
		if ready.Accepts(ep.Port) {
			ours, holder := ready.PortOwner(ep.Port, os.Getpid(), pgid)
			if ours {
				w.ready(svc.Report{URL: ep.URL, Port: ep.Port, By: by})
				return
			}
			if !noted && holder != "" {
				noted = true
				w.m.rec.set(func(s *svc.State) { s.PortPreoccupied, s.PortHolder, s.Port = true, holder, ep.Port })
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func drain(lines <-chan string) {
	for range lines {
	}
}

func (m *monitor) ended() bool { return !m.rec.get().Status.Live() }
