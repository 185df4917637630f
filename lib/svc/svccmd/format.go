package svccmd

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/svctext"
)

// words are what the command line calls what a person can do.
var words = svctext.Words{
	ReadyBy: map[string]string{"listen": "its listening socket", "output": "its output and its listening socket", "port": "--ready-port",
		"url": "--ready-url", "regex": "--ready-regex", "command": "--ready-cmd"},
	Waiting:      func(name string) string { return "svc wait " + name + ", svc tail -f " + name },
	LastLaunch:   func(name string) string { return "svc status " + name },
	StartInstead: "run it with svc start",
	KeepRunning:  "to keep one running, start it with svc start",
	StopSignal:   "--stop-signal",
	NoFollow:     "--no-follow",
	MaxRestarts:  "--max-restarts",
	UntilExit:    "--until-exit",
}

// FormatStart says what svc start found, for people.
func FormatStart(r *svc.StartResult) string { return svctext.Start(r, words) }

// listJSON is one line of svc ls --json.
type listJSON struct {
	Name       string     `json:"name"`
	Status     svc.Status `json:"status"`
	Supervised bool       `json:"supervised"`
	PID        int        `json:"pid,omitempty"`
	svc.Endpoint
	Warning   string    `json:"warning,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	// RunStartedAt: when the run now going began, once restarted.
	RunStartedAt *time.Time `json:"runStartedAt,omitempty"`
	ReadyAt      *time.Time `json:"readyAt,omitempty"`
	EndedAt      *time.Time `json:"endedAt,omitempty"`
	proc.Ended
	Error           string   `json:"error,omitempty"`
	PortPreoccupied bool     `json:"portPreoccupied,omitempty"`
	PortHolder      string   `json:"portHolder,omitempty"`
	LogNote         string   `json:"logNote,omitempty"`
	Command         []string `json:"command"`
	// ProxyURL is its URL through svc proxy, when the proxy runs.
	ProxyURL string           `json:"proxyUrl,omitempty"`
	Worktree *svc.WorktreeTag `json:"worktree,omitempty"`
	// Restarted, Health and Change: its restarts by cause, what its
	// health probes found, what caused its last restart on change.
	Restarted svc.Restarted `json:"restarted"`
	Health    *svc.Health   `json:"health,omitempty"`
	Change    *svc.Change   `json:"change,omitempty"`
	// RestartAt is when a launch that ended is restarted, while it
	// waits out its backoff (pid absent then), and how the last ended.
	RestartAt *time.Time  `json:"restartAt,omitempty"`
	LastRun   *svc.Launch `json:"lastRun,omitempty"`
	// Tail: status's, of a service that ended by itself and not well.
	Tail []string `json:"tail,omitempty"`
}

// ListJSON is the --json shape of a listing; proxy is svc proxy's
// (its Port 0: it does not run).
func ListJSON(l *svc.Listing, proxy svc.Proxied) any { return listJSONOf(l, proxy) }

func listJSONOf(l *svc.Listing, proxy svc.Proxied) listJSON {
	return listJSON{ProxyURL: proxyURL(proxy, l), Worktree: l.Spec.Worktree, Name: l.Name, Status: l.Status, Supervised: l.Supervised, PID: l.PID, Endpoint: l.Endpoint,
		StartedAt: l.StartedAt, RunStartedAt: runStarted(l), ReadyAt: l.ReadyAt, EndedAt: l.EndedAt, Ended: l.Ended, Error: l.Error,
		PortPreoccupied: l.PortPreoccupied, PortHolder: l.PortHolder, LogNote: l.LogNote, Command: l.Spec.Command,
		Warning: l.Warning, Restarted: l.Restarted, Health: l.Health, Change: l.Change, RestartAt: l.RestartDue(), LastRun: lastRun(l)}
}

// runStarted is when the run now going began, for a live service that
// was restarted.
func runStarted(l *svc.Listing) *time.Time {
	if !l.Status.Live() {
		return nil
	}
	return l.RunStartedAt
}

// lastRun is how the last launch before this one ended, when the service
// was restarted.
func lastRun(l *svc.Listing) *svc.Launch {
	if l.Restarts == 0 || len(l.Launches) == 0 || !l.Status.Live() {
		return nil
	}
	return &l.Launches[len(l.Launches)-1]
}

// proxyURL is a ready service's URL through the proxy, or "".
func proxyURL(proxy svc.Proxied, l *svc.Listing) string {
	if l.Status != svc.Ready {
		return ""
	}
	return proxy.URL(l)
}

// FormatList is svc ls for people; a service the proxy (its Port 0:
// none) reaches is shown at its URL there as well as at its own, and a
// short name two of them would share is noted.
func FormatList(ls []*svc.Listing, now time.Time, proxy svc.Proxied) string {
	if len(ls) == 0 {
		return "no services\n"
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSTATUS\tPID\tUP\tWHERE / HOW\tCOMMAND")
	for _, l := range ls {
		pid, up := "-", "-"
		if l.Status.Live() && l.PID != 0 {
			pid, up = fmt.Sprint(l.PID), svctext.Age(l.Up(), now)
		}
		status := string(l.Status)
		if l.Status.Live() && !l.Supervised {
			status += " (unsupervised)"
		}
		where := svctext.Outcome(l)
		if u := proxyURL(proxy, l); u != "" {
			where = u + " (" + where + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", l.Name, status, pid, up, where, cmdline.DisplayLine(l.Spec.Argv()))
	}
	w.Flush()
	b.WriteString(sharedNote(ls, proxy))
	return b.String()
}

// sharedNote says which short names of the proxy services of ls would
// share, and so are none's, when the proxy runs.
func sharedNote(ls []*svc.Listing, proxy svc.Proxied) string {
	if proxy.Port == 0 {
		return ""
	}
	var notes []string
	for host, names := range proxy.Names.Shared() {
		if !slices.ContainsFunc(ls, func(l *svc.Listing) bool { return slices.Contains(names, l.Name) }) {
			continue
		}
		var own []string
		for _, n := range names {
			if h := proxy.Names.Host(n); h != "" {
				own = append(own, h)
			}
		}
		if len(own) == 0 {
			notes = append(notes, fmt.Sprintf("note: %s would be %s's, which have no other: each is at its own URL only\n",
				proxy.HostURL(host), strings.Join(names, "'s and ")))
			continue
		}
		notes = append(notes, fmt.Sprintf("note: %s would be %s's: each has its own name (%s), and %s lists them\n",
			proxy.HostURL(host), strings.Join(names, "'s and "), strings.Join(own, ", "), host))
	}
	slices.Sort(notes)
	return strings.Join(notes, "")
}

// FormatStatus is one service for people, with its worktree and its URL
// through the proxy (its Port 0: none).
func FormatStatus(l *svc.Listing, now time.Time, proxy svc.Proxied) string {
	text := svctext.Status(l, now, words)
	if wt := l.Spec.Worktree; wt != nil {
		text += fmt.Sprintf("worktree: %s (slot %d, %s)\n", wt.Slug, wt.Slot, wt.Top)
	}
	if u := proxyURL(proxy, l); u != "" {
		text += "proxy: " + u + "\n"
	}
	return text
}

// FormatStop says what a stop did, for people.
func FormatStop(r *svc.StopReport) string {
	text := svctext.Stop(r)
	if note := svctext.Killed(r, words); note != "" {
		text += "note: " + note + "\n"
	}
	return text
}
