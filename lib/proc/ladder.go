package proc

import (
	"syscall"
	"time"
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
	Signalled  []Signalled `json:"signalled"`
	SIGKILL    bool        `json:"sigkill"`
	ElapsedMs  float64     `json:"elapsedMs"`
	Escapers   int         `json:"escapers"`
	StillAlive []int       `json:"stillAlive,omitempty"`
}

// Ladder stops a tree: the members of process group pgid and every
// descendant of root (a subreaper, so that escapers that double-forked out
// of the group are its descendants too). SIGTERM to all, then SIGKILL to
// what is left after grace; each pid is signalled only after its start
// time confirms it is the same process.
func Ladder(root, pgid int, grace time.Duration) LadderReport {
	return ladder(root, pgid, false, grace)
}

// LadderFrom is Ladder for a tree whose root is itself to be stopped (a
// service whose monitor is gone).
func LadderFrom(root int, grace time.Duration) LadderReport {
	return ladder(root, root, true, grace)
}

func ladder(root, pgid int, withRoot bool, grace time.Duration) LadderReport {
	start := time.Now()
	rep := LadderReport{Signalled: []Signalled{}}
	tree := func() []Info {
		t := Tree(root, pgid)
		if withRoot {
			if r, err := Stat(root); err == nil && r.State != 'Z' {
				t = append([]Info{r}, t...)
			}
		}
		return t
	}
	procs := tree()
	for _, p := range procs {
		if Signal(p, syscall.SIGTERM) {
			rep.Signalled = append(rep.Signalled, Signalled{PID: p.PID, Comm: p.Comm, Signal: "SIGTERM", Escaper: p.PGID != pgid})
			if p.PGID != pgid {
				rep.Escapers++
			}
		}
	}
	exited := map[int]time.Time{}
	noteGone := func(p Info) { exited[p.PID] = time.Now() }
	left := WaitGone(procs, time.Now().Add(grace), noteGone)
	// Anything the tree started while it was being stopped joins the rest.
	for _, p := range tree() {
		if !contains(procs, p) {
			left = append(left, p)
		}
	}
	for _, p := range left {
		if Signal(p, syscall.SIGKILL) {
			rep.SIGKILL = true
			rep.Signalled = append(rep.Signalled, Signalled{PID: p.PID, Comm: p.Comm, Signal: "SIGKILL", Escaper: p.PGID != pgid})
		}
	}
	if len(left) > 0 {
		for _, p := range WaitGone(left, time.Now().Add(2*time.Second), noteGone) {
			rep.StillAlive = append(rep.StillAlive, p.PID)
		}
	}
	rep.ElapsedMs = Ms(time.Since(start))
	for i := range rep.Signalled {
		if gone, ok := exited[rep.Signalled[i].PID]; ok {
			ms := Ms(gone.Sub(start))
			rep.Signalled[i].ExitMs = &ms
		}
	}
	return rep
}

func contains(ps []Info, p Info) bool {
	for _, q := range ps {
		if q.PID == p.PID && q.Start == p.Start {
			return true
		}
	}
	return false
}
