package mcpserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/svc"
)

// The summaries the tools give beside their fields: one or a few lines of
// text for the model, which name the tools, never a command line.

func secs(ms float64) string { return fmt.Sprintf("%.2fs", ms/1000) }

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// readyBy says how a service was found ready.
var readyBy = map[string]string{"listen": "its listening socket", "output": "its output, port probed", "port": "its ready port",
	"url": "its ready URL", "regex": "its ready pattern", "command": "its ready command"}

// startSummary is what a start found.
func startSummary(r *svc.StartResult) string {
	var b strings.Builder
	switch r.Status {
	case svc.Ready:
		where := r.URL
		if where == "" && r.Port > 0 {
			where = fmt.Sprintf("port %d", r.Port)
		}
		if where != "" {
			fmt.Fprintf(&b, "%s is ready at %s (pid %d; from %s after %s)\n", r.Name, where, r.PID, readyBy[r.ReadyBy], secs(r.AfterMs))
		} else {
			fmt.Fprintf(&b, "%s is ready (pid %d; from %s after %s)\n", r.Name, r.PID, readyBy[r.ReadyBy], secs(r.AfterMs))
		}
	case svc.Starting:
		fmt.Fprintf(&b, "%s is starting (pid %d); not ready after %s — status tells when it is, output shows what it prints\n", r.Name, r.PID, secs(r.AfterMs))
	case svc.Running:
		fmt.Fprintf(&b, "%s is running (pid %d); nothing to connect to — a watcher, most likely\n", r.Name, r.PID)
	case svc.Exited:
		fmt.Fprintf(&b, "%s %s after %s\n", r.Name, ended(r.Signal, r.ExitCode, "exited"), secs(r.AfterMs))
		for _, l := range r.Tail {
			fmt.Fprintf(&b, "  | %s\n", l)
		}
	case svc.Failed:
		fmt.Fprintf(&b, "%s failed: %s\n", r.Name, r.Error)
	}
	if len(r.Ports) > 1 {
		fmt.Fprintf(&b, "note: it listens on ports %s\n", joinInts(r.Ports))
	}
	if r.Warning != "" {
		fmt.Fprintf(&b, "warning: %s\n", r.Warning)
	}
	if r.PortPreoccupied && r.Port > 0 {
		fmt.Fprintf(&b, "note: port %d is held by %s, not by this service\n", r.Port, r.PortHolder)
	}
	if r.Restarts > 0 {
		fmt.Fprintf(&b, "note: restarted %d %s so far (status has how the last run ended)\n", r.Restarts, map[bool]string{true: "time", false: "times"}[r.Restarts == 1])
	}
	return strings.TrimSpace(b.String())
}

// ended says how a command ended: killed by a signal, an exit code, or
// otherwise.
func ended(signal string, code *int, otherwise string) string {
	switch {
	case signal != "":
		return "was killed by " + signal
	case code != nil:
		return fmt.Sprintf("exited with code %d", *code)
	}
	return otherwise
}

func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String()
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

// statusSummary is how a service stands.
func statusSummary(l *svc.Listing, now time.Time) string {
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
		fmt.Fprintf(&b, "ports: %s\n", joinInts(l.Ports))
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
	return strings.TrimSpace(b.String())
}

// stopSummary is what a stop did.
func stopSummary(r *svc.StopReport) string {
	if r.NotRunning {
		return fmt.Sprintf("%s is not running (%s)", r.Name, r.Status)
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
	fmt.Fprintf(&b, "%s stopped in %s: SIGTERM to %d %s", r.Name, secs(r.ElapsedMs), term, map[bool]string{true: "process", false: "processes"}[term == 1])
	if kill > 0 {
		fmt.Fprintf(&b, ", SIGKILL to %d after the grace", kill)
	}
	if r.Escapers > 0 {
		fmt.Fprintf(&b, "; %d had escaped the process group", r.Escapers)
	}
	if len(r.StillAlive) > 0 {
		fmt.Fprintf(&b, "\nstill alive: %v", r.StillAlive)
	}
	return b.String()
}
