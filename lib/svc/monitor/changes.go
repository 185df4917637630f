package monitor

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/svc"
	"golang.org/x/sys/unix"
)

// The watch of files (Spec.Watch) and of the services depended on
// (Spec.Cascade, cascade.go): each sends a burst of changes to the
// supervising loop, which restarts the service for it (restartFor).

// watchChanges starts the watches the spec asks for, before the loop runs.
func (m *monitor) watchChanges() {
	cascade := m.spec.Cascade && m.spec.Project != nil && len(m.spec.Project.DependsOn) > 0
	if len(m.spec.Watch) == 0 && !cascade {
		return
	}
	m.events.change = make(chan svc.Change)
	if len(m.spec.Watch) > 0 {
		dir := m.spec.Cwd
		if dir == "" {
			dir, _ = os.Getwd()
		}
		f := newFiles(dir, m.spec.Watch, m.spec.WatchExclude)
		changed := make(chan fileChange, 64)
		go m.watchFiles(f, changed)
		exists := func(rel string) bool { _, err := os.Lstat(filepath.Join(dir, rel)); return err == nil }
		go debounce(changed, m.spec.Debounce, exists, m.events.change)
	}
	if cascade {
		go m.watchDeps(m.events.change)
	}
}

// fileChange is one file that changed, relative to the service's directory.
type fileChange struct {
	rel string
	at  time.Time
}

// debounce sends one change for each burst: once no file has changed
// for quiet, or at the latest 10 quiet periods (at least 2s) after its
// first change, so that a file written without end still restarts. It
// names the first file of the burst that is still there (exists) at its
// end — an editor's or sed -i's temporary file, renamed onto the file it
// saves, is gone by then — else its first.
func debounce(in <-chan fileChange, quiet time.Duration, exists func(rel string) bool, out chan<- svc.Change) {
	for first := range in {
		seen := map[string]bool{first.rel: true}
		order := []fileChange{first}
		q, limit := time.NewTimer(quiet), time.NewTimer(max(10*quiet, 2*time.Second))
	burst:
		for {
			select {
			case c := <-in:
				if !seen[c.rel] && len(order) < 64 {
					order = append(order, c)
				}
				seen[c.rel] = true
				q.Reset(quiet)
			case <-q.C:
				break burst
			case <-limit.C:
				break burst
			}
		}
		q.Stop()
		limit.Stop()
		named := first
		for _, c := range order {
			if exists(c.rel) {
				named = c
				break
			}
		}
		out <- svc.Change{File: named.rel, At: first.at, Files: len(seen)}
	}
}

// The events an inotify watch of a directory asks for: a file written
// and closed, moved in or out, created or removed (a directory created
// is watched in turn), and the directory itself gone.
const dirEvents = unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_DELETE_SELF | unix.IN_ONLYDIR

// watchFiles watches the directories under the patterns' roots with
// inotify and passes on the changes the patterns want; where inotify is
// unavailable or out of watches it polls instead, and says so once.
func (m *monitor) watchFiles(f *files, out chan<- fileChange) {
	in, err := newInotify()
	if err == nil {
		dirs := map[int]string{}
		roots := f.roots()
		for _, r := range roots {
			if err = in.addTree(r, f, dirs, nil); err != nil {
				break
			}
		}
		// The walk's garbage (an entry for every file of the tree) goes
		// back to the system now rather than stay in the monitor's RSS.
		debug.FreeOSMemory()
		if err == nil {
			in.run(func(wd int, mask uint32, name string) {
				dir, ok := dirs[wd]
				switch {
				case mask&unix.IN_Q_OVERFLOW != 0:
					out <- fileChange{rel: "(too many changes to tell)", at: time.Now()}
				case !ok:
				case mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF) != 0:
					delete(dirs, wd)
					if slices.Contains(roots, dir) {
						// A root went (rm -rf, a checkout that replaced
						// it): watch from the directory it would come
						// back in, as when it was missing at the start.
						roots = f.roots()
						for _, r := range roots {
							if !slices.Contains(slices.Collect(maps.Values(dirs)), r) {
								_ = in.addTree(r, f, dirs, nil)
							}
						}
					}
				case mask&unix.IN_ISDIR != 0 && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
					// A directory came: moved in whole, or made and
					// filled before its watch was there (a checkout).
					// Its files that the patterns want are changes.
					p := filepath.Join(dir, name)
					if !f.skipDir(p) {
						// Out of watches now: what is watched still is.
						_ = in.addTree(p, f, dirs, func(rel string) { out <- fileChange{rel: rel, at: time.Now()} })
					}
				case mask&unix.IN_ISDIR == 0:
					if rel, ok := f.wants(filepath.Join(dir, name)); ok {
						out <- fileChange{rel: rel, at: time.Now()}
					}
				}
			})
			return
		}
		in.close()
	}
	why := "inotify is unavailable (" + err.Error() + ")"
	if errors.Is(err, unix.ENOSPC) {
		why = "inotify is out of watches (fs.inotify.max_user_watches)"
	}
	m.note("watch: %s; the files are polled every %s instead", why, pollEvery)
	m.rec.set(func(s *svc.State) { s.WatchNote = why + "; polled every " + pollEvery.String() })
	pollFiles(f, out)
}

// pollEvery is how often files are polled where inotify cannot watch them.
const pollEvery = 2 * time.Second

// pollFiles looks at the files under the roots every pollEvery and
// passes on those the patterns want whose time or size changed, or that
// came or went.
func pollFiles(f *files, out chan<- fileChange) { pollFrom(f, f.stamps(), out) }

// pollFrom is pollFiles from a first look taken already.
func pollFrom(f *files, last map[string]stamp, out chan<- fileChange) {
	for range time.Tick(pollEvery) {
		now := f.stamps()
		for rel, s := range now {
			if was, ok := last[rel]; !ok || was != s {
				out <- fileChange{rel: rel, at: time.Now()}
			}
		}
		for rel := range last {
			if _, ok := now[rel]; !ok {
				out <- fileChange{rel: rel, at: time.Now()}
			}
		}
		last = now
	}
}

// stamp is what polling compares of a file.
type stamp struct {
	mod  time.Time
	size int64
}

// stamps are the files under the roots the patterns want, by their
// paths relative to the directory.
func (f *files) stamps() map[string]stamp {
	seen := map[string]stamp{}
	for _, r := range f.roots() {
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if p != r && f.skipDir(p) {
					return filepath.SkipDir
				}
				return nil
			}
			if rel, ok := f.wants(p); ok {
				if info, err := d.Info(); err == nil {
					seen[rel] = stamp{info.ModTime(), info.Size()}
				}
			}
			return nil
		})
	}
	return seen
}

// inotify is an inotify instance, read through the runtime's poller: a
// watch that sees no change costs nothing.
type inotify struct {
	fd int
	f  *os.File
}

func newInotify() (*inotify, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	return &inotify{fd: fd, f: os.NewFile(uintptr(fd), "inotify")}, nil
}

func (in *inotify) close() { in.f.Close() }

func (in *inotify) add(dir string, mask uint32) (int, error) {
	wd, err := unix.InotifyAddWatch(in.fd, dir, mask)
	if err != nil {
		return 0, os.NewSyscallError("inotify_add_watch", err)
	}
	return wd, nil
}

// addTree watches dir and every directory under it that is not skipped,
// and calls found, when set, with each file under them that the patterns
// want. Only running out of watches is an error: a directory that went,
// or cannot be read, is not watched.
func (in *inotify) addTree(dir string, f *files, dirs map[int]string, found func(rel string)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() {
			if found == nil {
				return nil
			}
			if rel, ok := f.wants(p); ok {
				found(rel)
			}
			return nil
		}
		if p != dir && f.skipDir(p) {
			return filepath.SkipDir
		}
		wd, err := in.add(p, dirEvents)
		if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.ENOMEM) {
			return err
		}
		if err == nil {
			dirs[wd] = p
		}
		return nil
	})
}

// run reads events until the instance is closed, calling fn for each:
// the watch, the event's mask, and the name of the file in the
// directory watched ("" for the directory itself).
func (in *inotify) run(fn func(wd int, mask uint32, name string)) {
	buf := make([]byte, 8<<10) // room for 30 events at the least
	for {
		n, err := in.f.Read(buf)
		if err != nil {
			return
		}
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			wd := int(int32(binary.NativeEndian.Uint32(b[0:4])))
			mask := binary.NativeEndian.Uint32(b[4:8])
			size := int(binary.NativeEndian.Uint32(b[12:16]))
			end := unix.SizeofInotifyEvent + size
			if end > len(b) {
				break
			}
			fn(wd, mask, strings.TrimRight(string(b[unix.SizeofInotifyEvent:end]), "\x00"))
			b = b[end:]
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
