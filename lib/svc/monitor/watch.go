package monitor

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

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
}

func (m *monitor) newWatch(r *launched, lines <-chan string) *watch {
	w := &watch{m: m, launch: r, lines: lines, regex: m.spec.ReadyRegex != ""}
	w.watching.Store(w.regex || (m.spec.ReadyURL == "" && m.spec.ReadyPort == 0 && m.spec.ReadyCmd == ""))
	return w
}

// ready reports the launch ready, with every port its tree listens on, and
// keeps those ports current from then on.
func (w *watch) ready(r svc.Report, tree *ready.Listens) {
	r.Event, r.AfterMs = svc.EvReady, w.m.sinceStart()
	if tree == nil {
		tree = ready.NewListens(os.Getpid())
		r.Ports = ready.Ports(tree.Poll())
	}
	w.m.events.ready <- readyReport{Report: r, at: time.Now(), launch: w.launch.n}
	go w.trackPorts(tree, r.Ports)
}

func (w *watch) decide() {
	defer w.watching.Store(false)
	defer func() { go drain(w.lines) }()
	spec := w.m.spec
	switch {
	case spec.ReadyRegex != "":
		w.byRegex(spec.ReadyRegex)
	// With a --ready-url, -port or -cmd no line is ever sent (watching is
	// false from the start), and the deferred drain ends with the output:
	// waiting for it here would wait for the service to end.
	case spec.ReadyURL != "":
		w.poll(10*time.Millisecond, func() bool { return ready.HTTP(spec.ReadyURL) }, svc.Report{Endpoint: svc.Endpoint{URL: spec.ReadyURL}, By: "url"})
	case spec.ReadyPort > 0:
		w.probe(ready.Endpoint{URL: fmt.Sprintf("http://localhost:%d", spec.ReadyPort), Port: spec.ReadyPort}, "port")
	case spec.ReadyCmd != "":
		w.poll(100*time.Millisecond, w.commandSucceeds, svc.Report{By: "command"})
	default:
		w.byListening()
	}
}

func (w *watch) byRegex(expr string) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return
	}
	for l := range w.lines {
		if re.MatchString(l) {
			w.ready(svc.Report{By: "regex"}, nil)
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
	go func() {
		defer close(eps)
		for l := range w.lines {
			if strings.Contains(l, ready.ProbeRequestLine) {
				continue // a server logging svc's own probe, with the address it was sent to
			}
			if ep, ok := ready.FindEndpoint(l); ok {
				select {
				case eps <- ep:
				default: // the first few are what matters
				}
			}
		}
	}()
	tree := ready.NewListens(os.Getpid())
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
		if ls := tree.Poll(); len(ls) > 0 {
			if first.IsZero() {
				first = time.Now()
			}
			if r, ok := w.listening(ls, time.Since(first), eps, printed); ok {
				w.watching.Store(false)
				handedOn = true
				w.ready(r, tree)
				return
			}
		}
		if !w.sleep(listenInterval(time.Since(w.launch.start))) {
			return
		}
	}
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

// listening decides what the tree's listeners make ready: a printed
// endpoint on one of them, else the --port given when it listens there,
// else the lowest port. With --port, a tree that listens elsewhere gets
// a moment to open the port it was given before that is reported.
func (w *watch) listening(ls []sockdiag.Listener, since time.Duration, eps <-chan ready.Endpoint, printed []ready.Endpoint) (svc.Report, bool) {
	ports := ready.Ports(ls)
	chosen, warning := ls[0], ""
	if want := w.m.spec.Port; want > 0 {
		i := slices.Index(ports, want)
		switch {
		case i >= 0:
			chosen = ls[i]
		case since < 200*time.Millisecond:
			return svc.Report{}, false
		default:
			warning = fmt.Sprintf("$PORT (%d) was not used: the service listens on %s", want, portList(ports))
		}
	}
	if r, ok := printedOn(printed, ports); ok {
		r.Warning = warning
		return r, true
	}
	// A server most often prints its URL just after listen(): a few
	// milliseconds for it spare the server a probe request in its log.
	if r, ok := printedOn(w.awaitPrinted(eps, printed, 2*time.Millisecond), ports); ok {
		r.Warning = warning
		return r, true
	}
	where := ready.Where(chosen) // an HTTP probe
	if r, ok := printedOn(w.takePrinted(eps, printed), ports); ok {
		r.Warning = warning
		return r, true
	}
	return svc.Report{Endpoint: svc.Endpoint{URL: where, Port: chosen.Port, Ports: ports}, By: "listen", Warning: warning}, true
}

// notePrinted adds a printed endpoint; one whose port a process outside
// the tree holds is recorded as such.
func (w *watch) notePrinted(printed []ready.Endpoint, ep ready.Endpoint) []ready.Endpoint {
	if ours, holder := ready.PortOwner(ep.Port, os.Getpid(), w.launch.child.PID()); !ours && holder != "" {
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

// printedOn is the first printed endpoint on one of ports.
func printedOn(printed []ready.Endpoint, ports []int) (svc.Report, bool) {
	for _, ep := range printed {
		if slices.Contains(ports, ep.Port) {
			return svc.Report{Endpoint: svc.Endpoint{URL: ep.URL, Port: ep.Port, Ports: ports}, By: "output"}, true
		}
	}
	return svc.Report{}, false
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

// poll calls check every interval until it holds or the service ended.
func (w *watch) poll(interval time.Duration, check func() bool, r svc.Report) {
	for !w.m.ended() {
		if check() {
			w.ready(r, nil)
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
	pgid := w.launch.child.PID()
	for !w.m.ended() {
		if ready.Accepts(ep.Port) {
			ours, holder := ready.PortOwner(ep.Port, os.Getpid(), pgid)
			if ours {
				w.ready(svc.Report{Endpoint: svc.Endpoint{URL: ep.URL, Port: ep.Port}, By: by}, nil)
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
