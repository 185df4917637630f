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
	at       time.Time
}

// monitor supervises one service for its whole life.
type monitor struct {
	d      Dir
	spec   Spec
	report *json.Encoder
	lock   *os.File
	log    *LogWriter
	cmd    *exec.Cmd
	start  time.Time

	mu       sync.Mutex
	state    State
	tail     []byte      // the last output, for reports
	watching atomic.Bool // the readiness watcher still reads lines
	readyCh  chan Report
	stopReq  chan stopRequest
	exitCh   chan syscall.WaitStatus
	copyDone chan struct{}
	outputR  *os.File
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
		readyCh: make(chan Report, 4), stopReq: make(chan stopRequest), termCh: make(chan os.Signal, 1), untilCh: make(chan struct{}), exitCh: make(chan syscall.WaitStatus, 1), copyDone: make(chan struct{})}
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
	if err := m.startCommand(); err != nil {
		return m.fail(err.Error())
	}
	// Output and readiness first: the state write (an fsync) can wait.
	lines := make(chan string, 256)
	m.watching.Store(m.spec.ReadyRegex != "" || (m.spec.ReadyURL == "" && m.spec.ReadyPort == 0 && m.spec.ReadyCmd == ""))
	go m.copyOutput(lines)
	go m.watchReady(lines)
	go m.reap()
	info, _ := proc.Stat(m.cmd.Process.Pid)
	m.setState(func(s *State) {
		s.PID, s.PIDStart = m.cmd.Process.Pid, info.Start
		if preoccupied != "" {
			s.PortPreoccupied, s.PortHolder, s.Port = true, preoccupied, m.spec.ReadyPort
		}
	})
	m.send(Report{Event: "started", PID: m.cmd.Process.Pid, Holder: preoccupied})
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

// setState changes the recorded state and writes it out.
func (m *monitor) setState(f func(*State)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.state)
	if m.log != nil && m.log.Err() != nil && m.state.LogNote == "" {
		m.state.LogNote = "logging stopped: " + m.log.Err().Error()
	}
	_ = WriteState(m.d, &m.state)
}

// startCommand starts the service: one argument through /bin/sh -c,
// several executed directly; its own process group; stdin at /dev/null;
// stdout and stderr into one pipe, in order.
func (m *monitor) startCommand() error {
	argv := m.spec.Command
	var cmd *exec.Cmd
	if len(argv) == 1 {
		cmd = exec.Command("/bin/sh", "-c", argv[0])
	} else {
		if _, err := exec.LookPath(argv[0]); err != nil {
			return fmt.Errorf("cannot run %s: %v", argv[0], errors.Unwrap(err))
		}
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	cmd.Dir = m.spec.Cwd
	cmd.Env = append(os.Environ(), m.spec.Env...)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, w, w
	proc.InGroup(cmd)
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("cannot start the service: %v", err)
	}
	w.Close()
	m.cmd = cmd
	m.outputR = r
	return nil
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
			if pid == m.cmd.Process.Pid {
				m.exitCh <- ws
				continue
			}
			m.waitMu.Lock()
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
func (m *monitor) copyOutput(lines chan<- string) {
	defer close(m.copyDone)
	defer close(lines)
	// A bigger pipe means fewer wake-ups for a chatty service.
	_, _ = unix.FcntlInt(m.outputR.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	buf := make([]byte, 256<<10)
	var partial []byte
	for {
		n, err := m.outputR.Read(buf)
		if n > 0 {
			data := buf[:n]
			m.log.Write(data)
			m.keepTail(data)
			if m.watching.Load() {
				partial = m.feedLines(partial, data, lines)
			}
		}
		if err != nil {
			if len(partial) > 0 && m.watching.Load() {
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
func (m *monitor) watchReady(lines <-chan string) {
	defer m.watching.Store(false)
	defer func() { go drain(lines) }()
	since := func() float64 { return float64(time.Since(m.start).Microseconds()) / 1000 }
	ready := func(r Report) { r.Event, r.AfterMs, r.at = "ready", since(), time.Now(); m.readyCh <- r }
	pgid := m.cmd.Process.Pid
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
				m.watching.Store(false)
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
	pgid := m.cmd.Process.Pid
	for {
		select {
		case r := <-m.readyCh:
			now := r.at
			m.setState(func(s *State) {
				if s.Status == Starting || s.Status == Running {
					s.Status, s.URL, s.Port, s.ReadyBy, s.ReadyAt = Ready, r.URL, r.Port, r.By, &now
					s.PortPreoccupied, s.PortHolder = false, ""
				}
			})
			m.send(r)
		case <-readyTimer.C:
			m.setState(func(s *State) {
				if s.Status == Starting {
					s.Status = Running
				}
			})
			m.send(Report{Event: "running", PID: pgid})
		case ws := <-m.exitCh:
			// The service ended by itself: stop what it left behind.
			Ladder(os.Getpid(), pgid, m.spec.StopGrace)
			m.finish(ws, Exited)
			return 0
		case <-m.untilCh:
			m.setState(func(s *State) {
				s.StopNote = fmt.Sprintf("stopped because process %d (--until-exit) ended", m.spec.UntilExit)
			})
			go func() {
				sr := stopRequest{grace: m.spec.StopGrace, reply: make(chan StopReport, 1), sent: make(chan struct{})}
				close(sr.sent)
				m.stopReq <- sr
			}()
		case <-m.termCh:
			// Someone stopped the monitor itself: stop the service first.
			go func() {
				sr := stopRequest{grace: m.spec.StopGrace, reply: make(chan StopReport, 1), sent: make(chan struct{})}
				close(sr.sent)
				m.stopReq <- sr
			}()
		case req := <-m.stopReq:
			rep := Ladder(os.Getpid(), pgid, req.grace)
			var ws syscall.WaitStatus
			select {
			case ws = <-m.exitCh:
			case <-time.After(5 * time.Second):
			}
			m.finish(ws, Stopped)
			rep.Name, rep.Status = m.d.Name, Stopped
			if len(rep.StillAlive) > 0 {
				rep.Note = fmt.Sprintf("%d processes are still alive", len(rep.StillAlive))
			}
			req.reply <- rep
			select { // the monitor's exit would cut the reply short
			case <-req.sent:
			case <-time.After(2 * time.Second):
			}
			return 0
		}
	}
}

// finish records the end: exit code or signal, the log drained and closed,
// the terminal state written.
func (m *monitor) finish(ws syscall.WaitStatus, status string) {
	select {
	case <-m.copyDone:
	case <-time.After(2 * time.Second):
		m.outputR.Close() // an escaped process holds the pipe: stop reading
		<-m.copyDone
	}
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
