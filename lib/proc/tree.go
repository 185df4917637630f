package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Info is what /proc/PID/stat says of a process.
type Info struct {
	PID   int
	PPID  int
	PGID  int
	SID   int    // its session
	Start uint64 // start time in clock ticks since boot: with PID, an identity
	State byte   // R, S, D, Z, T …
	Comm  string
}

// Stat reads /proc/PID/stat.
func Stat(pid int) (Info, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Info{}, err
	}
	return parseStat(pid, b)
}

func parseStat(pid int, b []byte) (Info, error) {
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return Info{}, errors.New("proc: bad stat")
	}
	f := strings.Fields(string(b[close+1:]))
	if len(f) < 20 {
		return Info{}, errors.New("proc: short stat")
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	sid, _ := strconv.Atoi(f[3])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return Info{PID: pid, PPID: ppid, PGID: pgid, SID: sid, Start: start, State: f[0][0], Comm: string(b[open+1 : close])}, nil
}

// All reads every process.
func All() []Info {
	entries, _ := os.ReadDir("/proc")
	var out []Info
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if in, err := Stat(pid); err == nil {
			out = append(out, in)
		}
	}
	return out
}

// Tree returns the live processes that descend from root (not root
// itself) or belong to process group pgid (when pgid > 0).
func Tree(root, pgid int) []Info { return TreeSparing(root, pgid, nil) }

// Spare says that a process, and all that descends from it, is no part
// of the tree it is found in: the root of another's tree that the kernel
// made a descendant (a service's supervisor, started from another
// service's command, is orphaned to that one's subreaper). nil spares
// none.
type Spare func(Info) bool

// TreeSparing is Tree without what spare leaves out, and what descends
// from it.
func TreeSparing(root, pgid int, spare Spare) []Info {
	all := All()
	kids := map[int][]Info{}
	for _, p := range all {
		kids[p.PPID] = append(kids[p.PPID], p)
	}
	seen := map[int]bool{}
	var out []Info
	var walk func(int)
	walk = func(pid int) {
		for _, k := range kids[pid] {
			if spare != nil && spare(k) {
				seen[k.PID] = true
				continue
			}
			if !seen[k.PID] {
				seen[k.PID] = true
				if k.State != 'Z' {
					out = append(out, k)
				}
				walk(k.PID)
			}
		}
	}
	walk(root)
	for _, p := range all {
		if pgid > 0 && p.PGID == pgid && !seen[p.PID] && p.PID != root && p.State != 'Z' {
			seen[p.PID] = true
			out = append(out, p)
		}
	}
	return out
}

// Alive reports whether the process p names is still that process and not
// a zombie: same pid, same start time.
func Alive(p Info) bool {
	now, err := Stat(p.PID)
	return err == nil && now.Start == p.Start && now.State != 'Z'
}

// Signal sends sig to p only after confirming it is still the same process
// (pid and start time), so a recycled pid is never signalled. It reports
// whether the signal was sent. Where the kernel has pidfds the process is
// pinned first and signalled through its pidfd, so there is no window
// between the check and the signal in which the pid could be given to
// another process.
func Signal(p Info, sig syscall.Signal) bool {
	fd, err := unix.PidfdOpen(p.PID, 0)
	if err != nil {
		if err != unix.ENOSYS {
			return false // no such process
		}
		return Alive(p) && unix.Kill(p.PID, sig) == nil
	}
	defer unix.Close(fd)
	// The pidfd was opened while p.PID was this process, if the start
	// time is still p's: a process that took the pid later starts later.
	return Alive(p) && unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

// WaitGone waits until none of ps is alive or the deadline passes, and
// returns those still alive. gone, when not nil, hears of each process as
// it is first seen gone.
func WaitGone(ps []Info, deadline time.Time, gone func(Info)) []Info {
	left := ps
	for {
		var still []Info
		for _, p := range left {
			if Alive(p) {
				still = append(still, p)
			} else if gone != nil {
				gone(p)
			}
		}
		left = still
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Children lists pid's children, from /proc/PID/task/*/children.
func Children(pid int) []int {
	if pid <= 0 {
		return nil
	}
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// Descendants returns every live descendant of pid, from the kernel's
// children lists: no walk over every process.
func Descendants(pid int) []int { return DescendantsSparing(pid, nil) }

// DescendantsSparing is Descendants without what spare leaves out, and
// what descends from it.
func DescendantsSparing(pid int, spare Spare) []int {
	var out []int
	queue := ChildrenSparing(pid, spare)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, ChildrenSparing(p, spare)...)
	}
	return out
}

// ChildrenSparing is Children without what spare leaves out.
func ChildrenSparing(pid int, spare Spare) []int {
	kids := Children(pid)
	if spare == nil {
		return kids
	}
	out := kids[:0]
	for _, c := range kids {
		if in, err := Stat(c); err == nil && spare(in) {
			continue
		}
		out = append(out, c)
	}
	return out
}
