package svc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// TryLock takes the service's lock for a monitor: exclusively, without
// waiting. It reports false when another monitor holds it. The lock lives
// as long as the returned file stays open — for the monitor, its life.
func TryLock(d Dir) (*os.File, bool, error) {
	f, err := os.OpenFile(d.LockPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	// A monitor holds the lock for its life; Supervised, in any svc that
	// looks at the service (ls, an automatic port's pick), holds it shared
	// for an instant. Refused for a moment, the lock is tried again, so
	// that such a look is never taken for the name being someone's.
	deadline := time.Now().Add(lookWithin)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, true, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, false, err
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, false, nil
		}
		time.Sleep(time.Millisecond)
	}
}

// lookWithin bounds how long a look at the lock (Supervised) can hold it.
const lookWithin = 100 * time.Millisecond

// Supervised reports whether a monitor holds the service's lock — the one
// test of liveness svc uses; no pid from a file is ever signalled to find
// out.
func Supervised(d Dir) bool {
	f, err := os.Open(d.LockPath())
	if err != nil {
		return false
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if err == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return false
	}
	return errors.Is(err, unix.EWOULDBLOCK)
}

// holdRestart takes the service's restart lock, shared, for a restart
// that stops it and starts it again: Restarting tells a Follow that the
// gap between the two runs is not the service's end. The lock is the
// restart's until the returned release, or until its process ends.
func holdRestart(d Dir) (release func()) {
	f, err := os.OpenFile(d.restartLockPath(), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}
	}
	unix.Flock(int(f.Fd()), unix.LOCK_SH)
	return func() { f.Close() }
}

// Restarting reports whether a restart of the service is under way.
func Restarting(d Dir) bool {
	f, err := os.Open(d.restartLockPath())
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB), unix.EWOULDBLOCK)
}

func (d Dir) restartLockPath() string { return d.Path() + "/restart.lock" }

// NameEnv is the variable that gives a service's command its service's
// name (PROJECT/NAME for a project's).
const NameEnv = "SVC_NAME"

// InProject reports whether getenv's environment is a service's of
// project: what runs inside one of its services. Such a process must not
// wait for the project's lock, which the svc up that started the service
// may hold until the service ends (a one-shot that runs svc up of another
// service of its project).
func InProject(getenv func(string) string, project string) bool {
	return strings.HasPrefix(getenv(NameEnv), project+"/")
}

// ProjectHolder is who holds a project's lock: the verb and process that
// took it.
type ProjectHolder struct {
	Verb string
	PID  int
}

// LockProject takes a project's lock, which svc up and svc down hold while
// they start or stop its services, so that two at once take turns rather
// than both starting one service (the second would find its name taken).
// held is called once, when another has held the lock for a moment
// (heldFor), with who (a zero ProjectHolder when that cannot be read);
// the wait ends with ctx.
func LockProject(ctx context.Context, home, project, verb string, held func(ProjectHolder)) (unlock func(), err error) {
	dir := filepath.Join(home, ".project-locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, project), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	told, begin := false, time.Now()
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		if !told && held != nil && time.Since(begin) >= heldFor {
			told = true
			held(projectHolder(f))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	// Who holds it, for the one that waits: written under the lock.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(verb+" "+strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}

// heldFor is how long LockProject waits before it says the lock is held.
const heldFor = 100 * time.Millisecond

// projectHolder reads what the holder of a project's lock wrote.
func projectHolder(f *os.File) ProjectHolder {
	b := make([]byte, 64)
	n, _ := f.ReadAt(b, 0)
	verb, pid, _ := strings.Cut(strings.TrimSpace(string(b[:n])), " ")
	p, err := strconv.Atoi(pid)
	if err != nil {
		return ProjectHolder{}
	}
	return ProjectHolder{Verb: verb, PID: p}
}
