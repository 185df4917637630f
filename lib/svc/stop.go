package svc

import (
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
)

// Signalled is one process the stop ladder signalled.
type Signalled struct {
	PID     int    `json:"pid"`
	Comm    string `json:"comm"`
	Signal  string `json:"signal"`
	Escaper bool   `json:"escaper"` // it had left the service's process group
	// ExitMs is how long after the stop began the process was seen gone;
	// absent when it was still alive at the end.
	ExitMs *float64 `json:"exitMs,omitempty"`
}

// StopReport is what a stop did.
type StopReport struct {
	Name       string      `json:"name"`
	Signalled  []Signalled `json:"signalled"`
	SIGKILL    bool        `json:"sigkill"`
	ElapsedMs  float64     `json:"elapsedMs"`
	Escapers   int         `json:"escapers"`
	StillAlive []int       `json:"stillAlive,omitempty"`
	Status     string      `json:"status"`
	Note       string      `json:"note,omitempty"`
}

// Ladder stops every process of a service: the members of its process
// group pgid and every descendant of root (the monitor, a subreaper, so
// that escapers that double-forked out of the group are its descendants
// too). SIGTERM to all, then SIGKILL to what is left after grace; each pid
// is signalled only after its start time confirms it is the same process.
func Ladder(root, pgid int, grace time.Duration) StopReport {
	return ladder(root, pgid, false, grace)
}

// LadderFrom is Ladder for a tree whose root is itself to be stopped: a
// service whose monitor is gone.
func LadderFrom(root int, grace time.Duration) StopReport {
	return ladder(root, root, true, grace)
}

func ladder(root, pgid int, withRoot bool, grace time.Duration) StopReport {
	start := time.Now()
	var rep StopReport
	tree := func() []proc.Info {
		t := proc.Tree(root, pgid)
		if withRoot {
			if r, err := proc.Stat(root); err == nil && r.State != 'Z' {
				t = append([]proc.Info{r}, t...)
			}
		}
		return t
	}
	procs := tree()
	for _, p := range procs {
		if proc.Signal(p, syscall.SIGTERM) {
			rep.Signalled = append(rep.Signalled, Signalled{PID: p.PID, Comm: p.Comm, Signal: "SIGTERM", Escaper: p.PGID != pgid})
			if p.PGID != pgid {
				rep.Escapers++
			}
		}
	}
	exited := map[int]time.Time{}
	noteGone := func(p proc.Info) { exited[p.PID] = time.Now() }
	left := proc.WaitGone(procs, time.Now().Add(grace), noteGone)
	// Anything the tree started while it was being stopped joins the rest.
	for _, p := range tree() {
		if !contains(procs, p) {
			left = append(left, p)
		}
	}
	for _, p := range left {
		if proc.Signal(p, syscall.SIGKILL) {
			rep.SIGKILL = true
			rep.Signalled = append(rep.Signalled, Signalled{PID: p.PID, Comm: p.Comm, Signal: "SIGKILL", Escaper: p.PGID != pgid})
		}
	}
	if len(left) > 0 {
		for _, p := range proc.WaitGone(left, time.Now().Add(2*time.Second), noteGone) {
			rep.StillAlive = append(rep.StillAlive, p.PID)
		}
	}
	rep.ElapsedMs = float64(time.Since(start).Microseconds()) / 1000
	for i := range rep.Signalled {
		if gone, ok := exited[rep.Signalled[i].PID]; ok {
			ms := float64(gone.Sub(start).Microseconds()) / 1000
			rep.Signalled[i].ExitMs = &ms
		}
	}
	return rep
}

func contains(ps []proc.Info, p proc.Info) bool {
	for _, q := range ps {
		if q.PID == p.PID && q.Start == p.Start {
			return true
		}
	}
	return false
}
