// Package svctext says in sentences what a start found, how a service
// stands and what a stop did: the words svc's faces share. Where their
// readers differ — a person at a shell is pointed at svc's commands and
// flags, an agent at its MCP tools — the face gives its own words in
// Words; everything else is said here once.
package svctext

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
)

// Words are what one face calls the things its reader can do.
type Words struct {
	// ReadyBy says how a service was found ready, by StartResult.ReadyBy:
	// "listen", "output", "port", "url", "regex" or "command".
	ReadyBy map[string]string
	// Waiting is what to do about a service still starting, after "—".
	Waiting func(name string) string
	// LastLaunch is where to read how the last launch of a restarting
	// command ended, in the parentheses after "restarted N times so far".
	LastLaunch func(name string) string
	// StartInstead is how to start as a service a command that timed out
	// in the foreground, after "does not exit on its own: ".
	StartInstead string
	// KeepRunning is how to keep a process running that a foreground
	// run's command left behind (it was stopped), after "stopped with it; ".
	KeepRunning string
	// StopSignal is how a service is started with a stop signal of its
	// own, after "is started with ".
	StopSignal string
	// NoFollow, MaxRestarts and UntilExit say what made a service end as
	// its stop cause says, in the parentheses after it: how a service is
	// started not to follow a daemon, with a number of restarts, tied to
	// a process.
	NoFollow, MaxRestarts, UntilExit string
}

// Secs is milliseconds as seconds, to the hundredth.
func Secs(ms float64) string { return fmt.Sprintf("%.2fs", ms/1000) }

// JoinInts joins numbers with sep.
func JoinInts(ns []int, sep string) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, sep)
}

// Age is how long ago t was, to the second; "-" for no time.
func Age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String()
}

// Until says when t comes: "in 3s", or "now" once it has.
func Until(t, now time.Time) string {
	if d := t.Sub(now).Round(100 * time.Millisecond); d > 0 {
		return "in " + d.String()
	}
	return "now"
}

// Outcome is a listing's one word of where or how: its signal or exit
// code once ended, its error, else its URL or port.
func Outcome(l *svc.Listing) string {
	switch {
	case l.Signal != "":
		return l.Signal
	case l.ExitCode != nil:
		return fmt.Sprintf("code %d", *l.ExitCode)
	case l.Error != "":
		return l.Error
	case !l.Status.Live():
		return "" // where it was is no longer where it is
	case l.URL != "":
		return l.URL
	case l.Port > 0:
		return fmt.Sprintf("port %d", l.Port)
	}
	return ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Tail is a log's last lines as the faces show them, each "  | LINE".
func Tail(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "  | %s\n", l)
	}
	return b.String()
}

// lastRunEnded says how a run ended: "exited with code 1", "was killed
// by SIGSEGV", or "ended" when that is not known.
func lastRunEnded(l *svc.Launch) string {
	switch {
	case l == nil:
		return "ended"
	case l.Signal != "":
		return "was killed by " + l.Signal
	case l.ExitCode != nil:
		return fmt.Sprintf("exited with code %d", *l.ExitCode)
	}
	return "ended"
}

// Start says what a start found, a line each, each ending in a newline.
func Start(r *svc.StartResult, w Words) string {
	var b strings.Builder
	switch r.Status {
	case svc.Ready:
		where := r.URL
		if where == "" && r.Port > 0 {
			where = fmt.Sprintf("port %d", r.Port)
		}
		how := w.ReadyBy[r.ReadyBy]
		if where != "" {
			fmt.Fprintf(&b, "%s is ready at %s (pid %d; from %s after %s)\n", r.Name, where, r.PID, how, Secs(r.AfterMs))
		} else {
			fmt.Fprintf(&b, "%s is ready (pid %d; from %s after %s)\n", r.Name, r.PID, how, Secs(r.AfterMs))
		}
	case svc.Starting:
		if r.RestartAt != nil {
			fmt.Fprintf(&b, "%s is starting: its last run %s, and it restarts %s; not ready after %s — %s\n", r.Name, lastRunEnded(r.LastRun), Until(*r.RestartAt, time.Now()), Secs(r.AfterMs), w.Waiting(r.Name))
			break
		}
		fmt.Fprintf(&b, "%s is starting (pid %d); not ready after %s — %s\n", r.Name, r.PID, Secs(r.AfterMs), w.Waiting(r.Name))
	case svc.Running:
		fmt.Fprintf(&b, "%s is running (pid %d); it does not listen, so there is nothing to connect to\n", r.Name, r.PID)
	case svc.Exited:
		how := "exited"
		switch {
		case r.Signal != "":
			how = "was killed by " + r.Signal
		case r.ExitCode != nil:
			how = fmt.Sprintf("exited with code %d", *r.ExitCode)
		}
		fmt.Fprintf(&b, "%s %s after %s\n", r.Name, how, Secs(r.AfterMs))
		b.WriteString(Tail(r.Tail))
	case svc.Failed:
		fmt.Fprintf(&b, "%s failed: %s\n", r.Name, r.Error)
	}
	if r.Followed != nil && r.Status.Live() {
		fmt.Fprintf(&b, "note: %s\n", Followed(r.Followed))
	}
	if note := StopNote(r.StopCause, r.StopNote, w); r.Status == svc.Exited && note != "" {
		fmt.Fprintf(&b, "note: %s\n", note)
	}
	if len(r.Ports) > 1 {
		fmt.Fprintf(&b, "note: it listens on ports %s\n", JoinInts(r.Ports, ", "))
	}
	if r.Warning != "" {
		fmt.Fprintf(&b, "warning: %s\n", r.Warning)
	}
	if r.PortPreoccupied && r.Port > 0 {
		fmt.Fprintf(&b, "note: port %d is held by %s, not by this service\n", r.Port, r.PortHolder)
	}
	switch {
	case r.Restarts > 0 && r.LastRun != nil:
		fmt.Fprintf(&b, "note: restarted %d %s so far; the last run %s; the log's last lines:\n", r.Restarts, plural(r.Restarts, "time", "times"), lastRunEnded(r.LastRun))
		b.WriteString(Tail(r.Tail))
	case r.Restarts > 0:
		fmt.Fprintf(&b, "note: restarted %d %s so far (%s)\n", r.Restarts, plural(r.Restarts, "time", "times"), w.LastLaunch(r.Name))
	}
	return b.String()
}

// Status says how a service stands, a line each, each ending in a newline.
func Status(l *svc.Listing, now time.Time, w Words) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", l.Name, l.Status)
	if o := Outcome(l); o != "" {
		fmt.Fprintf(&b, " (%s)", o)
	}
	if at := l.RestartDue(); at != nil {
		fmt.Fprintf(&b, ", to restart %s", Until(*at, now))
	} else if l.Status.Live() {
		fmt.Fprintf(&b, ", pid %d, up %s", l.PID, Age(l.Up(), now))
		if !l.Supervised {
			b.WriteString(", unsupervised")
		}
	}
	b.WriteString("\n")
	if l.Status.Live() && l.Followed != nil {
		fmt.Fprintf(&b, "note: %s\n", Followed(l.Followed))
	}
	if l.Status.Live() && len(l.Ports) > 0 {
		fmt.Fprintf(&b, "ports: %s\n", JoinInts(l.Ports, ", "))
	}
	if l.Status.Live() && l.Warning != "" {
		fmt.Fprintf(&b, "warning: %s\n", l.Warning)
	}
	if h := l.Spec.HealthSpec; l.Status.Live() && h.Probes() {
		fmt.Fprintf(&b, "probe: %s every %s (%s each; %d failed in a row make it unhealthy)\n", h.Probe(),
			cmp.Or(h.HealthEvery, svc.DefaultHealthEvery), cmp.Or(h.HealthTimeout, min(svc.DefaultHealthTimeout, cmp.Or(h.HealthEvery, svc.DefaultHealthEvery))),
			cmp.Or(h.HealthFailures, svc.DefaultHealthFailures))
	}
	if w := l.Spec.WatchSpec; l.Status.Live() && len(w.Watch) > 0 {
		fmt.Fprintf(&b, "watching: %s", strings.Join(w.Watch, ", "))
		if len(w.WatchExclude) > 0 {
			fmt.Fprintf(&b, "; not %s", strings.Join(w.WatchExclude, ", "))
		}
		fmt.Fprintf(&b, " (quiet for %s)\n", cmp.Or(w.Debounce, svc.DefaultDebounce))
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
	if note := StopNote(l.StopCause, l.StopNote, w); note != "" && !l.Status.Live() {
		fmt.Fprintf(&b, "note: %s\n", note)
	}
	b.WriteString(Watched(&l.State, now))
	return b.String()
}

// Unhealthy says why a service is unhealthy ("unhealthy for 2s: 3 probes
// failed in a row, the last: ..."), "" when it is not.
func Unhealthy(s *svc.State, now time.Time) string {
	h := s.Health
	if h == nil || s.Status != svc.Unhealthy || h.Last == nil || h.Since == nil {
		return ""
	}
	return fmt.Sprintf("unhealthy for %s: %d probes failed in a row, the last: %s", Age(*h.Since, now), h.Failures, h.Last.Said(s.Spec.HealthSpec))
}

// Watched is what status says of a service's health probes and restarts
// on change: why it is unhealthy, its restarts by cause, the file that
// caused the last restart on change and when. "" when none applies.
func Watched(s *svc.State, now time.Time) string {
	var b strings.Builder
	if u := Unhealthy(s, now); u != "" {
		fmt.Fprintf(&b, "health: %s\n", u)
	}
	if s.Health != nil && s.Health.GaveUp {
		b.WriteString("health: no longer restarted for its probes: it failed them after each of its last restarts; one that passes makes it ready again\n")
	}
	if r := s.Restarted; r.Unhealthy > 0 || r.Change > 0 {
		fmt.Fprintf(&b, "restarted: %d unhealthy, %d on change, %d %s\n", r.Unhealthy, r.Change, r.Crash, plural(r.Crash, "crash", "crashes"))
	}
	if c := s.Change; c != nil {
		fmt.Fprintf(&b, "last change: %s at %s", c.File, c.At.Local().Format("15:04:05.000"))
		if c.Files > 1 {
			fmt.Fprintf(&b, " (and %d more)", c.Files-1)
		}
		if c.Via != "" {
			fmt.Fprintf(&b, ", restarted after %s", c.Via)
		}
		fmt.Fprintf(&b, "; restarted %s ago\n", Age(c.RestartedAt, now))
	}
	return b.String()
}

// StopNote says why a service was stopped other than by a stop request,
// or what the end of its command stopped: "redis-server left 1 process
// behind; stopped it (--no-follow)", its cause said with the face's
// words; from a monitor that wrote no cause, the note it wrote (note).
// "" when there is neither.
func StopNote(c *svc.StopCause, note string, w Words) string {
	if c == nil {
		return note
	}
	switch c.Kind {
	case svc.LeftBehind:
		who := c.Program
		if who == "" {
			who = "the command"
		}
		what := fmt.Sprintf("%s left %d processes behind; stopped them", who, c.N)
		if c.N == 1 {
			what = who + " left 1 process behind; stopped it"
		}
		switch c.NotFollowed {
		case svc.OneShot:
			what += " (a one-shot)"
		case svc.NoFollow:
			what += " (" + w.NoFollow + ")"
		}
		return what
	case svc.GaveUp:
		return fmt.Sprintf("gave up after %d %s (%s)", c.N, plural(c.N, "restart", "restarts"), w.MaxRestarts)
	case svc.UntilExit:
		return fmt.Sprintf("stopped because process %d (%s) ended", c.PID, w.UntilExit)
	}
	return note
}

// Followed says that a service's command daemonized and svc follows the
// daemon: "redis-server daemonized: following pid 4242".
func Followed(f *svc.Followed) string {
	from := f.From
	if from == "" {
		from = "the command"
	}
	if f.Comm != "" && f.Comm != f.From {
		return fmt.Sprintf("%s daemonized: following pid %d (%s)", from, f.PID, f.Comm)
	}
	return fmt.Sprintf("%s daemonized: following pid %d", from, f.PID)
}

// Stop says what a stop did, a line each, each ending in a newline:
// "web stopped in 0.12s: SIGINT to 3 processes; it exited with code 0".
// How the service's process ended is said unless it was by a signal the
// stop sent.
func Stop(r *svc.StopReport) string {
	if r.NotRunning {
		return fmt.Sprintf("%s is not running (%s)\n", r.Name, r.Status)
	}
	var b strings.Builder
	var sigs []string // in the order they were sent, SIGKILL apart
	count, kill := map[string]int{}, 0
	for _, s := range r.Signalled {
		if s.Signal == "SIGKILL" {
			kill++
			continue
		}
		if count[s.Signal] == 0 {
			sigs = append(sigs, s.Signal)
		}
		count[s.Signal]++
	}
	fmt.Fprintf(&b, "%s stopped in %s", r.Name, Secs(r.ElapsedMs))
	first := ": "
	switch r.StopKeys {
	case svc.StopKeysEnded:
		b.WriteString(" by its stop keys, no signal needed")
		first = "; "
	case svc.StopKeysIgnored:
		b.WriteString(": its stop keys did not end it within the grace")
		first = "; "
	}
	for i, sig := range sigs {
		sep := ", "
		if i == 0 {
			sep = first
		}
		fmt.Fprintf(&b, "%s%s to %d %s", sep, sig, count[sig], plural(count[sig], "process", "processes"))
	}
	if len(sigs) == 0 && kill == 0 && r.StopKeys != svc.StopKeysEnded {
		b.WriteString(": nothing left to signal")
	}
	if kill > 0 {
		fmt.Fprintf(&b, ", SIGKILL to %d after the grace", kill)
	}
	if r.Escapers > 0 {
		fmt.Fprintf(&b, "; %d had left the process group and outlived it", r.Escapers)
	}
	switch { // ended by a signal it was sent goes without saying
	case r.Signal != "" && count[r.Signal] == 0 && (r.Signal != "SIGKILL" || kill == 0):
		fmt.Fprintf(&b, "; it ended on %s", r.Signal)
	case r.ExitCode != nil:
		fmt.Fprintf(&b, "; it exited with code %d", *r.ExitCode)
	}
	b.WriteString("\n")
	if len(r.StillAlive) > 0 {
		fmt.Fprintf(&b, "still alive: %v\n", r.StillAlive)
	}
	return b.String()
}

// Killed is the note on a stop that had to kill what it was sent to
// after the grace (it reloads on, or ignores, the signal sent first:
// uWSGI on SIGTERM), "" for any other stop: a sentence with no newline.
func Killed(r *svc.StopReport, w Words) string {
	first := ""
	var killed []string
	for _, s := range r.Signalled {
		if s.Signal == "SIGKILL" {
			killed = append(killed, fmt.Sprintf("%s (pid %d)", s.Comm, s.PID))
		} else if first == "" {
			first = s.Signal
		}
	}
	if len(killed) == 0 {
		return ""
	}
	if r.Signal != "SIGKILL" && (r.Signal != "" || r.ExitCode != nil) {
		// The service's own process ended on the signal: what was
		// killed is something else of its tree, which it names.
		if len(killed) > 3 {
			killed = append(killed[:3], fmt.Sprintf("%d more", len(killed)-3))
		}
		return fmt.Sprintf("%s did not end on %s within the grace, and was killed; the service's own process had ended", strings.Join(killed, ", "), first)
	}
	return fmt.Sprintf("it did not end on %s within the grace; a server that stops on another signal (uWSGI: INT or QUIT) is started with %s", first, w.StopSignal)
}

// Ran is the note on a foreground run that did not simply end: timed
// out, interrupted, left processes running (stopped with it), or left a
// child holding its output; "" otherwise.
func Ran(f *proc.RunResult, timeout time.Duration, w Words) string {
	switch {
	case f.TimedOut:
		return fmt.Sprintf("timed out after %v; it looks like this command does not exit on its own: %s", timeout, w.StartInstead)
	case f.Interrupted:
		return "interrupted"
	case len(f.LeftRunning) > 0:
		var names []string
		for _, p := range f.LeftRunning {
			names = append(names, fmt.Sprintf("%s (pid %d)", p.Comm, p.PID))
		}
		note := fmt.Sprintf("the command exited and left %s running in its group, stopped with it; %s",
			strings.Join(names, ", "), w.KeepRunning)
		if f.StillHeld {
			note += "; a background child that left the group still holds its output"
		}
		return note
	case f.StillHeld:
		return "the command exited, but a background child it started still holds its output"
	}
	return ""
}
