package svc

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/agentry/agentry/lib/svc/ready"
	"github.com/agentry/agentry/lib/svc/sock"
	"golang.org/x/sys/unix"
)

// PortAuto picks from these ports: below Linux's ephemeral range
// (32768 on), so an outgoing connection does not take one meanwhile.
const (
	autoPortLow  = 20000
	autoPortHigh = 32000
)

// PortAuto is StartOptions.Port's value that asks svc to pick.
const PortAuto = "auto"

// pickPort resolves StartOptions.Port for the service d: a number is checked free,
// "auto" picks one — the same for the same name and directory while it
// stays free. Ports given to live services count as taken even before
// they listen. The choice is made under home's port lock, which the
// caller holds until the monitor has recorded the port (release), so two
// starts at once never get the same port.
func pickPort(d Dir, given, cwd string) (port int, release func(), err error) {
	if given == "" {
		return 0, func() {}, nil
	}
	unlock, err := lockPorts(d.Home)
	if err != nil {
		return 0, nil, err
	}
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	taken := portsGiven(d)
	if given != PortAuto {
		port, err = strconv.Atoi(given)
		if err != nil || port < 1 || port > 65535 {
			return 0, nil, &FieldError{Field: "port", Value: given, Err: ErrBadPort}
		}
		if other, ok := taken[port]; ok {
			return 0, nil, &PortError{Field: "port", Port: port, Service: other}
		}
		if holder := ready.PortHolder(port); holder != "" || !free(port) {
			if holder == "" {
				holder = "another process"
			}
			return 0, nil, &PortError{Field: "port", Port: port, Holder: holder}
		}
		return port, unlock, nil
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s", d.Name, cwd)
	span := autoPortHigh - autoPortLow
	first := int(h.Sum32() % uint32(span))
	for i := range span {
		p := autoPortLow + (first+i)%span
		if _, ok := taken[p]; !ok && free(p) {
			return p, unlock, nil
		}
	}
	return 0, nil, fmt.Errorf("no free port between %d and %d", autoPortLow, autoPortHigh)
}

// lockPorts takes home's port lock, waiting for it.
func lockPorts(home string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(home, ".ports.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }, nil
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

// free reports whether the port can be listened on, on every address.
func free(port int) bool { return sock.CanListen(port) }

// Port is the port of a service for scripts: the port it was given, else
// the one it was found ready on; a *NoPortError when it has neither.
func Port(d Dir) (int, error) {
	l, err := Look(d)
	if err != nil {
		return 0, err
	}
	switch {
	case l.Spec.Port > 0:
		return l.Spec.Port, nil
	case l.Port > 0 && !l.PortPreoccupied:
		return l.Port, nil
	}
	return 0, &NoPortError{Name: d.Name, Status: l.Status}
}
