package monitor

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/svc"
	"golang.org/x/sys/unix"
)

// watchDeps restarts the service after a service it depends on
// (ProjectTag.DependsOn, within its project) restarted on a change and
// is ready again: each is seen through its state.json, which its
// monitor replaces on every change of state (inotify on its directory;
// polled every second without inotify). A dependency restarted by a
// cascade counts too, so a chain restarts in dependency order.
func (m *monitor) watchDeps(out chan<- svc.Change) {
	project := ""
	if i := strings.LastIndex(m.d.Name, "/"); i >= 0 {
		project = m.d.Name[:i+1]
	}
	deps := map[string]svc.Dir{} // by the path of its directory
	seen := map[string]int{}     // its restarts on change, as last seen
	in, err := newInotify()
	for _, name := range m.spec.Project.DependsOn {
		d := svc.Dir{Home: m.d.Home, Name: project + name}
		deps[d.Path()] = d
		if s, err := svc.ReadState(d); err == nil {
			seen[d.Path()] = s.Restarted.Change
		}
	}
	look := func(d svc.Dir) {
		s, err := svc.ReadState(d)
		if err != nil {
			return
		}
		key := d.Path()
		if s.Restarted.Change < seen[key] { // a new run of it: counted afresh
			seen[key] = s.Restarted.Change
		}
		if s.Restarted.Change == seen[key] || s.Change == nil || !(s.Status == svc.Ready || s.Status == svc.Running || s.Status == svc.Unhealthy) {
			return
		}
		seen[key] = s.Restarted.Change
		name := strings.TrimPrefix(d.Name, project)
		out <- svc.Change{File: s.Change.File, At: s.Change.At, Files: s.Change.Files, Via: name}
	}
	wds := map[int]svc.Dir{}
	if err == nil {
		for p, d := range deps {
			if wd, err := in.add(p, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE|unix.IN_ONLYDIR); err == nil {
				wds[wd] = d
			}
		}
	}
	if err != nil || len(wds) < len(deps) {
		for range time.Tick(time.Second) {
			for _, d := range deps {
				look(d)
			}
		}
	}
	in.run(func(wd int, _ uint32, name string) {
		if d, ok := wds[wd]; ok && name == filepath.Base(d.StatePath()) {
			look(d)
		}
	})
}
