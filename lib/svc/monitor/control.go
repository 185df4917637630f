package monitor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/sock"
	"golang.org/x/sys/unix"
)

// stopRequest is a stop for the supervising loop; a nil reply is a stop
// nobody waits on (SIGTERM to the monitor, --until-exit).
type stopRequest struct {
	grace time.Duration
	reply chan svc.StopReport
	sent  chan struct{} // closed once the reply is written
}

// serveControl answers requests on the monitor's socket: one svc.Request
// line in, one svc.Reply line out.
// listenControl listens on a socket of a fresh random name
// (svc.NewSocketName): a name no other user can know before it is
// bound, so none can take it first. A name already taken (a chance of one
// in 2^128) is drawn again.
func listenControl() (string, *sock.Listener, error) {
	for try := 0; ; try++ {
		name, err := svc.NewSocketName()
		if err != nil {
			return "", nil, err
		}
		ln, err := sock.ListenUnix(name)
		if err == nil {
			return name, ln, nil
		}
		if !errors.Is(err, unix.EADDRINUSE) || try == 2 {
			return "", nil, err
		}
	}
}

// Only a process of the monitor's own effective uid is answered: an
// abstract socket has no file mode, so anyone on the machine can connect
// to it, and the kernel's record of who connected (SO_PEERCRED) is the
// only permission there is. Anyone else is closed on unread and unanswered.
func (m *monitor) serveControl(ln *sock.Listener) {
	uid := os.Geteuid()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if p, err := sock.PeerOf(c); err != nil || p.UID != uid {
			c.Close()
			continue
		}
		go m.answerConn(c)
	}
}

func (m *monitor) answerConn(c io.ReadWriteCloser) {
	defer c.Close()
	enc := json.NewEncoder(c)
	var req svc.Request
	dec := json.NewDecoder(c) // what it reads past the line is dec.Buffered()
	if err := dec.Decode(&req); err != nil {
		_ = enc.Encode(svc.Reply{Error: "a request is one JSON line: " + err.Error()})
		return
	}
	if m.answerTerminal(c, io.MultiReader(dec.Buffered(), c), enc, req) {
		return
	}
	if req.Op != svc.OpStop {
		_ = enc.Encode(svc.Reply{Error: fmt.Sprintf("unknown request %q", req.Op)})
		return
	}
	grace := time.Duration(req.GraceMs) * time.Millisecond
	if grace <= 0 {
		grace = m.spec.StopGrace
	}
	sr := stopRequest{grace: grace, reply: make(chan svc.StopReport, 1), sent: make(chan struct{})}
	m.events.stop <- sr
	rep := <-sr.reply
	_ = enc.Encode(svc.Reply{StopReport: &rep})
	close(sr.sent)
}

// selfStop stops the service from inside the monitor.
func (m *monitor) selfStop() {
	go func() { m.events.stop <- stopRequest{grace: m.spec.StopGrace} }()
}

// stop runs the ladder over the service's tree and records the end: the
// stop signal to the group of the process it follows (the command, or the
// daemon it left), then to what is left of the tree.
func (m *monitor) stop(req stopRequest) {
	l := m.cur
	if l.followed == nil && !l.child.Running() {
		// The command has just exited and the loop took the stop first:
		// what it handed the service to, if anything, is what is stopped.
		m.follow()
	}
	lad, keys := m.stopLadder(l, req.grace)
	var exit proc.Exit
	select {
	case <-l.main().Exited():
		exit = l.main().Wait()
	case <-time.After(5 * time.Second):
	}
	l.end()
	m.drainLaunch(l)
	m.rec.addLaunch(l, exit)
	m.finish(exit, svc.Stopped)
	rep := svc.StopReport{Name: m.d.Name, LadderReport: lad, Status: svc.Stopped, Ended: exit.Ended(), StopKeys: keys}
	if len(rep.StillAlive) > 0 {
		rep.Note = fmt.Sprintf("%d processes are still alive", len(rep.StillAlive))
	}
	m.answer(req, rep)
}

// answer sends a stop report and waits for it to be written: the
// monitor's exit would cut it short.
func (m *monitor) answer(req stopRequest, rep svc.StopReport) {
	if req.reply == nil {
		return
	}
	req.reply <- rep
	select {
	case <-req.sent:
	case <-time.After(2 * time.Second):
	}
}

// finishStopped ends a service stopped while it waited to restart: there
// is nothing running to signal.
func (m *monitor) finishStopped(req *stopRequest) {
	m.log.Close()
	now := time.Now()
	m.rec.set(func(s *svc.State) { s.Status, s.EndedAt, s.RestartAt = svc.Stopped, &now, nil })
	m.answer(*req, svc.StopReport{Name: m.d.Name, Status: svc.Stopped, Note: "stopped while waiting to restart",
		LadderReport: proc.LadderReport{Signalled: []proc.Signalled{}}})
}

// watchUntilExit waits on the --until-exit pidfd: it becomes readable
// when that process exits.
func watchUntilExit(pidfd *os.File, until chan<- struct{}) {
	proc.AwaitPidfd(pidfd.Fd())
	close(until)
}
