package monitor

import (
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/sockdiag"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/ready"
)

// readyReport is a ready Report from one launch.
type readyReport struct {
	svc.Report
	at     time.Time
	launch int
	socket uint64 // the inode of the listening socket it came from; 0 if none
	// late: the URL the service printed for its port after it was found
	// ready by its socket (lateURL); only Endpoint is set.
	late bool
}

// watch decides one launch's readiness: the Spec.Ready* field given, else an
// endpoint the service prints, probed until it accepts and is the
// service's own.
type watch struct {
	m        *monitor
	launch   *launched
	lines    <-chan string
	regex    bool        // lines go to a --ready-regex, not to endpoint detection
	watching atomic.Bool // it still reads lines
	// said: the output said a MySQL server takes clients (and not since
	// that one shut down); wake is signalled when it is said.
	said atomic.Bool
	wake chan struct{}
}

func (m *monitor) newWatch(r *launched, lines <-chan string) *watch {
	w := &watch{m: m, launch: r, lines: lines, regex: m.spec.ReadyRegex != "", wake: make(chan struct{}, 1)}
	w.watching.Store(w.regex || (m.spec.ReadyURL == "" && m.spec.ReadyCmd == ""))
	return w
}

// ready reports the launch ready — found on the listening socket with
// inode socket, if any — with every port its tree listens on, and keeps
// those ports current from then on.
func (w *watch) ready(r svc.Report, socket uint64, tree *ready.Listens) {
	r.Event, r.AfterMs = svc.EvReady, w.m.sinceStart()
	if tree == nil {
		tree = ready.NewListens(os.Getpid(), svc.IsMonitor)
		r.Ports = ready.Ports(tree.Poll())
	}
	w.m.events.ready <- readyReport{Report: r, at: time.Now(), launch: w.launch.n, socket: socket}
	go w.trackPorts(tree, r.Ports)
}

func (w *watch) decide() {
	defer w.watching.Store(false)
	defer func() { go drain(w.lines) }()
	spec := w.m.spec
	switch {
	case spec.ReadyRegex != "":
		w.byRegex(spec.ReadyRegex)
	// With a --ready-url or -cmd no line is ever sent (watching is false
	// from the start), and the deferred drain ends with the output:
	// waiting for it here would wait for the service to end. With
	// --ready-port lines are read for a MySQL server saying it is ready.
	case spec.ReadyURL != "":
		w.poll(10*time.Millisecond, 250*time.Millisecond, func() bool { return ready.HTTP(spec.ReadyURL) }, svc.Report{Endpoint: svc.Endpoint{URL: spec.ReadyURL}, By: "url"})
	case spec.ReadyPort > 0:
		w.probe(spec.ReadyPort, "port")
	case spec.ReadyCmd != "":
		w.poll(100*time.Millisecond, 100*time.Millisecond, w.commandSucceeds, svc.Report{By: "command"})
	default:
		if cmdline.RunsAtOnce(cmdline.ShellLine(spec.Command)) {
			w.running() // a watcher or a loop is running at once; it is ready if it listens later
		}
		w.byListening()
	}
}

// running reports the launch running: alive, and nothing to wait for.
func (w *watch) running() {
	w.m.events.ready <- readyReport{Report: svc.Report{Event: svc.EvRunning}, at: time.Now(), launch: w.launch.n}
}

// becameRunning records a starting launch as running — a watcher at
// once, any other at its ready timeout — and tells svc start.
func (m *monitor) becameRunning() {
	if m.rec.get().Status != svc.Starting {
		return
	}
	m.rec.set(func(s *svc.State) { s.Status = svc.Running })
	m.probeHealth(m.cur)
	m.send(svc.Report{Event: svc.EvRunning, PID: m.cur.main().PID(), Followed: m.rec.get().Followed})
}

func (w *watch) byRegex(expr string) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return
	}
	for l := range w.lines {
		if re.MatchString(l) {
			w.ready(svc.Report{By: "regex"}, 0, nil)
			return
		}
	}
}

// byListening waits until the service's tree listens on a TCP port,
// whether or not it printed anything. A printed endpoint whose port the
// tree listens on names the URL (with its path); one whose port someone
// else holds is recorded, never taken for readiness.
func (w *watch) byListening() {
	eps := make(chan ready.Endpoint, 8)
	go w.readLines(eps)
	tree := ready.NewListens(os.Getpid(), svc.IsMonitor)
	handedOn := false
	defer func() {
		if !handedOn {
			tree.Close()
		}
	}()
	var printed []ready.Endpoint
	var first time.Time // when the tree was first seen listening
	for {
		printed = w.takePrinted(eps, printed)
		wait := listenInterval(time.Since(w.launch.start))
		if ls := tree.Poll(); len(ls) > 0 {
			if first.IsZero() {
				first = time.Now()
			}
			r, socket, verdict := w.listening(tree, ls, time.Since(first), eps, &printed)
			if verdict == isReady {
				handedOn = true
				w.ready(r, socket, tree)
				if r.By != "output" {
					w.lateURL(eps, r.Port)
				}
				w.watching.Store(false)
				return
			}
			if verdict == notYet {
				wait = max(wait, 50*time.Millisecond) // a server turning clients away is asked again, not hammered
			}
			if verdict == notSaid && !w.sleepOrWake(wait) {
				return
			}
			if verdict == notSaid {
				continue
			}
		}
		if !w.sleep(wait) {
			return
		}
	}
}

// lateWithin is how long after a service is found ready by its socket
// its output is still read for the URL it prints: vite listens, and
// prints http://localhost:5173/ a moment later.
const lateWithin = 5 * time.Second

// lateURL reads the endpoints printed for lateWithin after the launch
// was found ready on port with no URL of its output, and hands the first
// URL printed for that port to the supervising loop (takeLateURL).
func (w *watch) lateURL(eps <-chan ready.Endpoint, port int) {
	deadline := time.NewTimer(lateWithin)
	defer deadline.Stop()
	for {
		select {
		case ep, ok := <-eps:
			if !ok {
				return
			}
			if ep.URL != "" && ep.Port == port {
				w.m.events.ready <- readyReport{Report: svc.Report{Endpoint: svc.Endpoint{URL: ep.URL, Port: port}}, launch: w.launch.n, late: true}
				return
			}
		case <-deadline.C:
			return
		}
	}
}

// takeLateURL records the URL a ready service printed after it was found
// ready by its socket, in place of the address svc made up for it.
func (m *monitor) takeLateURL(r readyReport) {
	st := m.rec.get()
	if st.Status != svc.Ready || st.Port != r.Port || st.URL == r.URL {
		return
	}
	m.rec.set(func(s *svc.State) { s.URL = r.URL })
}

// verdict is what the tree's listeners say of readiness.
type verdict int

const (
	notListening verdict = iota // not on the port wanted, yet
	notYet                      // listening, but turning clients away
	notSaid                     // listening, and its output has not said it takes clients yet
	isReady
)

// mysqlSilence is how long a MySQL server that logs to its output may
// listen before it says "ready for connections" (MariaDB says it a few
// milliseconds after it listens); after that its log is taken to go
// elsewhere, and it is asked for its handshake.
const mysqlSilence = 2 * time.Second

// readLines reads the lines watched: it passes the endpoints printed to
// eps (when not nil) and notes a MySQL server saying it is ready.
func (w *watch) readLines(eps chan<- ready.Endpoint) {
	if eps != nil {
		defer close(eps)
	}
	for l := range w.lines {
		l = ready.StripANSI(l) // a coloured URL, under --pty
		switch {
		case ready.SaysReady(l):
			w.said.Store(true)
			select {
			case w.wake <- struct{}{}:
			default:
			}
		case ready.SaysShutDown(l):
			w.said.Store(false) // a server that set up the data, before the real one
		}
		if eps == nil || strings.Contains(l, ready.ProbeRequestLine) {
			continue // a server logging svc's own probe, with the address it was sent to
		}
		if ep, ok := ready.FindEndpoint(l); ok {
			select {
			case eps <- ep:
			default: // the first few are what matters
			}
		}
	}
}

// usable is whether a client can use the server on addr, held by holder,
// listening for so long. A MySQL server that logs to svc's output is
// usable when it says so there, and is asked nothing: MariaDB logs a
// client that leaves at the handshake as an aborted connection. Only
// one whose log svc does not see is asked, and one that stays silent
// for mysqlSilence.
func (w *watch) usable(server ready.Server, addr netip.AddrPort, holder int, listening time.Duration) verdict {
	if server == ready.MySQL {
		if w.said.Load() {
			return isReady
		}
		if listening < mysqlSilence && w.watching.Load() && ready.LogsToOutput(holder) {
			return notSaid
		}
	}
	if ready.Usable(server, addr, holder) {
		return isReady
	}
	return notYet
}

// listenInterval is how often the tree's sockets are looked at: often
// while a server is most likely to start listening, then less and less,
// so a service that never listens costs next to nothing.
func listenInterval(up time.Duration) time.Duration {
	switch {
	case up < time.Second:
		return 5 * time.Millisecond
	case up < 3*time.Second:
		return 25 * time.Millisecond
	case up < 30*time.Second:
		return 100 * time.Millisecond
	case up < 2*time.Minute:
		return 500 * time.Millisecond
	}
	return time.Second
}

// takePrinted adds the endpoints printed since the last look; a printed
// port held by a process outside the tree is recorded once.
func (w *watch) takePrinted(eps <-chan ready.Endpoint, printed []ready.Endpoint) []ready.Endpoint {
	for {
		select {
		case ep, ok := <-eps:
			if !ok {
				return printed
			}
			printed = w.notePrinted(printed, ep)
		default:
			return printed
		}
	}
}

// listening decides what the tree's listeners make ready: a printed URL
// on one of them, else the --port given when it listens there, else a
// printed port, else the lowest port. With --port, a tree that listens
// elsewhere gets a moment to open the port it was given before that is
// reported. The listener chosen is ready when a client can use it; its
// socket's inode comes with the report.
func (w *watch) listening(tree *ready.Listens, ls []sockdiag.Listener, since time.Duration, eps <-chan ready.Endpoint, printed *[]ready.Endpoint) (svc.Report, uint64, verdict) {
	ports := ready.Ports(ls)
	chosen, warning := ls[0], ""
	if want := w.m.spec.Port; want > 0 {
		i := slices.Index(ports, want)
		switch {
		case i >= 0:
			chosen = ls[i]
		case since < 200*time.Millisecond:
			return svc.Report{}, 0, notListening
		default:
			warning = fmt.Sprintf("$PORT (%d) was not used: the service listens on %s", want, portList(ports))
		}
	}
	report := func(l sockdiag.Listener, url, by string) (svc.Report, uint64, verdict) {
		holder := tree.Holder(l)
		server := ready.ServerOf(holder)
		addr := ready.Reach(l)
		if v := w.usable(server, addr, holder, since); v != isReady {
			return svc.Report{}, 0, v
		}
		if url == "" {
			url = w.address(server, addr, eps, printed)
			*printed = w.takePrinted(eps, *printed)
		}
		if u, ok := urlOn(*printed, l.Port); ok { // printed while svc asked
			url, by = u, "output"
		}
		return svc.Report{Endpoint: svc.Endpoint{URL: url, Port: l.Port, Ports: ports}, By: by, Warning: warning, Server: holder}, l.Inode, isReady
	}
	// A server most often prints its URL just after listen(): a few
	// milliseconds for it spare the server a probe request in its log.
	*printed = w.awaitPrinted(eps, *printed, 2*time.Millisecond)
	for _, ep := range *printed {
		if i := slices.Index(ports, ep.Port); i >= 0 && ep.URL != "" {
			return report(ls[i], ep.URL, "output")
		}
	}
	by := "listen"
	for _, ep := range *printed {
		if i := slices.Index(ports, ep.Port); i >= 0 && (w.m.spec.Port == 0 || ep.Port == chosen.Port) {
			chosen, by = ls[i], "output"
			break
		}
	}
	return report(chosen, "", by)
}

// address is how a client reaches a usable listener that printed no URL:
// a URL for a known web server, host:port for a known server of another
// protocol, and for one svc does not know, a URL if it answers one HTTP
// request (after a moment for it to print its URL instead).
func (w *watch) address(server ready.Server, addr netip.AddrPort, eps <-chan ready.Endpoint, printed *[]ready.Endpoint) string {
	switch server {
	case ready.WebServer:
		return ready.URLOf(addr)
	case ready.Unknown:
		if eps == nil {
			break // --ready-port: no output is read
		}
		*printed = w.awaitURL(eps, *printed, int(addr.Port()), 10*time.Millisecond)
		if u, ok := urlOn(*printed, int(addr.Port())); ok {
			return u
		}
	}
	if server == ready.Unknown && ready.AnswersHTTP(addr) {
		return ready.URLOf(addr)
	}
	return addr.String()
}

// urlOn is the first URL printed for port.
func urlOn(printed []ready.Endpoint, port int) (string, bool) {
	for _, ep := range printed {
		if ep.Port == port && ep.URL != "" {
			return ep.URL, true
		}
	}
	return "", false
}

// awaitURL waits up to d for a URL on port to be printed.
func (w *watch) awaitURL(eps <-chan ready.Endpoint, printed []ready.Endpoint, port int, d time.Duration) []ready.Endpoint {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		if _, ok := urlOn(printed, port); ok {
			return printed
		}
		select {
		case ep, ok := <-eps:
			if !ok {
				return printed
			}
			printed = w.notePrinted(printed, ep)
		case <-t.C:
			return w.takePrinted(eps, printed)
		}
	}
}

// notePrinted adds a printed endpoint; one whose port a process outside
// the tree holds is recorded as such.
func (w *watch) notePrinted(printed []ready.Endpoint, ep ready.Endpoint) []ready.Endpoint {
	if ours, holder := ready.PortOwner(ep.Port, os.Getpid(), w.launch.child.PID(), svc.IsMonitor); !ours && holder != "" {
		w.m.rec.set(func(s *svc.State) { s.PortPreoccupied, s.PortHolder, s.Port = true, holder, ep.Port })
	}
	return append(printed, ep)
}

// awaitPrinted is takePrinted after waiting up to d for a first endpoint
// to be printed.
func (w *watch) awaitPrinted(eps <-chan ready.Endpoint, printed []ready.Endpoint, d time.Duration) []ready.Endpoint {
	if len(printed) > 0 {
		return w.takePrinted(eps, printed)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case ep, ok := <-eps:
		if ok {
			printed = w.notePrinted(printed, ep)
		}
	case <-t.C:
	}
	return w.takePrinted(eps, printed)
}

func portList(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}

// trackPorts keeps the recorded ports current while the launch lives: a
// server may open a second port (a websocket, a debugger) after it is
// ready. It looks every 2 seconds, at the cost of one sock_diag dump.
func (w *watch) trackPorts(tree *ready.Listens, ports []int) {
	defer tree.Close()
	for w.sleep(2 * time.Second) {
		now := ready.Ports(tree.Poll())
		if !slices.Equal(now, ports) {
			ports = now
			w.m.rec.set(func(s *svc.State) {
				if s.Status == svc.Ready {
					s.Ports = now
				}
			})
		}
	}
}

// sleepOrWake is sleep, cut short when a server says it is ready.
func (w *watch) sleepOrWake(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.wake:
	case <-w.launch.ended():
		return false
	}
	return !w.m.ended()
}

// sleep waits d; false when the run ended meanwhile.
func (w *watch) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !w.m.ended()
	case <-w.launch.ended(): // its command, or the daemon it left and svc follows
		return false
	}
}

// poll calls check until it holds or the service ended, first every
// interval, then less often, up to every most: a server that is slow to
// come up is not sent a stream of requests for its log.
func (w *watch) poll(interval, most time.Duration, check func() bool, r svc.Report) {
	for !w.m.ended() {
		if check() {
			w.ready(r, 0, nil)
			return
		}
		time.Sleep(interval)
		interval = min(most, interval*5/4)
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

// probe waits until port is listened on by the service's tree and is
// usable (--ready-port); a port held by someone else is recorded, not
// ready. Its address is said as for a listener found by itself. The port
// is never connected to here: a connection made and dropped is what
// MariaDB logs as aborted, and a server that began to listen just after
// a look is found by the kernel's socket table, not by a connection.
func (w *watch) probe(port int, by string) {
	go w.readLines(nil)
	defer w.watching.Store(false)
	noted, unplaced := false, 0
	pgid := w.launch.child.PID()
	tree := ready.NewListens(os.Getpid(), svc.IsMonitor)
	defer tree.Close()
	var first time.Time // when the tree was first seen listening on port
	for !w.m.ended() {
		wait := 5 * time.Millisecond
		if l, ok := listenerOn(tree.Poll(), port); ok {
			if first.IsZero() {
				first = time.Now()
			}
			r, v := w.portReady(tree, l, by, time.Since(first))
			if v == isReady {
				w.ready(r, l.Inode, nil)
				return
			}
			if v == notYet {
				wait = 50 * time.Millisecond
			}
		} else if ours, holder := ready.PortOwner(port, os.Getpid(), pgid, svc.IsMonitor); ours {
			// The tree listens there, but began after this look's dump
			// (the next look sees it, and asks it nothing it would log),
			// or, seen so twice, where the tree's dump never places it:
			// the port alone.
			if unplaced++; unplaced > 1 {
				w.ready(svc.Report{Endpoint: svc.Endpoint{URL: fmt.Sprintf("127.0.0.1:%d", port), Port: port}, By: by}, 0, nil)
				return
			}
			wait = 0
		} else if !noted && holder != "" {
			noted = true
			w.m.rec.set(func(s *svc.State) { s.PortPreoccupied, s.PortHolder, s.Port = true, holder, port })
		}
		if !w.sleepOrWake(wait) {
			return
		}
	}
}

// listenerOn is the listener on port among ls.
func listenerOn(ls []sockdiag.Listener, port int) (sockdiag.Listener, bool) {
	for _, l := range ls {
		if l.Port == port {
			return l, true
		}
	}
	return sockdiag.Listener{}, false
}

// portReady is the report for a --ready-port the tree listens on with l,
// when a client can use it.
func (w *watch) portReady(tree *ready.Listens, l sockdiag.Listener, by string, listening time.Duration) (svc.Report, verdict) {
	holder := tree.Holder(l)
	server := ready.ServerOf(holder)
	addr := ready.Reach(l)
	if v := w.usable(server, addr, holder, listening); v != isReady {
		return svc.Report{}, v
	}
	var none []ready.Endpoint
	return svc.Report{Endpoint: svc.Endpoint{URL: w.address(server, addr, nil, &none), Port: l.Port}, By: by}, isReady
}

func drain(lines <-chan string) {
	for range lines {
	}
}

func (m *monitor) ended() bool { return !m.rec.get().Status.Live() }
