package project

import "github.com/agentry/agentry/lib/cmdline"

// looksServer tells, from its command alone, whether a service is a
// server (a dev server, a database): svc up waits for one to be ready,
// however long its ready timeout. A watcher (tail -f, tsc --watch) is
// not one: it never listens.
func looksServer(command []string) bool {
	return cmdline.Classify(cmdline.ShellLine(command)) == cmdline.Server
}
