package svc

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/svc/ready"
	"github.com/agentry/agentry/lib/svc/registry"
	"github.com/agentry/agentry/lib/svc/sock"
	"golang.org/x/sys/unix"
)

// PortAuto picks from these ports: below Linux's ephemeral range
// (32768 on), so an outgoing connection does not take one meanwhile, and
// above every worktree's block (lib/svc/registry), so a port picked
// alone never meets one.
const (
	autoPortLow  = registry.BlockPortHigh
	autoPortHigh = 32000
)

// PortAuto is StartOptions.Port's value that asks svc to pick.
const PortAuto = "auto"

// pickPort resolves StartOptions.Port for the service d: a number is checked free,
// "auto" picks one — the same for the same name and directory while it
// stays free. Ports given to live services count as taken even before
// they listen. Each port has a lock of its own (a byte of home's port
// lock file), which the caller holds until the monitor has recorded the
// port (release): two starts at once never get the same port, and starts
// that pick different ports do not wait for each other.
func pickPort(d Dir, given, cwd string) (port int, release func(), err error) {
	if given == "" {
		return 0, func() {}, nil
	}
	f, err := os.OpenFile(filepath.Join(d.Home, ".ports.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if given != PortAuto {
		port, err = strconv.Atoi(given)
		if err != nil || port < 1 || port > 65535 {
			return 0, nil, &FieldError{Field: "port", Value: given, Err: ErrBadPort}
		}
		if _, err = lockPort(f, port, true); err != nil {
			return 0, nil, err
		}
		// Under the port's lock, what live services were given is final.
		if other, ok := portsGiven(d)[port]; ok {
			return 0, nil, &PortError{Field: "port", Port: port, Service: other}
		}
		if holder := ready.PortHolder(port); holder != "" || !free(port) {
			if holder == "" {
				holder = "another process"
			}
			return 0, nil, &PortError{Field: "port", Port: port, Holder: holder}
		}
		return port, closeOnce(f), nil
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s", d.Name, cwd)
	span := autoPortHigh - autoPortLow
	first := int(h.Sum32() % uint32(span))
	taken := portsGiven(d)
	for i := range span {
		p := autoPortLow + (first+i)%span
		if _, ok := taken[p]; ok || !free(p) {
			continue
		}
		locked, err := lockPort(f, p, false)
		if err != nil {
			return 0, nil, err
		}
		if !locked {
			continue // another start is giving it out
		}
		// Given out and recorded since taken was read?
		if _, ok := portsGiven(d)[p]; ok {
			unlockPort(f, p)
			taken = portsGiven(d)
			continue
		}
		return p, closeOnce(f), nil
	}
	return 0, nil, fmt.Errorf("no free port between %d and %d", autoPortLow, autoPortHigh)
}

// lockPort takes port's lock: the byte at offset port of the port lock
// file, an open file description lock, so held per start, whichever
// thread asks. wait: until it is free; else locked is false when another
// holds it.
func lockPort(f *os.File, port int, wait bool) (locked bool, err error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: int64(port), Len: 1}
	cmd := unix.F_OFD_SETLK
	if wait {
		cmd = unix.F_OFD_SETLKW
	}
	err = unix.FcntlFlock(f.Fd(), cmd, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return false, nil
	}
	return err == nil, err
}

func unlockPort(f *os.File, port int) {
	lk := unix.Flock_t{Type: unix.F_UNLCK, Whence: 0, Start: int64(port), Len: 1}
	unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}

// closeOnce closes the lock file (and so lets go of its lock) once.
func closeOnce(f *os.File) func() {
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }
}

// portsGiven maps the given port of every other live service to its name.
func portsGiven(d Dir) map[int]string {
	taken := map[int]string{}
	rows, _ := LookAll(d.Home)
	for _, l := range rows {
		if l.Name != d.Name && l.Status.Live() && l.Spec.Port > 0 {
			taken[l.Spec.Port] = l.Name
		}
	}
	return taken
}

// portsHeld is a *PortError when command names a port to listen on
// (cmdline.Ports) that a live service of the home holds, or was given and
// may yet listen on; nil otherwise, whoever else holds it: only a
// service of svc's is known to be what the command would collide with.
func portsHeld(home string, command []string) error {
	if len(command) == 0 {
		return nil
	}
	for _, p := range cmdline.Ports(cmdline.ShellLine(command)) {
		u := Who(home, p)
		if u.Service == "" {
			continue
		}
		l, err := Look(Dir{Home: home, Name: u.Service})
		same := err == nil && slices.Equal(l.Spec.Command, command)
		return &PortError{Field: "command", Port: p, Service: u.Service, Held: u.Listening, Same: same}
	}
	return nil
}

// free reports whether the port can be listened on, on every address.
func free(port int) bool { return sock.CanListen(port) }

// Port is the port of a service for scripts, the one a program reaches it
// on: the port it was given, unless it was found listening elsewhere only
// (a dev server that reads no $PORT); else the one it was found ready on;
// a *NoPortError when it has neither.
func Port(d Dir) (int, error) {
	l, err := Look(d)
	if err != nil {
		return 0, err
	}
	switch {
	case l.Spec.Port > 0:
		return reachedOn(l, l.Spec.Port), nil
	case l.Port > 0 && !l.PortPreoccupied:
		return l.Port, nil
	}
	return 0, &NoPortError{Name: d.Name, Status: l.Status}
}
