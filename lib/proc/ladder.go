package proc

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Signalled is one process a stop ladder signalled.
type Signalled struct {
	PID     int    `json:"pid"`
	Comm    string `json:"comm"`
	Signal  string `json:"signal"`
	Escaper bool   `json:"escaper"` // it had left the tree's process group
	// ExitMs is how long after the stop began the process was seen gone;
	// absent when it was still alive at the end.
	ExitMs *float64 `json:"exitMs,omitempty"`
}

// LadderReport is what a stop ladder did.
type LadderReport struct {
	Signalled []Signalled `json:"signalled"`
	SIGKILL   bool        `json:"sigkill"`
	ElapsedMs float64     `json:"elapsedMs"`
	// Escapers counts the processes outside the group that were still
	// there once the group was gone, and were signalled on their own.
	Escapers   int   `json:"escapers"`
	StillAlive []int `json:"stillAlive,omitempty"`
}

// FollowOn is how long a stop ladder lets the processes that left the
// group (postgres's children call setsid) end by themselves once the
// group has gone, before it signals them on their own.
const FollowOn = 500 * time.Millisecond

// Ladder stops a tree: every descendant of root (a subreaper, so that
// what double-forked out of the service's group is its descendant too),
// those in process group pgid first. sig to the group; once it is gone,
// what is left of the tree a moment later gets SIGTERM; SIGKILL to all
// that is left after grace. Each pid is signalled only after its start
// time confirms it is the same process. Only root's descendants are
// looked at: pgid may be the id of a group whose members have all gone,
// which an unrelated process may have taken since.
func Ladder(root, pgid int, sig syscall.Signal, grace time.Duration) LadderReport {
	return ladder(root, pgid, false, sig, grace, nil)
}

// LadderSparing is Ladder for a tree that holds others' (see Spare): what
// spare leaves out, and what descends from it, is neither signalled nor
// waited for.
func LadderSparing(root, pgid int, sig syscall.Signal, grace time.Duration, spare Spare) LadderReport {
	return ladder(root, pgid, false, sig, grace, spare)
}

// LadderFrom is Ladder for a tree whose root, its identity confirmed by
// the caller, is itself to be stopped (a service whose monitor is gone):
// root, its descendants, and the members of root's process group
// anywhere (those that were orphaned went to init). While root lives its
// group id cannot be reused.
func LadderFrom(root int, sig syscall.Signal, grace time.Duration) LadderReport {
	return LadderFromSparing(root, sig, grace, nil)
}

// LadderFromSparing is LadderFrom for a tree that holds others' (see
// Spare).
func LadderFromSparing(root int, sig syscall.Signal, grace time.Duration, spare Spare) LadderReport {
	pgid := root
	if r, err := Stat(root); err == nil {
		pgid = r.PGID // a daemon followed may lead no group of its own
	}
	return ladder(root, pgid, true, sig, grace, spare)
}

// stopRun is one ladder's record.
type stopRun struct {
	start  time.Time
	pgid   int
	rep    LadderReport
	exited map[int]time.Time
}

func (l *stopRun) gone(p Info) {
	if _, ok := l.exited[p.PID]; !ok {
		l.exited[p.PID] = time.Now()
	}
}

// signal sends sig to each of ps still alive and records it.
func (l *stopRun) signal(ps []Info, sig syscall.Signal, escapers bool) {
	for _, p := range ps {
		if Signal(p, sig) {
			esc := p.PGID != l.pgid
			l.rep.Signalled = append(l.rep.Signalled, Signalled{PID: p.PID, Comm: p.Comm, Signal: SignalName(sig), Escaper: esc})
			if esc && escapers {
				l.rep.Escapers++
			}
		}
	}
}

func ladder(root, pgid int, withRoot bool, sig syscall.Signal, grace time.Duration, spare Spare) LadderReport {
	l := &stopRun{start: time.Now(), pgid: pgid, rep: LadderReport{Signalled: []Signalled{}}, exited: map[int]time.Time{}}
	deadline := l.start.Add(grace)
	tree := func() []Info {
		scan := 0 // root's descendants only
		if withRoot {
			scan = pgid // and root's group, alive with root
		}
		t := TreeSparing(root, scan, spare)
		if withRoot {
			if r, err := Stat(root); err == nil && r.State != 'Z' {
				t = append([]Info{r}, t...)
			}
		}
		return t
	}
	var group, rest []Info
	for _, p := range tree() {
		if p.PGID == pgid {
			group = append(group, p)
		} else {
			rest = append(rest, p)
		}
	}
	l.signal(group, sig, false)
	left := WaitGone(group, deadline, l.gone)
	if len(left) > 0 && grace <= 0 {
		left = append(left, rest...) // no time for anything: all at once
	} else {
		if len(left) > 0 {
			// The group outlived the grace (a member that ignores sig):
			// it is killed, and what had left it is then treated as when
			// the group ends by itself, SIGTERM first; one stubborn
			// member does not cost a daemon that left the group its
			// clean shutdown.
			l.sigkill(left)
			WaitGone(left, time.Now().Add(2*time.Second), l.gone)
		}
		// The group is gone. What had left it and ends with it is not
		// an escaper; what is still there a moment later is signalled
		// alone: those seen at the start (by pid and start time: with
		// no subreaper above them, as when the monitor was killed, they
		// went to init and are no descendants of root's now) and those
		// the tree has now.
		rest = WaitGone(union(rest, tree()), time.Now().Add(FollowOn), l.gone)
		rest = sparedOut(rest, root, spare) // what became another's since the first look
		l.signal(rest, syscall.SIGTERM, true)
		left = WaitGone(rest, later(deadline, time.Now().Add(time.Second)), l.gone)
	}
	// Anything the tree started while it was being stopped joins the rest.
	for _, p := range tree() {
		if !contains(left, p) {
			left = append(left, p)
		}
	}
	l.kill(sparedOut(left, root, spare))
	l.rep.ElapsedMs = Ms(time.Since(l.start))
	for i := range l.rep.Signalled {
		if gone, ok := l.exited[l.rep.Signalled[i].PID]; ok {
			ms := Ms(gone.Sub(l.start))
			l.rep.Signalled[i].ExitMs = &ms
		}
	}
	return l.rep
}

// kill sends SIGKILL to what is left, and waits a little for it to go.
func (l *stopRun) kill(left []Info) {
	l.sigkill(left)
	if len(left) > 0 {
		for _, p := range WaitGone(left, time.Now().Add(2*time.Second), l.gone) {
			l.rep.StillAlive = append(l.rep.StillAlive, p.PID)
		}
	}
}

// sigkill sends SIGKILL to each of ps still alive, and records it.
func (l *stopRun) sigkill(ps []Info) {
	signalled := map[int]bool{}
	for _, s := range l.rep.Signalled {
		signalled[s.PID] = true
	}
	for _, p := range ps {
		if Signal(p, syscall.SIGKILL) {
			l.rep.SIGKILL = true
			esc := p.PGID != l.pgid
			l.rep.Signalled = append(l.rep.Signalled, Signalled{PID: p.PID, Comm: p.Comm, Signal: "SIGKILL", Escaper: esc})
			if esc && !signalled[p.PID] {
				l.rep.Escapers++
			}
		}
	}
}

// sparedOut is ps without what spare leaves out now, or what descends
// from such a process (its parents read again, up to root): a process
// seen at a stop's first look may have become another's since (a
// nested service's monitor that had not yet written its state).
func sparedOut(ps []Info, root int, spare Spare) []Info {
	if spare == nil {
		return ps
	}
	var out []Info
	for _, p := range ps {
		if !sparedNow(p, root, spare) {
			out = append(out, p)
		}
	}
	return out
}

// sparedNow tells whether spare leaves p out, or one of its ancestors
// below root.
func sparedNow(p Info, root int, spare Spare) bool {
	for cur, depth := p, 0; depth < 64; depth++ {
		if cur.PID != root && spare(cur) {
			return true
		}
		if cur.PID == root || cur.PPID <= 1 {
			return false
		}
		parent, err := Stat(cur.PPID)
		if err != nil {
			return false
		}
		cur = parent
	}
	return false
}

// union is a with each process of b that is not in it.
func union(a, b []Info) []Info {
	out := append([]Info(nil), a...)
	for _, p := range b {
		if !contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func contains(ps []Info, p Info) bool {
	for _, q := range ps {
		if q.PID == p.PID && q.Start == p.Start {
			return true
		}
	}
	return false
}

// SignalName is a signal's conventional name ("SIGTERM").
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// ParseSignal reads a signal's name, with or without its SIG prefix and
// in either case (TERM, SIGINT, usr1), or its number (15).
func ParseSignal(s string) (syscall.Signal, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 || n >= 65 || unix.SignalName(syscall.Signal(n)) == "" {
			return 0, false
		}
		return syscall.Signal(n), true
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	sig := unix.SignalNum(name)
	return sig, sig != 0
}
