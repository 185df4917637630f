package svccmd

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
)

func secs(ms float64) string { return fmt.Sprintf("%.2fs", ms/1000) }

func joinInts(ns []int, sep string) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, sep)
}

// FormatStart says what svc start found, for people.
func FormatStart(r *svc.StartResult) string {
	var b strings.Builder
	switch r.Status {
	case svc.Ready:
		where := r.URL
		if where == "" && r.Port > 0 {
			where = fmt.Sprintf("port %d", r.Port)
		}
		how := map[string]string{"listen": "its listening socket", "output": "its output, port probed", "port": "--ready-port", "url": "--ready-url", "regex": "--ready-regex", "command": "--ready-cmd"}[r.ReadyBy]
		if where != "" {
			fmt.Fprintf(&b, "%s is ready at %s (pid %d; from %s after %s)\n", r.Name, where, r.PID, how, secs(r.AfterMs))
		} else {
			fmt.Fprintf(&b, "%s is ready (pid %d; from %s after %s)\n", r.Name, r.PID, how, secs(r.AfterMs))
		}
	case svc.Starting:
		fmt.Fprintf(&b, "%s is starting (pid %d); not ready after %s — svc wait %s, svc tail -f %s\n", r.Name, r.PID, secs(r.AfterMs), r.Name, r.Name)
	case svc.Running:
		fmt.Fprintf(&b, "%s is running (pid %d); nothing to connect to — a watcher, most likely\n", r.Name, r.PID)
	case svc.Exited:
		how := "exited"
		switch {
		case r.Signal != "":
			how = "was killed by " + r.Signal
		case r.ExitCode != nil:
			how = fmt.Sprintf("exited with code %d", *r.ExitCode)
		}
		fmt.Fprintf(&b, "%s %s after %s\n", r.Name, how, secs(r.AfterMs))
		for _, l := range r.Tail {
			fmt.Fprintf(&b, "  | %s\n", l)
		}
	case svc.Failed:
		fmt.Fprintf(&b, "%s failed: %s\n", r.Name, r.Error)
	}
	if len(r.Ports) > 1 {
		fmt.Fprintf(&b, "note: it listens on ports %s\n", joinInts(r.Ports, ", "))
	}
	if r.Warning != "" {
		fmt.Fprintf(&b, "warning: %s\n", r.Warning)
	}
	if r.PortPreoccupied && r.Port > 0 {
		fmt.Fprintf(&b, "note: port %d is held by %s, not by this service\n", r.Port, r.PortHolder)
	}
	if r.Restarts > 0 {
		fmt.Fprintf(&b, "note: restarted %d %s so far (svc status %s)\n", r.Restarts, map[bool]string{true: "time", false: "times"}[r.Restarts == 1], r.Name)
	}
	return b.String()
}

// listJSON is one line of svc ls --json.
type listJSON struct {
	Name       string     `json:"name"`
	Status     svc.Status `json:"status"`
	Supervised bool       `json:"supervised"`
	PID        int        `json:"pid,omitempty"`
	svc.Endpoint
	Warning   string     `json:"warning,omitempty"`
	StartedAt time.Time  `json:"startedAt"`
	ReadyAt   *time.Time `json:"readyAt,omitempty"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	proc.Ended
	Error           string   `json:"error,omitempty"`
	PortPreoccupied bool     `json:"portPreoccupied,omitempty"`
	PortHolder      string   `json:"portHolder,omitempty"`
	LogNote         string   `json:"logNote,omitempty"`
	Command         []string `json:"command"`
}

// ListJSON is the --json shape of a listing.
func ListJSON(l *svc.Listing) any {
	return listJSON{Name: l.Name, Status: l.Status, Supervised: l.Supervised, PID: l.PID, Endpoint: l.Endpoint,
		StartedAt: l.StartedAt, ReadyAt: l.ReadyAt, EndedAt: l.EndedAt, Ended: l.Ended, Error: l.Error,
		PortPreoccupied: l.PortPreoccupied, PortHolder: l.PortHolder, LogNote: l.LogNote, Command: l.Spec.Command,
		Warning: l.Warning}
}

func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t).Round(time.Second)
	return d.String()
}

func outcome(l *svc.Listing) string {
	switch {
	case l.Signal != "":
		return l.Signal
	case l.ExitCode != nil:
		return fmt.Sprintf("code %d", *l.ExitCode)
	case l.Error != "":
		return l.Error
	case l.URL != "":
		return l.URL
	case l.Port > 0:
		return fmt.Sprintf("port %d", l.Port)
	}
	return ""
}

// FormatList is svc ls for people.
func FormatList(ls []*svc.Listing, now time.Time) string {
	if len(ls) == 0 {
		return "no services\n"
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSTATUS\tPID\tUP\tWHERE / HOW\tCOMMAND")
	for _, l := range ls {
		pid, up := "-", "-"
		if l.Status.Live() {
			pid, up = fmt.Sprint(l.PID), age(l.StartedAt, now)
		}
		status := string(l.Status)
		if l.Status.Live() && !l.Supervised {
			status += " (unsupervised)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", l.Name, status, pid, up, outcome(l), strings.Join(l.Spec.Command, " "))
	}
	w.Flush()
	return b.String()
}

// FormatStatus is one service for people.
func FormatStatus(l *svc.Listing, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", l.Name, l.Status)
	if o := outcome(l); o != "" {
		fmt.Fprintf(&b, " (%s)", o)
	}
	if l.Status.Live() {
		fmt.Fprintf(&b, ", pid %d, up %s", l.PID, age(l.StartedAt, now))
		if !l.Supervised {
			b.WriteString(", unsupervised")
		}
	}
	b.WriteString("\n")
	if l.Status.Live() && len(l.Ports) > 0 {
		fmt.Fprintf(&b, "ports: %s\n", joinInts(l.Ports, ", "))
	}
	if l.Status.Live() && l.Warning != "" {
		fmt.Fprintf(&b, "warning: %s\n", l.Warning)
	}
	if l.LogNote != "" {
		fmt.Fprintf(&b, "note: %s\n", l.LogNote)
	}
	if l.Restarts > 0 {
		last := l.Launches[len(l.Launches)-1]
		how := "exit code ?"
		switch {
		case last.Signal != "":
			how = last.Signal
		case last.ExitCode != nil:
			how = fmt.Sprintf("exit code %d", *last.ExitCode)
		}
		fmt.Fprintf(&b, "restarts: %d; the last run ended with %s\n", l.Restarts, how)
	}
	if l.StopNote != "" && !l.Status.Live() {
		fmt.Fprintf(&b, "note: %s\n", l.StopNote)
	}
	return b.String()
}

// FormatStop says what a stop did, for people.
func FormatStop(r *svc.StopReport) string {
	if r.NotRunning {
		return fmt.Sprintf("%s is not running (%s)\n", r.Name, r.Status)
	}
	var b strings.Builder
	term, kill := 0, 0
	for _, s := range r.Signalled {
		if s.Signal == "SIGKILL" {
			kill++
		} else {
			term++
		}
	}
	fmt.Fprintf(&b, "%s stopped in %s: SIGTERM to %d %s", r.Name, secs(r.ElapsedMs), term, pl(term, "process"))
	if kill > 0 {
		fmt.Fprintf(&b, ", SIGKILL to %d after the grace", kill)
	}
	if r.Escapers > 0 {
		fmt.Fprintf(&b, "; %d had escaped the process group", r.Escapers)
	}
	b.WriteString("\n")
	if len(r.StillAlive) > 0 {
		fmt.Fprintf(&b, "still alive: %v\n", r.StillAlive)
	}
	return b.String()
}

func pl(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "es"
}
