package acp

import "github.com/agentry/agentry/lib/confine"

// Policy is what a level lets an ACP agent do in a working copy: a pure
// function of the level and the working copy, the same for every agent.
//
//	level 1  read, search, fetch and think (and "other", which is asked
//	         for and so refused); no edit, delete, move or command, no
//	         write through fs/write_text_file, no terminal
//	level 2  as 1, and edit, delete and move within the working copy
//	         (not its .git: confine.Writable), and commands (terminals
//	         run in it)
//	level 3  as 2
//
// Ask puts what the level does not allow outright to the daemon (or
// editor): at level 1 everything but reads, at levels 2 and 3 commands and
// changes outside the working copy.
type Policy struct {
	Level int
	Ask   bool
	// AskAll: a policy applies to the run (host.Turn.AskAll), so every
	// call is to be put to the host, and the agent's mode is the one that
	// asks the most, as when the run asks.
	AskAll bool
	// Root is the working copy, its symlinks resolved.
	Root string
}

// ACP's kinds of tool call that change something.
var changing = map[string]bool{"edit": true, "delete": true, "move": true, "execute": true}

// Allows reports whether a call of kind touching paths may run without
// asking anyone.
func (p Policy) Allows(kind string, paths []string) bool {
	switch kind {
	case "read", "search", "fetch", "think":
		return true
	case "edit", "delete", "move":
		return p.Level >= 2 && p.inside(paths)
	case "execute":
		return p.Level >= 2 && !p.Ask
	}
	return p.Level >= 2 // other, or none said
}

// Forbids reports whether a call of kind touching paths is one the level
// forbids running unless agentry allowed it: a changing call (edit,
// delete, move, execute) the level does not allow outright. It is the
// tripwire's test. "other" is too vague to end a turn over.
func (p Policy) Forbids(kind string, paths []string) bool {
	return changing[kind] && !p.Allows(kind, paths)
}

func (p Policy) inside(paths []string) bool {
	for _, path := range paths {
		if _, err := confine.Writable(p.Root, path); err != nil {
			return false
		}
	}
	return true
}
