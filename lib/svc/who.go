package svc

import (
	"strings"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc/ready"
)

// PortUse is who holds a port: the process listening on it, and the
// service that process belongs to, if any.
type PortUse struct {
	Port int `json:"port"`
	// Listening: something listens on the port; PID is 0 when it is a
	// process svc cannot see (another user's).
	Listening bool   `json:"listening"`
	PID       int    `json:"pid,omitempty"`
	Comm      string `json:"comm,omitempty"`
	// Service is the service whose tree holds it, "" for none; Scope its
	// project or scope (the part of its name before '/').
	Service  string       `json:"service,omitempty"`
	Scope    string       `json:"scope,omitempty"`
	Project  string       `json:"project,omitempty"` // the project's directory, for svc up's services
	Worktree *WorktreeTag `json:"worktree,omitempty"`
	// Given: no one listens, but a live service was given the port and
	// may yet (it is starting).
	Given bool `json:"given,omitempty"`
}

// Who finds who holds port: the listening process, then the live service
// it descends from (a service's command, or a daemon its monitor
// follows), by its process tree — never by a port recorded in a file
// alone, which another process may hold now.
func Who(home string, port int) *PortUse {
	u := &PortUse{Port: port}
	holders, listening := ready.Holders(port)
	u.Listening = listening
	rows, _ := LookAll(home)
	if len(holders) > 0 {
		h := holders[0]
		u.PID, u.Comm = h.PID, h.Comm
		for _, hp := range holders {
			if l := serviceOf(rows, hp.PID); l != nil {
				u.PID, u.Comm = hp.PID, hp.Comm
				u.describe(l)
				return u
			}
		}
		return u
	}
	if !listening {
		for _, l := range rows {
			if l.Status.Live() && l.Spec.Port == port {
				u.Given = true
				u.describe(l)
			}
		}
	}
	return u
}

func (u *PortUse) describe(l *Listing) {
	u.Service = l.Name
	if scope, _, ok := strings.Cut(l.Name, "/"); ok {
		u.Scope = scope
	}
	if l.Spec.Project != nil {
		u.Project = l.Spec.Project.Dir
	}
	u.Worktree = l.Spec.Worktree
}

// serviceOf is the live service whose process or monitor pid descends
// from, or nil.
func serviceOf(rows []*Listing, pid int) *Listing {
	roots := map[int]*Listing{}
	for _, l := range rows {
		if !l.Status.Live() {
			continue
		}
		if l.State.PID > 0 {
			roots[l.State.PID] = l
		}
		if l.MonitorPID > 0 {
			roots[l.MonitorPID] = l
		}
	}
	for p, n := pid, 0; p > 1 && n < 64; n++ {
		if l, ok := roots[p]; ok {
			return l
		}
		info, err := proc.Stat(p)
		if err != nil {
			return nil
		}
		p = info.PPID
	}
	return nil
}
