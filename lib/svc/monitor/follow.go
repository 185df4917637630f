package monitor

import (
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/sockdiag"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/ready"
)

// A daemon's start can take a step or two (a fork whose child forks
// again and exits): a followed process that exits 0 this soon after it
// was picked hands the service on to what it left, as the command did.
const handOnWithin = time.Second

// A server may listen, and be ready, before the command that daemonized
// it exits: pg_ctl start waits until postgres accepts, then exits; redis
// and nginx may under load. When the listening socket readiness came from
// is held by a process of the tree outside the command's process group
// (it left with setsid or setpgid) while the command is not yet past, the
// ready report is held back this long for the command to exit 0 and the
// daemon to be followed, so that svc start answers with the daemon's pid.
// A server listening in its own group is never held. Two seconds: on two
// busy cores a command's exit was seen more than a second after its
// daemon listened; a command that goes on running past its daemon is
// still said ready well within start's default settle.
const holdReady = 2 * time.Second

// takeReady takes a ready report of the current launch: held while its
// command is daemonizing, else recorded and sent at once.
func (m *monitor) takeReady(r readyReport) {
	// A command that has exited already (the loop took the ready report
	// before the exit) is decided by its exit: held until then.
	exited := m.cur.followed == nil && !m.cur.child.Running()
	if m.held == nil && (exited || m.daemonizing(r.socket)) {
		m.held, m.holdEnds = &r, time.After(holdReady)
		return
	}
	m.becameReady(r)
}

// releaseReady records and sends a held ready report, if there is one:
// its pid is then the one the launch follows — the daemon, once the
// command has exited 0 and left it.
func (m *monitor) releaseReady() bool {
	if m.held == nil {
		return false
	}
	r := *m.held
	m.held, m.holdEnds = nil, nil
	m.becameReady(r)
	return true
}

// releaseReadyTo releases a held ready report once the daemon pid
// followed holds its listening socket; until then, or the hold's end,
// the report waits for what the daemon hands the service on to.
func (m *monitor) releaseReadyTo(pid int) {
	if m.held != nil && slices.Contains(sockdiag.SocketInodes(pid), m.held.socket) {
		m.releaseReady()
	}
}

// daemonizing reports whether the current launch's command, with no
// daemon followed yet, looks about to hand the service on: a process of
// the monitor's tree outside the command's process group, not one the
// monitor started, holds the listening socket with inode ino. It costs a
// read of the tree's descriptors, and of the tree twice or more (see
// ready.Holdings), once a ready report.
func (m *monitor) daemonizing(ino uint64) bool {
	l := m.cur
	if ino == 0 || l.followed != nil {
		return false
	}
	holdings, _ := ready.Holdings(os.Getpid(), svc.IsMonitor) // unsettled: a hand-over not seen is a report sent at once, with the command's pid
	for _, h := range holdings {
		if !slices.Contains(h.Sockets, ino) {
			continue
		}
		p, err := proc.Stat(h.PID)
		if err == nil && p.PGID != l.child.PID() && !m.reaper.Started(h.PID) {
			return true
		}
	}
	return false
}

// follow decides, once the process a launch follows has exited, whether
// the launch goes on with a daemon it left: it exited 0, and the monitor
// has a child it did not start itself — an orphan of the service's tree,
// reparented to the monitor as its subreaper. Unless Spec.NoFollow, that
// daemon is then the service (systemd's Type=forking): its pid and start
// time are recorded, its exit is the launch's. It reports whether it
// follows one.
func (m *monitor) follow() bool {
	l := m.cur
	if m.spec.NoFollow || !l.main().Wait().OK() {
		return false
	}
	if l.followed != nil && time.Since(l.followedAt) > handOnWithin {
		return false // a daemon that ran a while and exited 0 has ended
	}
	p, ok := m.daemon()
	if !ok {
		return false
	}
	c, err := m.reaper.Adopt(p)
	if err != nil {
		return false
	}
	from := m.startedBy(l, p.Comm)
	l.followed, l.daemon, l.followedAt = c, p, time.Now()
	f := &svc.Followed{PID: p.PID, Comm: p.Comm, From: from}
	m.rec.set(func(s *svc.State) { s.PID, s.PIDStart, s.Followed = p.PID, p.Start, f })
	go m.renameFollowed(p)
	return true
}

// renameFollowed reads a followed daemon's program again a moment after
// it was followed, and records it when it changed: found in its first
// instants, a daemon may still be a wrapper about to exec its program (a
// pyenv shim is bash until it execs python). Its start time says it is
// still the same process.
func (m *monitor) renameFollowed(p proc.Info) {
	for _, after := range []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, 1500 * time.Millisecond} {
		time.Sleep(after)
		now, err := proc.Stat(p.PID)
		if err != nil || now.Start != p.Start {
			return
		}
		if now.Comm == p.Comm || now.Comm == "" {
			continue
		}
		p.Comm = now.Comm
		m.rec.set(func(s *svc.State) {
			if f := s.Followed; f != nil && f.PID == p.PID {
				renamed := *f
				renamed.Comm = now.Comm
				s.Followed = &renamed
			}
		})
	}
}

// startedBy names the program that daemonized: the command as it ended
// (setpriv … pg_ctl start is pg_ctl), or, when a daemon followed was only
// a step of the start, what the command was.
func (m *monitor) startedBy(l *launched, daemon string) string {
	if f := m.rec.get().Followed; f != nil && l.followed != nil {
		return f.From
	}
	c := l.child.Comm()
	if c == "" {
		c = l.comm
	}
	switch c {
	case "sh", "bash", "dash":
		// A command given as one shell line ("pg_ctl -D db start") runs
		// in sh: the program is the line's (its last command's), unless
		// that is the daemon itself, which the shell put in the
		// background ("python3 -m http.server & exit 0").
		if len(m.spec.Command) == 1 {
			if w := cmdline.Words(m.spec.Command); len(w) > 0 && filepath.Base(w[0]) != daemon {
				return filepath.Base(w[0])
			}
		}
	}
	return c
}

// daemon picks the process to follow among the monitor's children it did
// not start (its --ready-cmd runs are its own): the leader of a session of
// its own first (a daemon calls setsid), then of a group of its own, then
// the oldest.
func (m *monitor) daemon() (proc.Info, bool) {
	var best proc.Info
	found := false
	for _, pid := range proc.Children(os.Getpid()) {
		p, err := proc.Stat(pid)
		if err != nil || p.State == 'Z' || m.reaper.Started(pid) || svc.IsMonitor(p) {
			continue // another service's monitor is its own, not a daemon of this one's
		}
		if !found || leads(p) > leads(best) || leads(p) == leads(best) && p.Start < best.Start {
			best, found = p, true
		}
	}
	return best, found
}

// leads ranks a process by what it leads: a session, a group, nothing.
func leads(p proc.Info) int {
	switch {
	case p.SID == p.PID:
		return 2
	case p.PGID == p.PID:
		return 1
	}
	return 0
}

// group is the process group a stop of the launch signals first: the
// command's, or the followed daemon's as it is now (a daemon may call
// setsid after it was picked), while it is still that process.
func (m *monitor) group(l *launched) int {
	if l.followed == nil {
		return l.child.PID()
	}
	if now, err := proc.Stat(l.daemon.PID); err == nil && now.Start == l.daemon.Start {
		return now.PGID
	}
	return l.daemon.PGID
}
