// Package policy is agentry's own rules over an agent's tool calls: one
// file (agentry-policy(5)) of allow, ask and deny rules over the commands
// a call runs (parsed as a shell parses them), the paths it reads or
// writes (symlinks and .. resolved, relative to the working copy) and the
// network hosts it fetches. A policy only narrows a level: lib/host asks
// it about every call a backend reports, and the strictest answer wins.
package policy

import (
	"fmt"
	"strings"
)

// Verdict is what a policy says of a call; a larger one is stricter.
type Verdict uint8

const (
	// None: no rule matched; the level decides alone.
	None Verdict = iota
	// Allow: a rule allows it; the level still decides (a policy never
	// widens one).
	Allow
	// Ask: a person must be asked; with nobody to ask, it is denied.
	Ask
	// Deny: it never runs, and the agent is told which rule stopped it.
	Deny
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "none"
}

// Call is what a backend knows of one tool call, in the terms rules
// match on. A backend fills what it knows; what it leaves empty no rule
// of that kind can match, so a backend says where it cannot report a
// kind (agentry-policy(5) lists which report what).
type Call struct {
	// Tool is the agent's name for the tool, for messages.
	Tool string
	// Command is a shell command line as the agent gave it: it is parsed
	// as sh parses it, and every command it would run is matched.
	Command string
	// Argv is a command given as an argument vector (codex's approvals):
	// matched as it is, a shell's -c body parsed as Command is.
	Argv []string
	// Reads and Writes are paths the call reads and writes, absolute or
	// relative to Dir.
	Reads, Writes []string
	// Hosts are the network hosts (or URLs) the call fetches.
	Hosts []string
	// Dir is the directory the call runs in; empty, the working copy.
	Dir string
}

// Decision is a policy's answer for one call: the strictest rule that
// matched any part of it.
type Decision struct {
	Verdict Verdict
	// Rule is the rule as written, with where it is:
	// `commands.deny "git push*" (policy.toml:3)`.
	Rule string
	// Match is what it matched: one command of the line, its argv joined
	// by spaces; a path relative to the working copy; a host.
	Match string
}

// Policy is a parsed policy file: its rules in the order written. It is
// never changed after Parse, so one may be shared by any number of runs.
type Policy struct {
	name     string
	commands []rule
	reads    []rule
	writes   []rule
	hosts    []rule
}

// Error is a policy file that agentry will not use: TOML that does not
// parse, a table or key agentry-policy(5) does not have, a value of the
// wrong type or a pattern that is not one. A policy fails closed: the
// faces refuse to start an agent under it.
type Error struct {
	// File is the name the policy was given (Load: its path).
	File string
	// Line is the line of the file, from 1; 0 when it is not known.
	Line int
	// Key is the key as written, dotted (commands.deny), when the error
	// is about one.
	Key string
	// Reason says what is wrong, as a sentence without the place.
	Reason string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}
