package mcpserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/svctext"
)

// The summaries the tools give beside their fields: one or a few lines of
// text for the model, which name the tools, never a command line.

// words are what the MCP server calls what an agent can do.
var words = svctext.Words{
	ReadyBy: map[string]string{"listen": "its listening socket", "output": "its output and its listening socket", "port": "its ready port",
		"url": "its ready URL", "regex": "its ready pattern", "command": "its ready command"},
	Waiting:      func(string) string { return "status tells when it is, output shows what it prints" },
	LastLaunch:   func(string) string { return "status has how the last run ended" },
	StartInstead: "start it with start",
	KeepRunning:  "to keep one running, start it with start",
	StopSignal:   "stop_signal",
	NoFollow:     "it was started not to follow a daemon",
	MaxRestarts:  "the most restarts it was given",
	UntilExit:    "the process it was tied to",
}

// startSummary is what a start found. A service that runs without
// listening (a watcher, a worker) is said so in an agent's terms: there
// is nothing to wait for, and output is where it shows anything.
func startSummary(r *svc.StartResult) string {
	text := strings.TrimSpace(svctext.Start(r, words))
	if r.Status == svc.Running {
		_, rest, _ := strings.Cut(text, "\n")
		text = strings.TrimSpace(fmt.Sprintf("%s is running (pid %d) and does not listen: nothing to connect to, so there is nothing to wait for; output shows what it prints\n%s", r.Name, r.PID, rest))
	}
	return text
}

// statusSummary is how a service stands.
func statusSummary(l *svc.Listing, now time.Time) string {
	return strings.TrimSpace(svctext.Status(l, now, words))
}

// stopSummary is what a stop did.
func stopSummary(r *svc.StopReport) string {
	text := strings.TrimSpace(svctext.Stop(r))
	if note := svctext.Killed(r, words); note != "" {
		text += "\nIt" + strings.TrimPrefix(note, "it") + "."
	}
	return text
}
