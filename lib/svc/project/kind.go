package project

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentry/agentry/lib/svc"
)

// looksServer tells, from its command alone, whether a service is a
// server (a dev server, a database): svc up waits for one to be ready,
// however long its ready timeout. A watcher (tail -f, tsc --watch) is not
// one: it never listens.
//
// Until svc classifies commands into servers, watchers and one-shots
// itself (issue 33), this is svc.LooksLongRunning less the watchers it
// also counts.
func looksServer(command []string) bool {
	line := strings.Join(command, " ")
	return svc.LooksLongRunning(line) && !looksWatcher(line)
}

// looksWatcher is the part of svc.LooksLongRunning that never listens.
func looksWatcher(line string) bool {
	words := strings.Fields(line)
	for i, w := range words {
		if strings.Contains(w, "&&") || strings.Contains(w, ";") {
			words = words[i+1:]
		}
	}
	if len(words) > 0 && words[0] == "exec" {
		words = words[1:]
	}
	if len(words) == 0 {
		return false
	}
	switch filepath.Base(words[0]) {
	case "tail", "journalctl", "watch", "watchexec", "entr", "inotifywait":
		return true
	}
	return slices.ContainsFunc(words[1:], func(a string) bool { return a == "--watch" || a == "-w" || a == "--watchAll" })
}
