package svc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"golang.org/x/sys/unix"
)

// Report is one thing the monitor tells the starting svc, one JSON line
// each on the report pipe: "taken", "failed", "started", "ready",
// "running" or "exited".
type Report struct {
	Event    string   `json:"event"`
	Error    string   `json:"error,omitempty"`
	PID      int      `json:"pid,omitempty"`
	URL      string   `json:"url,omitempty"`
	Port     int      `json:"port,omitempty"`
	By       string   `json:"by,omitempty"`
	AfterMs  float64  `json:"afterMs,omitempty"`
	ExitCode *int     `json:"exitCode,omitempty"`
	Signal   string   `json:"signal,omitempty"`
	Tail     []string `json:"tail,omitempty"`
	Holder   string   `json:"holder,omitempty"`
	Restarts int      `json:"restarts,omitempty"`
	at       time.Time
	run      int
}

// svcRun is one run of the service's command; with --restart there are
// several in a monitor's life.
type svcRun struct {
	n        int
	cmd      *exec.Cmd
	out      *os.File      // the read end of its output pipe
	copyDone chan struct{} // closed when its output is all in the log
	watching atomic.Bool   // its readiness watcher still reads lines
	start    time.Time
}

// monitor supervises one service for its whole life.
type monitor struct {
	d      Dir
	spec   Spec
	report *json.Encoder
	lock   *os.File
	log    *LogWriter
	cur    *svcRun // the current run; only the supervising goroutine changes it
	start  time.Time

	mu       sync.Mutex
	state    State
	tail     []byte // the last output, for reports
	readyCh  chan Report
	stopReq  chan stopRequest
	exitCh   chan syscall.WaitStatus
	childPid int            // the current run's pid, under waitMu
	termCh   chan os.Signal // SIGTERM to the monitor stops the service
	untilCh  chan struct{}  // the --until-exit process ended

	waitMu  sync.Mutex
	waited  map[int]syscall.WaitStatus // reaped children other than the service
	waitSig chan struct{}              // closed and replaced on every reap
}

type stopRequest struct {
	grace time.Duration
	reply chan StopReport
	sent  chan struct{} // closed once the reply is written
}

// RunMonitor is the hidden "svc __monitor" process: it takes the lock,
// starts the service and supervises it until it ends or is stopped. It
// reports to the starting svc on report (fd 3), and returns the exit code.
func RunMonitor(d Dir, spec Spec, report *os.File) int {
	m := &monitor{d: d, spec: spec, report: json.NewEncoder(report), start: time.Now(),
		readyCh: make(chan Report, 4), stopReq: make(chan stopRequest), termCh: make(chan os.Signal, 1), untilCh: make(chan struct{}), exitCh: make(chan syscall.WaitStatus, 1)}
	lock, ok, err := TryLock(d)
	if err != nil {
		m.send(Report{Event: "failed", Error: "taking the lock: " + err.Error()})
		return 1
	}
	if !ok {
		m.send(Report{Event: "taken"})
		return 2
	}
	m.lock = lock
	// Anything that double-forks out of the service's group reparents to
	// the monitor, which can then stop it with the rest.
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	// Handled, not ignored: an ignored disposition would be inherited by
	// the service across exec, and svc start may itself have been run with
	// SIGINT, SIGQUIT or SIGPIPE ignored (a background job of a script).
	// Handled signals are reset to their defaults in the service.
	quiet := make(chan os.Signal, 8)
	signal.Notify(quiet, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGPIPE)
	go func() {
		for range quiet {
		}
	}()
	signal.Notify(m.termCh, syscall.SIGTERM)

	m.reserve()
	if m.log, err = OpenLog(d, spec.LogMax, spec.LogKeep); err != nil {
		return m.fail("opening the log: " + err.Error())
	}
	m.state = State{Name: d.Name, Status: Starting, Spec: spec, MonitorPID: os.Getpid(), StartedAt: m.start}
	ln, err := net.Listen("unix", d.Socket())
	if err != nil {
		return m.fail("listening for stop requests: " + err.Error())
	}
	defer ln.Close()

	var preoccupied string
	if spec.ReadyPort > 0 && Accepts(spec.ReadyPort) {
		_, preoccupied = PortOwner(spec.ReadyPort, os.Getpid(), -1)
		if preoccupied == "" {
			preoccupied = "another process"
		}
	}
	go m.reap()
	r, err := m.launch(1)
	if err != nil {
		return m.fail(err.Error())
	}
	m.cur = r
	info, _ := proc.Stat(r.cmd.Process.Pid)
	m.setState(func(s *State) {
		s.PID, s.PIDStart = r.cmd.Process.Pid, info.Start
		if preoccupied != "" {
			s.PortPreoccupied, s.PortHolder, s.Port = true, preoccupied, m.spec.ReadyPort
		}
	})
	m.send(Report{Event: "started", PID: r.cmd.Process.Pid, Holder: preoccupied})
	go m.serveControl(ln)
	if spec.UntilExit > 0 {
		go m.watchUntilExit()
	}
	return m.supervise()
}

func (m *monitor) send(r Report) { _ = m.report.Encode(r) }

func (m *monitor) fail(msg string) int {
	now := time.Now()
	m.setState(func(s *State) { s.Status, s.Error, s.EndedAt = Failed, msg, &now })
	m.send(Report{Event: "failed", Error: msg})
	return 1
}

// setState changes the recorded state and writes it out. When the disk is
// full, the space held in reserve is given up so that the state can still
// say so.
func (m *monitor) setState(f func(*State)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.state)
	if m.log != nil && m.log.Err() != nil && m.state.LogNote == "" {
		m.state.LogNote = "logging stopped: " + m.log.Err().Error()
	}
	if err := WriteState(m.d, &m.state); err != nil && errors.Is(err, syscall.ENOSPC) {
		if os.Remove(m.reservePath()) == nil {
			_ = WriteState(m.d, &m.state)
		}
	}
}

func (m *monitor) reservePath() string { return m.d.Path() + "/reserve" }

// reserve sets aside a little disk space, given up when the disk fills so
// that the state can still record that logging stopped.
func (m *monitor) reserve() {
	f, err := os.OpenFile(m.reservePath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(make([]byte, 64<<10))
	_ = f.Sync()
	f.Close()
}

// launch starts run n of the service: one argument through /bin/sh -c,
// several executed directly; its own process group; stdin at /dev/null;
// stdout and stderr into one pipe, in order. Its output is copied and
// watched for readiness at once; the state write (an fsync) comes after.
func (m *monitor) launch(n int) (*svcRun, error) {
	cmd, out, err := m.startCommand()
	if err != nil {
		return nil, err
	}
	r := &svcRun{n: n, cmd: cmd, out: out, copyDone: make(chan struct{}), start: time.Now()}
	lines := make(chan string, 256)
	r.watching.Store(m.spec.ReadyRegex != "" || (m.spec.ReadyURL == "" && m.spec.ReadyPort == 0 && m.spec.ReadyCmd == ""))
	go m.copyOutput(r, lines)
	go m.watchReady(r, lines)
	// The reaper may have collected a run that died at once, before its
	// pid was known: hand that exit over now.
	m.waitMu.Lock()
	m.childPid = cmd.Process.Pid
	ws, early := m.waited[cmd.Process.Pid]
	delete(m.waited, cmd.Process.Pid)
	m.waitMu.Unlock()
	if early {
		m.exitCh <- ws
	}
	return r, nil
}

func (m *monitor) startCommand() (*exec.Cmd, *os.File, error) {
	argv := m.spec.Command
	var cmd *exec.Cmd
	if len(argv) == 1 {
		cmd = exec.Command("/bin/sh", "-c", argv[0])
	} else {
		if _, err := exec.LookPath(argv[0]); err != nil {
			return nil, nil, fmt.Errorf("cannot run %s: %v", argv[0], errors.Unwrap(err))
		}
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	cmd.Dir = m.spec.Cwd
	cmd.Env = append(os.Environ(), m.spec.Env...)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, nil, err
	}
	defer devnull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, w, w
	proc.InGroup(cmd)
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, nil, fmt.Errorf("cannot start the service: %v", err)
	}
	w.Close()
	return cmd, r, nil
}

// reap is the one owner of every wait: the service's, and those of
// processes that reparented to the monitor.
func (m *monitor) reap() {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD)
	for {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err != nil || pid <= 0 {
				break
			}
			m.waitMu.Lock()
			if pid == m.childPid {
				m.childPid = 0
				m.waitMu.Unlock()
				m.exitCh <- ws
				continue
			}
			if m.waited == nil {
				m.waited = map[int]syscall.WaitStatus{}
			}
			m.waited[pid] = ws
			if m.waitSig != nil {
				close(m.waitSig)
				m.waitSig = nil
			}
			m.waitMu.Unlock()
		}
		<-sigs
	}
}

// waitChild waits for a child other than the service, which the reaper
// collects; false when the deadline passes first.
func (m *monitor) waitChild(pid int, deadline time.Time) (syscall.WaitStatus, bool) {
	for {
		m.waitMu.Lock()
		if ws, ok := m.waited[pid]; ok {
			delete(m.waited, pid)
			m.waitMu.Unlock()
			return ws, true
		}
		if m.waitSig == nil {
			m.waitSig = make(chan struct{})
		}
		sig := m.waitSig
		m.waitMu.Unlock()
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-sig:
			t.Stop()
		case <-t.C:
			return 0, false
		}
	}
}

// copyOutput moves the service's output into the log. While readiness is
// being looked for in the output, complete lines also go to the watcher;
// the last few KiB are kept for reports. Nothing else is done per line, so
// output goes through at the speed of the log file.
func (m *monitor) copyOutput(r *svcRun, lines chan<- string) {
	defer close(r.copyDone)
	defer close(lines)
	// A bigger pipe means fewer wake-ups for a chatty service.
	_, _ = unix.FcntlInt(r.out.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	buf := make([]byte, 256<<10)
	var partial []byte
	for {
		n, err := r.out.Read(buf)
		if n > 0 {
			data := buf[:n]
			failed := m.log.Err() != nil
			m.log.Write(data)
			if !failed && m.log.Err() != nil {
				// Logging just stopped (a full disk): the service goes on,
				// its output is still drained, and the state says so.
				m.setState(func(*State) {})
			}
			m.keepTail(data)
			if r.watching.Load() {
				partial = m.feedLines(partial, data, lines)
			}
		}
		if err != nil {
			if len(partial) > 0 && r.watching.Load() {
				lines <- string(partial)
			}
			return
		}
	}
}

// feedLines passes the complete lines of data, after what partial holds,
// to the watcher; lines are cut at 4 KiB, which is plenty for a URL. When
// looking for an endpoint, only lines that may hold one are passed, and a
// chunk with no ':' and no "port" in it is skipped at memchr speed.
func (m *monitor) feedLines(partial, data []byte, lines chan<- string) []byte {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return appendCapped(partial, data)
	}
	m.offer(appendCapped(partial, data[:i]), lines)
	data = data[i+1:]
	last := bytes.LastIndexByte(data, '\n')
	body, rest := data[:last+1], data[last+1:]
	if m.spec.ReadyRegex != "" || mayHoldEndpoint(body) {
		for len(body) > 0 {
			j := bytes.IndexByte(body, '\n')
			m.offer(body[:min(j, 4096)], lines)
			body = body[j+1:]
		}
	}
	return appendCapped(partial[:0], rest)
}

func appendCapped(dst, src []byte) []byte {
	if room := 4096 - len(dst); room > 0 {
		dst = append(dst, src[:min(len(src), room)]...)
	}
	return dst
}

// offer passes one line to the watcher if it may matter, never blocking.
func (m *monitor) offer(line []byte, lines chan<- string) {
	if m.spec.ReadyRegex == "" && !mayHoldEndpoint(line) {
		return
	}
	select {
	case lines <- string(line):
	default: // the watcher is behind; it needs only the first endpoint
	}
}

// mayHoldEndpoint is a cheap test that text could name a URL or port:
// every form FindEndpoint knows has a ':' or the word "port".
func mayHoldEndpoint(b []byte) bool {
	return bytes.IndexByte(b, ':') >= 0 || bytes.Contains(b, []byte("port")) ||
		bytes.Contains(b, []byte("Port")) || bytes.Contains(b, []byte("PORT"))
}

// keepTail keeps the last 8 KiB of output, for the tail in reports.
func (m *monitor) keepTail(data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(data) >= 8192 {
		m.tail = append(m.tail[:0], data[len(data)-8192:]...)
		return
	}
	m.tail = append(m.tail, data...)
	if len(m.tail) > 8192 {
		m.tail = append(m.tail[:0], m.tail[len(m.tail)-8192:]...)
	}
}

// tailLines returns the last n lines of output.
func (m *monitor) tailLines(n int) []string {
	m.mu.Lock()
	text := string(m.tail)
	full := len(m.tail) >= 8192
	m.mu.Unlock()
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	all := strings.Split(text, "\n")
	if full && len(all) > 1 {
		all = all[1:] // the first may have been cut
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// watchReady decides readiness: the --ready-* flag given, else an endpoint
// the service prints, probed until it accepts and is the service's own.
func (m *monitor) watchReady(run *svcRun, lines <-chan string) {
	defer run.watching.Store(false)
	defer func() { go drain(lines) }()
	since := func() float64 { return float64(time.Since(m.start).Microseconds()) / 1000 }
	ready := func(r Report) { r.Event, r.AfterMs, r.at, r.run = "ready", since(), time.Now(), run.n; m.readyCh <- r }
	pgid := run.cmd.Process.Pid
	switch {
	case m.spec.ReadyRegex != "":
		re, err := regexp.Compile(m.spec.ReadyRegex)
		if err != nil {
			return
		}
		for l := range lines {
			if re.MatchString(l) {
				ready(Report{By: "regex"})
				return
			}
		}
	case m.spec.ReadyURL != "":
		drain(lines)
		for !m.ended() {
			if HTTPReady(m.spec.ReadyURL) {
				ready(Report{URL: m.spec.ReadyURL, By: "url"})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	case m.spec.ReadyPort > 0:
		drain(lines)
		m.probe(Endpoint{URL: fmt.Sprintf("http://localhost:%d", m.spec.ReadyPort), Port: m.spec.ReadyPort}, "port", pgid, ready)
	case m.spec.ReadyCmd != "":
		drain(lines)
		for !m.ended() {
			c := exec.Command("/bin/sh", "-c", m.spec.ReadyCmd)
			c.Dir = m.spec.Cwd
			if c.Start() == nil {
				if ws, ok := m.waitChild(c.Process.Pid, time.Now().Add(10*time.Second)); ok && ws.Exited() && ws.ExitStatus() == 0 {
					ready(Report{By: "command"})
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	default:
		for l := range lines {
			if ep, ok := FindEndpoint(l); ok {
				run.watching.Store(false)
				m.probe(ep, "output", pgid, ready)
				return
			}
		}
	}
}

// probe waits until the endpoint's port accepts and belongs to the
// service's tree; a port held by someone else is recorded, not ready.
func (m *monitor) probe(ep Endpoint, by string, pgid int, ready func(Report)) {
	noted := false
	for !m.ended() {
		if Accepts(ep.Port) {
			ours, holder := PortOwner(ep.Port, os.Getpid(), pgid)
			if ours {
				ready(Report{URL: ep.URL, Port: ep.Port, By: by})
				return
			}
			if !noted && holder != "" {
				noted = true
				m.setState(func(s *State) { s.PortPreoccupied, s.PortHolder, s.Port = true, holder, ep.Port })
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func drain(lines <-chan string) {
	for range lines {
	}
}

func (m *monitor) ended() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !Live(m.state.Status)
}

// serveControl answers requests on the monitor's socket: one JSON line in,
// one out. {"op":"stop","graceMs":N} stops the service.
func (m *monitor) serveControl(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			var req struct {
				Op      string `json:"op"`
				GraceMs int64  `json:"graceMs"`
			}
			if err := json.NewDecoder(bufio.NewReader(c)).Decode(&req); err != nil || req.Op != "stop" {
				json.NewEncoder(c).Encode(map[string]string{"error": "unknown request"})
				return
			}
			grace := time.Duration(req.GraceMs) * time.Millisecond
			if grace <= 0 {
				grace = m.spec.StopGrace
			}
			sr := stopRequest{grace: grace, reply: make(chan StopReport, 1), sent: make(chan struct{})}
			m.stopReq <- sr
			json.NewEncoder(c).Encode(<-sr.reply)
			close(sr.sent)
		}()
	}
}

// supervise waits for what happens first, to the end.
func (m *monitor) supervise() int {
	timeout := m.spec.ReadyTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	readyTimer := time.NewTimer(timeout)
	defer readyTimer.Stop()
	selfStop := func() {
		go func() {
			sr := stopRequest{grace: m.spec.StopGrace, reply: make(chan StopReport, 1), sent: make(chan struct{})}
			close(sr.sent)
			m.stopReq <- sr
		}()
	}
	failures := 0
	for {
		select {
		case r := <-m.readyCh:
			if r.run != m.cur.n {
				continue // from a run that has ended
			}
			now := r.at
			m.setState(func(s *State) {
				if s.Status == Starting || s.Status == Running {
					s.Status, s.URL, s.Port, s.ReadyBy, s.ReadyAt = Ready, r.URL, r.Port, r.By, &now
					s.PortPreoccupied, s.PortHolder = false, ""
				}
				r.Restarts = s.Restarts
			})
			r.PID = m.cur.cmd.Process.Pid
			m.send(r)
		case <-readyTimer.C:
			m.setState(func(s *State) {
				if s.Status == Starting {
					s.Status = Running
				}
			})
			m.send(Report{Event: "running", PID: m.cur.cmd.Process.Pid})
		case ws := <-m.exitCh:
			// The run ended by itself: stop what it left behind, then
			// restart it or finish.
			Ladder(os.Getpid(), m.cur.cmd.Process.Pid, m.spec.StopGrace)
			m.drainRun(m.cur)
			m.recordRun(m.cur, ws)
			if !m.shouldRestart(ws) {
				m.finish(ws, Exited)
				return 0
			}
			if time.Since(m.cur.start) >= 10*time.Second {
				failures = 0 // it had been up a while: not a crash loop
			}
			backoff := min(500*time.Millisecond<<min(failures, 6), 30*time.Second)
			failures++
			m.setState(func(s *State) { s.Status, s.Restarts, s.URL, s.ReadyAt = Starting, s.Restarts+1, "", nil })
			if stopped := m.backoff(backoff); stopped != nil {
				m.finishStopped(stopped)
				return 0
			}
			r, err := m.launch(m.cur.n + 1)
			if err != nil {
				now := time.Now()
				m.setState(func(s *State) { s.Status, s.Error, s.EndedAt = Failed, "restarting: "+err.Error(), &now })
				return 1
			}
			m.cur = r
			info, _ := proc.Stat(r.cmd.Process.Pid)
			m.setState(func(s *State) { s.PID, s.PIDStart, s.Error = r.cmd.Process.Pid, info.Start, "" })
			readyTimer.Reset(timeout)
		case <-m.untilCh:
			m.setState(func(s *State) {
				s.StopNote = fmt.Sprintf("stopped because process %d (--until-exit) ended", m.spec.UntilExit)
			})
			selfStop()
		case <-m.termCh:
			// Someone stopped the monitor itself: stop the service first.
			selfStop()
		case req := <-m.stopReq:
			rep := Ladder(os.Getpid(), m.cur.cmd.Process.Pid, req.grace)
			var ws syscall.WaitStatus
			select {
			case ws = <-m.exitCh:
			case <-time.After(5 * time.Second):
			}
			m.drainRun(m.cur)
			m.recordRun(m.cur, ws)
			m.finish(ws, Stopped)
			rep.Name, rep.Status = m.d.Name, Stopped
			if len(rep.StillAlive) > 0 {
				rep.Note = fmt.Sprintf("%d processes are still alive", len(rep.StillAlive))
			}
			m.answer(req, rep)
			return 0
		}
	}
}

// answer sends a stop report and waits for it to be written: the
// monitor's exit would cut it short.
func (m *monitor) answer(req stopRequest, rep StopReport) {
	req.reply <- rep
	select {
	case <-req.sent:
	case <-time.After(2 * time.Second):
	}
}

// shouldRestart applies --restart and --max-restarts to a run's end.
func (m *monitor) shouldRestart(ws syscall.WaitStatus) bool {
	switch m.spec.Restart {
	case "always":
	case "on-failure":
		if ws.Exited() && ws.ExitStatus() == 0 {
			return false
		}
	default:
		return false
	}
	m.mu.Lock()
	restarts := m.state.Restarts
	m.mu.Unlock()
	if m.spec.MaxRestarts > 0 && restarts >= m.spec.MaxRestarts {
		m.setState(func(s *State) { s.StopNote = fmt.Sprintf("gave up after %d restarts (--max-restarts)", restarts) })
		return false
	}
	return true
}

// backoff waits before a restart; a stop in the meantime ends it, and is
// returned.
func (m *monitor) backoff(d time.Duration) *stopRequest {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return nil
		case req := <-m.stopReq:
			return &req
		case <-m.termCh:
			return &stopRequest{reply: make(chan StopReport, 1), sent: closedChan()}
		case <-m.untilCh:
			m.untilCh = nil
			m.setState(func(s *State) {
				s.StopNote = fmt.Sprintf("stopped because process %d (--until-exit) ended", m.spec.UntilExit)
			})
			return &stopRequest{reply: make(chan StopReport, 1), sent: closedChan()}
		}
	}
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// finishStopped ends a service stopped while it waited to restart: there
// is nothing running to signal.
func (m *monitor) finishStopped(req *stopRequest) {
	m.log.Close()
	now := time.Now()
	m.setState(func(s *State) { s.Status, s.EndedAt = Stopped, &now })
	m.answer(*req, StopReport{Name: m.d.Name, Status: Stopped, Signalled: []Signalled{}, Note: "stopped while waiting to restart"})
}

// recordRun adds a run's end to the state's history.
func (m *monitor) recordRun(r *svcRun, ws syscall.WaitStatus) {
	now := time.Now()
	rec := RunRecord{N: r.n, PID: r.cmd.Process.Pid, StartedAt: r.start, EndedAt: now}
	switch {
	case ws.Exited():
		c := ws.ExitStatus()
		rec.ExitCode = &c
	case ws.Signaled():
		rec.Signal = unix.SignalName(ws.Signal())
	}
	m.setState(func(s *State) {
		s.Runs = append(s.Runs, rec)
		if len(s.Runs) > 20 {
			s.Runs = s.Runs[len(s.Runs)-20:]
		}
	})
}

// drainRun waits until a run's output is all in the log, bounded: a
// process that escaped the tree may hold the pipe.
func (m *monitor) drainRun(r *svcRun) {
	select {
	case <-r.copyDone:
	case <-time.After(2 * time.Second):
		r.out.Close()
		<-r.copyDone
	}
}

// finish records the end: exit code or signal, the log closed, the
// terminal state written.
func (m *monitor) finish(ws syscall.WaitStatus, status string) {
	m.log.Close()
	now := time.Now()
	var code *int
	sig := ""
	switch {
	case ws.Exited():
		c := ws.ExitStatus()
		code = &c
	case ws.Signaled():
		sig = unix.SignalName(ws.Signal())
	}
	m.setState(func(s *State) { s.Status, s.ExitCode, s.Signal, s.EndedAt = status, code, sig, &now })
	m.send(Report{Event: "exited", ExitCode: code, Signal: sig, AfterMs: float64(time.Since(m.start).Microseconds()) / 1000, Tail: m.tailLines(10)})
}

// watchUntilExit waits on the pidfd svc start opened for --until-exit
// (fd 4): it becomes readable when that process exits.
func (m *monitor) watchUntilExit() {
	fds := []unix.PollFd{{Fd: 4, Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			close(m.untilCh)
			return
		}
	}
}
