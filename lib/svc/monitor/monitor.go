// Package monitor is the process that supervises one service for its
// whole life: "svc-monitor HOME NAME", started by svc start in a new
// session. It holds the service's lock (its liveness, for every other
// command), is a child subreaper and the one owner of every wait, starts
// the command in its own process group with stdin at /dev/null and its
// output in one pipe into the log (or all three on a terminal, --pty), watches for readiness, answers stop
// requests on its socket, follows a daemon the command leaves when it
// exits 0, restarts the command when asked to, and writes
// state.json — the only writer while it lives.
//
// The files are split by job: monitor.go (start and the supervising
// loop), follow.go (a daemon the command leaves, followed as the
// service; a ready report held while the command is about to leave
// one), output.go (the output into the log, and the lines readiness
// looks at), watch.go (readiness), control.go (the socket, and what stops
// the service), state.go (the recorded state), pty.go (a --pty
// service's terminal: svc send, svc attach, stop keys).
package monitor

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/logfile"
	"github.com/agentry/agentry/lib/svc/ready"
)

// monitor supervises one service.
type monitor struct {
	d      svc.Dir
	spec   svc.Spec
	ends   *svc.MonitorEnds
	reaper *proc.Reaper
	log    *logfile.Writer
	cur    *launched // the current launch; only the supervising goroutine changes it
	start  time.Time
	rec    *recorder
	out    *tail
	term   *terminal // a --pty service's, for svc send and attach (pty.go); else nil
	events events
	// held is a ready report kept back while the command daemonizes, for
	// at most holdReady (holdEnds); only the supervising goroutine uses them.
	held     *readyReport
	holdEnds <-chan time.Time
	logMu    sync.Mutex // the output and svc's own rows into the log (restart.go)
	// sickRestarts counts the restarts for failed health probes since a
	// probe last passed; only the supervising goroutine uses it.
	sickRestarts int
}

// events are what the supervising loop waits on.
type events struct {
	ready chan readyReport
	stop  chan stopRequest
	term  chan os.Signal // SIGTERM to the monitor stops the service
	until chan struct{}  // the --until-exit process ended
	// health has the health probes' results (health.go); change, a
	// burst of changes to restart for (changes.go, cascade.go). Nil
	// without them.
	health chan probeResult
	change chan svc.Change
}

// launched is one launch of the service's command; with Spec.Restart there
// are several in a monitor's life.
type launched struct {
	n        int
	child    *proc.Child   // the command: the leader of the launch's process group
	comm     string        // the command's program, as /proc names it
	out      *os.File      // the read end of its output pipe
	copyDone chan struct{} // closed when its output is all in the log
	start    time.Time
	// followed is the daemon the command left when it exited 0, and
	// daemon what /proc said of it; nil while the command itself is
	// followed. Only the supervising goroutine sets them.
	followed   *proc.Child
	daemon     proc.Info
	followedAt time.Time
	over       chan struct{} // closed once the launch has ended
	overOnce   sync.Once
	probing    bool // its health probes run (health.go); only the supervising goroutine sets it
}

// main is the process the launch follows: the command, or the daemon it
// left.
func (l *launched) main() *proc.Child {
	if l.followed != nil {
		return l.followed
	}
	return l.child
}

// ended is closed once the launch has ended: its command exited and left
// no daemon to follow, or the daemon followed ended, or it was stopped.
// A followed daemon keeps the launch going after its command's exit.
func (l *launched) ended() <-chan struct{} { return l.over }

func (l *launched) end() { l.overOnce.Do(func() { close(l.over) }) }

// Run is the monitor process: it takes the lock, starts the service and
// supervises it until it ends or is stopped, and returns the monitor's
// exit status: 0 when the service ended, 1 when it could not start, 2
// when another monitor has it. Its error is a handoff from svc start
// that is not there (svc.Inherit's).
func Run(d svc.Dir) (int, error) {
	ends, err := svc.Inherit()
	if err != nil {
		return 0, err
	}
	return supervise(d, ends), nil
}

func supervise(d svc.Dir, ends *svc.MonitorEnds) int {
	m := &monitor{d: d, spec: ends.Spec, ends: ends, start: time.Now(), out: &tail{}, term: newTerminal(ends.Spec),
		events: events{ready: make(chan readyReport, 4), stop: make(chan stopRequest), term: make(chan os.Signal, 1), until: make(chan struct{})}}
	lock, ok, err := svc.TryLock(d)
	if err != nil {
		m.send(svc.Report{Event: svc.EvFailed, Error: "taking the lock: " + err.Error()})
		return 1
	}
	if !ok {
		m.send(svc.Report{Event: svc.EvTaken})
		return 2
	}
	defer lock.Close() // the lock is the monitor's life: held until it exits
	m.rec = newRecorder(d, svc.State{Name: d.Name, Status: svc.Starting, Spec: m.spec, MonitorPID: os.Getpid(), StartedAt: m.start})
	// Anything that double-forks out of the service's group reparents to
	// the monitor, which can then stop it with the rest.
	m.reaper = proc.NewReaper()
	handleSignals(m.events.term)

	if m.log, err = logfile.Open(d.Path(), m.spec.LogMax, m.spec.LogKeep); err != nil {
		return m.fail("opening the log: " + err.Error())
	}
	m.rec.log = m.log
	name, ln, err := listenControl()
	if err != nil {
		return m.fail("listening for stop requests: " + err.Error())
	}
	defer ln.Close()
	// The name is in state.json before svc start hears of the service:
	// it is how every other command finds the socket.
	from := m.log.NextRow() - 1
	m.rec.set(func(s *svc.State) { s.Socket, s.LogFrom = name, from })

	preoccupied := m.preoccupied()
	r, err := m.launch(1)
	if err != nil {
		return m.fail(err.Error())
	}
	m.cur = r
	info, _ := proc.Stat(r.child.PID())
	m.rec.set(func(s *svc.State) {
		s.PID, s.PIDStart = r.child.PID(), info.Start
		if preoccupied != "" {
			s.PortPreoccupied, s.PortHolder, s.Port = true, preoccupied, m.spec.ReadyPort
		}
	})
	m.send(svc.Report{Event: svc.EvStarted, PID: r.child.PID(), Holder: preoccupied})
	go m.serveControl(ln)
	m.watchChanges()
	if m.ends.Until != nil {
		go watchUntilExit(m.ends.Until, m.events.until)
	}
	return m.supervise()
}

// handleSignals has SIGTERM stop the service, and handles — does not
// ignore — the signals a terminal or a script sends: an ignored
// disposition would be inherited by the service across exec, and svc
// start may itself run with SIGINT, SIGQUIT or SIGPIPE ignored (a
// background job of a script). Handled signals are reset in the service.
func handleSignals(term chan os.Signal) {
	quiet := make(chan os.Signal, 8)
	signal.Notify(quiet, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGPIPE)
	go func() {
		for range quiet {
		}
	}()
	signal.Notify(term, syscall.SIGTERM)
}

// preoccupied names who holds --ready-port before the service starts.
func (m *monitor) preoccupied() string {
	if m.spec.ReadyPort <= 0 || !ready.Accepts(m.spec.ReadyPort) {
		return ""
	}
	if _, holder := ready.PortOwner(m.spec.ReadyPort, os.Getpid(), -1, svc.IsMonitor); holder != "" {
		return holder
	}
	return "another process"
}

func (m *monitor) send(r svc.Report) { _ = m.ends.Reports.Encode(r) }

func (m *monitor) sinceStart() float64 { return proc.Ms(time.Since(m.start)) }

func (m *monitor) fail(msg string) int {
	now := time.Now()
	m.rec.set(func(s *svc.State) { s.Status, s.Error, s.EndedAt = svc.Failed, msg, &now })
	m.send(svc.Report{Event: svc.EvFailed, Error: msg})
	return 1
}

// launch starts launch n of the service: its own process group, not tied to
// the monitor's life (a service outlives a monitor killed outright, and
// is stopped by pid and start time after); stdin at /dev/null; stdout and
// stderr into one pipe, in order (under --pty all three on the terminal). Its output is copied and watched for
// readiness at once; the state write (an fsync) comes after.
func (m *monitor) launch(n int) (*launched, error) {
	argv := m.spec.Command
	if len(argv) > 1 {
		if _, err := exec.LookPath(argv[0]); err != nil {
			return nil, fmt.Errorf("cannot run %s: %v", argv[0], unwrap(err))
		}
	}
	cmd := proc.ShellCommand(m.spec.Argv())
	cmd.Dir = m.spec.Cwd
	cmd.Env = serviceEnv(os.Environ(), m.d.Name, m.spec)
	r, w, err := m.outputEnds()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w // stdin stays nil: /dev/null, but under --pty:
	m.onTerminal(cmd, r, w)
	child, err := m.reaper.Start(cmd, proc.Options{Outlive: true})
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("cannot start the service: %v", err)
	}
	l := &launched{n: n, child: child, out: r, copyDone: make(chan struct{}), start: time.Now(), over: make(chan struct{})}
	if info, err := proc.Stat(child.PID()); err == nil {
		l.comm = info.Comm // the program: a child is started once it has exec'd
	}
	lines := make(chan string, 256)
	w8 := m.newWatch(l, lines)
	go m.copyOutput(l, w8, lines)
	go w8.decide()
	return l, nil
}

// outputEnds is where the service writes its output, and where the
// monitor reads it: a pipe, or with --pty a terminal.
func (m *monitor) outputEnds() (r, w *os.File, err error) {
	if t := m.spec.PTY; t != nil {
		r, w, err = proc.OpenPTY(t.Rows, t.Cols)
		if err != nil {
			return nil, nil, fmt.Errorf("opening a pseudo-terminal: %v", err)
		}
		return r, w, nil
	}
	return os.Pipe()
}

// serviceEnv is the service's environment: svc start's, $SVC_NAME (its
// name, with its project: what svc up and svc down run inside it go by),
// the spec's --env, $PORT for --port, and PYTHONUNBUFFERED=1 unless it is
// set either way, so that Python's output reaches the log when it is
// printed rather than in 8 KiB blocks.
func serviceEnv(base []string, name string, spec svc.Spec) []string {
	env := append(append(slices.DeleteFunc(slices.Clone(base), func(kv string) bool {
		return strings.HasPrefix(kv, svc.NameEnv+"=")
	}), svc.NameEnv+"="+name), spec.Env...)
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PYTHONUNBUFFERED=") }) {
		env = append(env, "PYTHONUNBUFFERED=1")
	}
	if spec.Port > 0 {
		env = append(env, "PORT="+strconv.Itoa(spec.Port)) // the last one wins
	}
	return env
}

func unwrap(err error) error {
	if e, ok := err.(*exec.Error); ok {
		return e.Err
	}
	return err
}

// supervise waits for what happens first, to the end.
func (m *monitor) supervise() int {
	readyTimer := time.NewTimer(m.spec.ReadyTimeout)
	defer readyTimer.Stop()
	failures := 0
	for {
		select {
		case r := <-m.events.ready:
			switch {
			case r.launch != m.cur.n: // from a launch that has ended
			case r.late:
				m.takeLateURL(r)
			default:
				m.takeReady(r)
			}
		case <-m.holdEnds:
			m.releaseReady() // the command did not exit: ready as it is
		case <-readyTimer.C:
			if !m.releaseReady() {
				m.becameRunning()
			}
		case <-m.cur.main().Exited():
			if m.follow() {
				// It daemonized: the daemon is the service now, and
				// ready once it is the one listening (a step of a
				// double fork that exits next is not).
				m.releaseReadyTo(m.cur.daemon.PID)
				continue
			}
			// A ready report held for a hand-over that did not come is
			// dropped: what listens is about to be stopped with the rest.
			m.held, m.holdEnds = nil, nil
			// The launch ended by itself: stop what it left behind, then
			// restart it or finish.
			exit := m.endLaunch()
			if !m.shouldRestart(exit) {
				if len(m.spec.Watch) > 0 {
					m.note("the command %s; a change to the files watched does not start it again: with --restart on-failure (restart = \"on-failure\"), a change restarts it at once after a crash", exit)
				}
				m.finish(exit, svc.Exited)
				return 0
			}
			if time.Since(m.cur.start) >= 10*time.Second {
				failures = 0 // it had been up a while: not a crash loop
			}
			backoff := min(500*time.Millisecond<<min(failures, 6), 30*time.Second)
			failures++
			// A row in the log, as a restart on a change or for health
			// has: the next run's lines do not simply follow the last's.
			m.note("the command %s; restarting in %v (--restart %s)", exit, backoff, m.spec.Restart)
			restartAt := time.Now().Add(backoff)
			m.rec.set(func(s *svc.State) {
				s.Status, s.URL, s.Ports, s.ReadyAt, s.Followed = svc.Starting, "", nil, nil, nil
				s.StopCause, s.StopNote = nil, "" // an earlier run's end is not this one's
				// Nothing runs until the restart: no pid of one that ended.
				s.PID, s.PIDStart, s.ServerPID, s.ServerStart, s.RestartAt = 0, 0, 0, 0, &restartAt
			})
			if stopped := m.backoff(backoff); stopped != nil {
				m.finishStopped(stopped)
				return 0
			}
			if err := m.relaunch(); err != nil {
				return 1
			}
			// Counted once it is made: one awaited is not yet a restart.
			m.rec.set(func(s *svc.State) { s.Restarts, s.Restarted.Crash = s.Restarts+1, s.Restarted.Crash+1 })
			readyTimer.Reset(m.spec.ReadyTimeout)
		case h := <-m.events.health:
			if !m.takeHealth(h) {
				continue
			}
			if m.sickRestarts >= sickRestartsMost {
				m.leaveSick()
				continue
			}
			m.sickRestarts++
			if err := m.restartFor(forUnhealthy, nil); err != nil {
				return 1
			}
			readyTimer.Reset(m.spec.ReadyTimeout)
		case c := <-m.events.change:
			m.noteChange(c)
			if err := m.restartFor(forChange, &c); err != nil {
				return 1
			}
			readyTimer.Reset(m.spec.ReadyTimeout)
		case <-m.events.until:
			m.events.until = nil
			m.noteUntilExit()
			m.selfStop()
		case <-m.events.term:
			// Someone stopped the monitor itself: stop the service first.
			m.selfStop()
		case req := <-m.events.stop:
			m.stop(req)
			return 0
		}
	}
}

func (m *monitor) becameReady(r readyReport) {
	if r.Event == svc.EvRunning { // a watcher, known from its command line
		m.becameRunning()
		return
	}
	now := r.at
	rep := r.Report
	rep.PID = m.cur.main().PID()
	server := m.server(rep)
	m.rec.set(func(s *svc.State) {
		if s.Status == svc.Starting || s.Status == svc.Running {
			s.Status, s.URL, s.Port, s.Ports, s.ReadyBy, s.ReadyAt = svc.Ready, rep.URL, rep.Port, rep.Ports, rep.By, &now
			s.Warning = rep.Warning
			s.PortPreoccupied, s.PortHolder = false, ""
			s.ServerPID, s.ServerStart = server.PID, server.Start
		}
		rep.Restarts, rep.Followed = s.Restarts, s.Followed
	})
	m.probeHealth(m.cur)
	settled(m.cur)
	if server.PID != 0 {
		rep.PID = server.PID
	}
	m.send(rep)
}

// server is the process that holds the listening socket a ready report
// came from, when it is not the service's own (a server /bin/sh -c
// started and waits for): the pid every face shows from then on.
func (m *monitor) server(rep svc.Report) proc.Info {
	if rep.Server == 0 || rep.Server == rep.PID {
		return proc.Info{}
	}
	p, err := proc.Stat(rep.Server)
	if err != nil {
		return proc.Info{}
	}
	return p
}

// endLaunch stops what an ended launch left in its tree, waits for its output
// to be in the log, and records how it ended: the exit of its command, or
// of the daemon it followed.
func (m *monitor) endLaunch() proc.Exit {
	l := m.cur
	l.end()
	exit := l.main().Wait()
	lad := proc.LadderSparing(os.Getpid(), m.group(l), m.spec.Signal(), m.spec.StopGrace, svc.IsMonitor)
	if n := len(signalledPIDs(lad)); n > 0 {
		m.rec.set(func(s *svc.State) { s.StopCause = m.leftBehind(l, exit, n) })
	}
	m.drainLaunch(l)
	m.rec.addLaunch(l, exit)
	return exit
}

// leftBehind is what the end of a launch stopped: n processes redis-server
// left behind, say, not followed because of NoFollow.
func (m *monitor) leftBehind(l *launched, exit proc.Exit, n int) *svc.StopCause {
	who := l.main().Comm() // the program as it ended: setpriv … postgres is postgres
	switch {
	case who != "":
	case l.followed != nil:
		who = l.daemon.Comm
	default:
		who = l.comm // "" when unknown
	}
	c := &svc.StopCause{Kind: svc.LeftBehind, N: n, Program: who}
	switch {
	case !exit.OK() || l.followed != nil:
	case m.spec.Project != nil && m.spec.Project.Oneshot:
		c.NotFollowed = svc.OneShot
	case m.spec.NoFollow:
		c.NotFollowed = svc.NoFollow
	}
	return c
}

func signalledPIDs(lad proc.LadderReport) map[int]bool {
	pids := map[int]bool{}
	for _, s := range lad.Signalled {
		pids[s.PID] = true
	}
	return pids
}

func (m *monitor) relaunch() error {
	r, err := m.launch(m.cur.n + 1)
	if err != nil {
		now := time.Now()
		m.rec.set(func(s *svc.State) {
			s.Status, s.Error, s.EndedAt, s.RestartAt = svc.Failed, "restarting: "+err.Error(), &now, nil
		})
		return err
	}
	m.cur = r
	info, _ := proc.Stat(r.child.PID())
	at := r.start
	m.rec.set(func(s *svc.State) {
		s.PID, s.PIDStart, s.Error, s.ServerPID, s.ServerStart, s.RestartAt = r.child.PID(), info.Start, "", 0, 0, nil
		s.RunStartedAt = &at
	})
	return nil
}

// shouldRestart applies Spec.Restart and Spec.MaxRestarts to a launch's end.
func (m *monitor) shouldRestart(exit proc.Exit) bool {
	switch m.spec.Restart {
	case "always":
	case "on-failure":
		if exit.OK() {
			return false
		}
	default:
		return false
	}
	restarts := m.rec.get().Restarts
	if m.spec.MaxRestarts > 0 && restarts >= m.spec.MaxRestarts {
		m.rec.set(func(s *svc.State) { s.StopCause = &svc.StopCause{Kind: svc.GaveUp, N: restarts} })
		return false
	}
	return true
}

// backoff waits before a restart; a stop in the meantime ends it, and is
// returned.
func (m *monitor) backoff(d time.Duration) *stopRequest {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case c := <-m.events.change: // a fix, say: no more waiting
		m.changedInBackoff(c)
		return nil
	case req := <-m.events.stop:
		return &req
	case <-m.events.term:
		return &stopRequest{}
	case <-m.events.until:
		m.events.until = nil
		m.noteUntilExit()
		return &stopRequest{}
	}
}

func (m *monitor) noteUntilExit() {
	m.rec.set(func(s *svc.State) {
		s.StopCause = &svc.StopCause{Kind: svc.UntilExit, PID: m.spec.UntilExit}
	})
}

// drainLaunch waits until a launch's output is all in the log, bounded: a
// process that escaped the tree may hold the pipe.
func (m *monitor) drainLaunch(r *launched) {
	select {
	case <-r.copyDone:
	case <-time.After(2 * time.Second):
		r.out.Close()
		<-r.copyDone
	}
}

// finish records the end: exit code or signal, the log closed, the
// terminal state written, and the report to svc start.
func (m *monitor) finish(exit proc.Exit, status svc.Status) {
	m.log.Close()
	now := time.Now()
	m.rec.set(func(s *svc.State) {
		s.Status, s.ExitCode, s.Signal, s.EndedAt = status, exit.Code, exit.SignalName(), &now
	})
	m.send(svc.Report{Event: svc.EvExited, Ended: exit.Ended(), AfterMs: m.sinceStart(), Tail: m.endTail()})
}

// endTail is the tail of the run's output for the report of its end: from
// the log, as status shows it, which holds every line (the tail kept in
// memory has lost the head of a crash that came in one read of more than
// its 64 KiB); from memory when logging stopped (a full disk).
func (m *monitor) endTail() []string {
	if m.log.Err() == nil {
		st := m.rec.get()
		if lines := svc.EndTail(m.d, &st); len(lines) > 0 {
			return lines
		}
	}
	return svc.CrashTail(m.out.lines(svc.StackReach))
}
