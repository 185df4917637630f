package svc

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc/ready"
)

// StartOptions are what Start needs.
type StartOptions struct {
	Home string
	// Name is a plain name (ValidPlainName), checked here; empty: derived
	// from the command.
	Name   string
	Spec   Spec // checked by Spec.Check; fields left zero take their defaults
	Settle time.Duration
	// Port is a port to give the service, in $PORT and for {port}:
	// PortAuto, a number, or "" for none.
	Port string
	// Monitor is the monitor's program; empty: MonitorBinary's.
	Monitor string
	// OnStarted, when set, is called once the monitor has started the
	// command, before Start returns.
	OnStarted func(pid int)
	// Scope, when set, is the project or scope the service belongs to: its
	// name is Scope/Name, and a name derived from the command is made
	// unique within it.
	Scope string
}

// StartResult is the first true thing about a started service.
type StartResult struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	PID    int    `json:"pid,omitempty"`
	Endpoint
	ReadyBy string  `json:"readyBy,omitempty"`
	AfterMs float64 `json:"afterMs"`
	Warning string  `json:"warning,omitempty"`
	// For a service that ended: its exit code or signal, and its log's tail.
	proc.Ended
	Tail            []string `json:"tail,omitempty"`
	Error           string   `json:"error,omitempty"`
	PortPreoccupied bool     `json:"portPreoccupied,omitempty"`
	PortHolder      string   `json:"portHolder,omitempty"`
	Restarts        int      `json:"restarts,omitempty"`
	// Followed: the command daemonized, and svc follows the daemon.
	Followed *Followed `json:"followed,omitempty"`
	// StopCause: what the end of a service that exited stopped (StopNote
	// from a monitor that wrote no cause).
	StopCause *StopCause `json:"stopCause,omitempty"`
	StopNote  string     `json:"stopNote,omitempty"`
	// Background: svc run sent the command to the background.
	Background bool `json:"background,omitempty"`
	// RestartAt: it ended and waits out its backoff to be restarted
	// (PID 0: nothing of it runs).
	RestartAt *time.Time `json:"restartAt,omitempty"`
	// LastRun: for a service restarted and not ready, how its last run
	// ended (its log's tail in Tail).
	LastRun *Launch `json:"lastRun,omitempty"`
}

// Start starts a service under a new monitor and returns at the first of:
// ready, exit, failure, or the settle window. When ctx is done first, the
// service is left running and Start returns what it knows with ctx's error
// — as soon as the monitor has started the command, so there is a pid to
// show.
func Start(ctx context.Context, o StartOptions) (*StartResult, error) {
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if err := o.Spec.Check(); err != nil {
		return nil, err
	}
	if o.Spec.Cwd != "" && !filepath.IsAbs(o.Spec.Cwd) {
		// Kept as the service's own, whatever directory reads it later
		// (svc gc, a restart from elsewhere).
		if abs, err := filepath.Abs(o.Spec.Cwd); err == nil {
			o.Spec.Cwd = abs
		}
	}
	// A one-shot finishes: a port it names is one it connects to (a
	// migration's database), not one it would listen on.
	if o.Spec.Project == nil || !o.Spec.Project.Oneshot {
		if err := portsHeld(o.Home, o.Spec.Command); err != nil {
			return nil, err // started, it could not listen
		}
	}
	if o.Monitor == "" {
		var err error
		if o.Monitor, err = MonitorBinary(); err != nil {
			return nil, err // before anything is made on disk
		}
	}
	// A derived name can be taken between its pick and the monitor's lock
	// by a start running at the same time: then the next suffix is tried.
	// A name the user gave is theirs or refused.
	from := 1
	for try := 1; ; try++ {
		d, n, err := claim(o.Home, o.Scope, o.Name, o.Spec, from)
		if err != nil {
			return nil, err
		}
		res, err := startAs(ctx, o, d)
		if taken := (*TakenError)(nil); o.Name == "" && try < maxNameTries && errors.As(err, &taken) {
			from = n + 1
			continue
		}
		return res, err
	}
}

// maxNameTries bounds the names one start tries when others at the same
// time take them first.
const maxNameTries = 64

// startAs starts the service under the name claim gave it. Until its
// monitor holds the lock, the name may be another start's as well: what
// is made here before then is shared, never truncated — the directory,
// monitor.err (appended to) — so a start that loses leaves the winner's
// service whole, and nothing of its own behind.
func startAs(ctx context.Context, o StartOptions, d Dir) (*StartResult, error) {
	spec := o.Spec.WithDefaults()
	if spec.Worktree == nil && spec.Cwd != "" {
		wt, err := Registry(o.Home).WorktreeOf(spec.Cwd)
		if err != nil {
			return nil, err
		}
		if wt != nil {
			spec.Worktree = worktreeTag(wt)
		}
	}
	if spec.Worktree != nil {
		spec = spec.withWorktree(spec.Worktree)
	}
	port, release, err := pickPort(d, o.Port, spec.Cwd)
	if err != nil {
		return nil, err
	}
	defer release()
	if port > 0 {
		spec = spec.withPort(port)
	}
	if spec.UntilExit > 0 {
		// Before anything of the service is made: a start refused for a
		// process that is gone leaves no record behind.
		if _, err := proc.Stat(spec.UntilExit); err != nil {
			return nil, &FieldError{Field: "untilExit", Value: strconv.Itoa(spec.UntilExit), Err: syscall.ESRCH}
		}
	}
	if err := os.Mkdir(d.Path(), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	errFile, err := os.OpenFile(d.Path()+"/monitor.err", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer errFile.Close()
	launch, err := launchMonitor(o.Monitor, d, spec, errFile)
	if err != nil {
		return nil, err
	}
	if spec.UntilExit > 0 {
		// Pinned by the monitor's pidfd now; its start time tells svc gc
		// later whether the pid is still that process.
		if p, err := proc.Stat(spec.UntilExit); err == nil {
			spec.UntilExitStart = p.Start
		}
	}
	defer launch.reports.Close()
	if err := launch.start(spec); err != nil {
		return nil, err
	}
	// Reaps the monitor if it ends while we are here; once it has, every
	// file it held is closed.
	monitorGone := make(chan struct{})
	go func() { launch.cmd.Wait(); close(monitorGone) }()
	w := &startWait{d: d, settle: o.Settle, monitorGone: monitorGone, res: &StartResult{Name: d.Name, Status: Starting}, begin: time.Now(),
		onStarted: o.OnStarted}
	return w.wait(ctx, releaseOnStarted(readReports(launch.reports), release))
}

// Resolved is s as Start records it for a service of the worktree t
// (nil: none) given port (0: none): what a recorded spec is compared
// with, since the recorded one has SVC_WORKTREE, SVC_SLOT and the port
// in place.
func (s Spec) Resolved(t *WorktreeTag, port int) Spec {
	if t != nil {
		s = s.withWorktree(t)
	}
	if port > 0 {
		s = s.withPort(port)
	}
	return s
}

// Argv is the command as it runs: the --port given in place of {port}
// in its arguments.
func (s Spec) Argv() []string {
	if s.Port <= 0 {
		return s.Command
	}
	out := make([]string, len(s.Command))
	for i, a := range s.Command {
		out[i] = strings.ReplaceAll(a, "{port}", strconv.Itoa(s.Port))
	}
	return out
}

// MentionsPort tells whether "{port}" is in the command's arguments, the
// readiness or health URL or command, or an environment value: where a
// port given to the service goes, and where, with none given, it is left
// as written.
func (s Spec) MentionsPort() bool {
	for _, v := range append(append([]string{s.ReadyURL, s.ReadyCmd, s.HealthURL, s.HealthCmd}, s.Command...), s.Env...) {
		if strings.Contains(v, "{port}") {
			return true
		}
	}
	return false
}

// withPort gives the spec its --port, also in place of {port} in the
// readiness and health URL and command and in the environment's values (the monitor
// puts it in the command's arguments).
func (s Spec) withPort(port int) Spec {
	p := strconv.Itoa(port)
	s.Port = port
	s.ReadyURL = strings.ReplaceAll(s.ReadyURL, "{port}", p)
	s.ReadyCmd = strings.ReplaceAll(s.ReadyCmd, "{port}", p)
	s.HealthURL = strings.ReplaceAll(s.HealthURL, "{port}", p)
	s.HealthCmd = strings.ReplaceAll(s.HealthCmd, "{port}", p)
	env := make([]string, len(s.Env))
	for i, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[i] = k + "=" + strings.ReplaceAll(v, "{port}", p)
	}
	s.Env = env
	return s
}

// releaseOnStarted passes reports on, and calls release once the monitor
// has reported anything: by then the spec, with its port, is in its state.
func releaseOnStarted(in <-chan Report, release func()) <-chan Report {
	out := make(chan Report, 8)
	go func() {
		defer close(out)
		defer release()
		for r := range in {
			release()
			out <- r
		}
	}()
	return out
}

// claim picks the service's name, refusing a name a live service has; the
// directory is made once everything else is checked. A name derived from
// the command gets the first free suffix from the from-th on (1: none),
// and n is the suffix it got.
func claim(home, scope, name string, spec Spec, from int) (d Dir, n int, err error) {
	if err := ensureHome(home); err != nil {
		return Dir{}, 0, err
	}
	prefix := ""
	if scope != "" {
		prefix = scope + "/"
	}
	if name == "" {
		d, n = uniqueName(home, prefix+defaultName(spec.Command, spec.Cwd), from)
		return d, n, nil
	}
	if err := ValidPlainName(name); err != nil {
		return Dir{}, 0, err
	}
	d = Dir{Home: home, Name: prefix + name}
	return d, 1, taken(d)
}

// taken is a *TakenError when a live service has d's name: its monitor
// holds the lock, or its monitor is gone but its process still runs. The
// listing says both; a state that cannot be read is taken only while a
// monitor holds the lock.
func taken(d Dir) error {
	l, err := Look(d)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil && Supervised(d), err == nil && l.Supervised:
		return &TakenError{Name: d.Name}
	case err == nil && l.Status.Live():
		return &TakenError{Name: d.Name, PID: l.State.PID}
	}
	return nil
}

// readReports decodes the monitor's reports until the pipe closes.
func readReports(f *os.File) <-chan Report {
	reports := make(chan Report, 8)
	go func() {
		defer close(reports)
		dec := json.NewDecoder(bufio.NewReader(f))
		for {
			var r Report
			if dec.Decode(&r) != nil {
				return
			}
			reports <- r
		}
	}()
	return reports
}

// startWait is svc start waiting for the first true thing.
type startWait struct {
	d           Dir
	settle      time.Duration
	monitorGone <-chan struct{}
	res         *StartResult
	begin       time.Time
	onStarted   func(pid int)
}

func (w *startWait) wait(ctx context.Context, reports <-chan Report) (*StartResult, error) {
	// The settle window only starts once the monitor holds the lock and has
	// started the command: under load, a monitor can take longer than the
	// window just to come up, and silence from it proves nothing yet.
	var settle <-chan time.Time
	upTimer := time.NewTimer(30 * time.Second)
	defer upTimer.Stop()
	done := ctx.Done()
	for {
		select {
		case <-done:
			if w.res.PID != 0 {
				return w.withState(), ctx.Err()
			}
			done = nil // the "started" report will end the wait
		case r, ok := <-reports:
			if !ok {
				if w.res.PID == 0 {
					return nil, fmt.Errorf("the monitor of %s ended before starting it (see %s/monitor.err)", w.d.Name, w.d.Path())
				}
				return w.withState(), nil
			}
			if r.Event == EvStarted {
				w.res.PID = r.PID
				if w.onStarted != nil {
					w.onStarted(r.PID)
				}
				if ctx.Err() != nil {
					return w.withState(), ctx.Err()
				}
				t := time.NewTimer(w.settle)
				defer t.Stop()
				settle = t.C
				continue
			}
			if res, err := w.report(r); res != nil || err != nil {
				return res, err
			}
		case <-settle:
			return w.withState(), nil
		case <-upTimer.C:
			if w.res.PID == 0 {
				return nil, fmt.Errorf("the monitor of %s did not start the command within 30s (see %s/monitor.err)", w.d.Name, w.d.Path())
			}
		}
	}
}

// report takes one report other than "started"; a result ends the wait.
func (w *startWait) report(r Report) (*StartResult, error) {
	res := w.res
	switch r.Event {
	case EvTaken:
		w.waitMonitor() // it exits at once: gone before the name is tried again
		return nil, &TakenError{Name: w.d.Name}
	case EvFailed:
		res.Status, res.Error = Failed, r.Error
		res.AfterMs = ms(time.Since(w.begin))
		w.waitMonitor() // the monitor is exiting: let it go first
		return res, nil
	case EvReady:
		res.Status, res.URL, res.Port, res.ReadyBy, res.AfterMs, res.Restarts = Ready, r.URL, r.Port, r.By, r.AfterMs, r.Restarts
		res.Ports, res.Warning, res.Followed = r.Ports, r.Warning, r.Followed
		if r.PID != 0 {
			res.PID = r.PID
		}
		return res, nil
	case EvRunning:
		res.Status = Running
		return w.withState(), nil
	case EvExited:
		res.Status, res.ExitCode, res.Signal, res.Tail, res.AfterMs = Exited, r.ExitCode, r.Signal, r.Tail, r.AfterMs
		// The monitor exits right after this report; once start returns,
		// every other command must see it gone.
		w.waitMonitor()
		if s, err := ReadState(w.d); err == nil {
			res.StopCause, res.StopNote = s.StopCause, s.StopNote
		}
		return res, nil
	}
	return nil, nil
}

func (w *startWait) waitMonitor() {
	select {
	case <-w.monitorGone:
	case <-time.After(2 * time.Second):
	}
}

func (w *startWait) withState() *StartResult {
	res := w.res
	res.AfterMs = ms(time.Since(w.begin))
	if s, err := ReadState(w.d); err == nil {
		res.PortPreoccupied, res.PortHolder, res.Restarts = s.PortPreoccupied, s.PortHolder, s.Restarts
		if s.Status.Live() {
			res.Followed = s.Followed
		}
		if s.PID != 0 {
			res.PID = s.PID
		} else if at := s.RestartDue(); at != nil {
			res.PID, res.RestartAt = 0, at
		}
		if n := len(s.Launches); n > 0 && s.Restarts > 0 && res.Status != Ready {
			// Restarted and not ready: how the last run ended, and the
			// log's last lines, say why.
			res.LastRun = &s.Launches[n-1]
			res.Tail = EndTail(w.d, s)
		}
		if s.ServerPID != 0 && s.Status.Live() && proc.Alive(proc.Info{PID: s.ServerPID, Start: s.ServerStart}) {
			res.PID = s.ServerPID
		}
		if res.Port == 0 {
			res.Port = s.Port
		}
	}
	return res
}

func ms(d time.Duration) float64 { return proc.Ms(d) }

// uniqueName returns base, or base-2, base-3 … from the from-th on: the
// first no live service has, and its suffix.
func uniqueName(home, base string, from int) (Dir, int) {
	for i := max(from, 1); ; i++ {
		name := base
		if i > 1 {
			name = base + "-" + strconv.Itoa(i)
		}
		if d := (Dir{Home: home, Name: name}); taken(d) == nil {
			return d, i
		}
	}
}

// RestartError is a service Restart cannot start again: its recorded
// spec cannot be read.
type RestartError struct {
	Name string
	Err  error
}

func (e *RestartError) Error() string { return fmt.Sprintf("cannot restart %s: %v", e.Name, e.Err) }
func (e *RestartError) Unwrap() error { return e.Err }

// Restart stops a service and starts it again with the spec it was
// started with (less UntilExit: the process it was tied to is not ours
// to pin again).
func Restart(ctx context.Context, d Dir) (*StartResult, error) {
	return RestartWith(ctx, d, "")
}

// RestartWith is Restart with a stop signal of its own for the service
// started again ("" keeps the recorded one). A signal that cannot be is
// refused before anything is stopped.
func RestartWith(ctx context.Context, d Dir, stopSignal string) (*StartResult, error) {
	s, err := ReadState(d)
	if err != nil {
		return nil, &RestartError{d.Name, err}
	}
	if stopSignal != "" {
		s.Spec.StopSignal = stopSignal
	}
	s.Spec = s.Spec.recorded()
	// Checked before anything stops: a spec the restart could not start
	// again leaves the service running as it is.
	if err := s.Spec.Check(); err != nil {
		return nil, err
	}
	defer holdRestart(d)() // a Follow follows the new run
	if _, err := Stop(d, 0); err != nil {
		return nil, err
	}
	s.Spec.UntilExit = 0
	o := StartOptions{Home: d.Home, Name: d.Name, Spec: s.Spec}
	if scope, name, ok := strings.Cut(d.Name, "/"); ok {
		o.Scope, o.Name = scope, name
	}
	return Start(ctx, o)
}

// recorded is a spec as an earlier svc recorded it, made one this svc
// starts: what it took and did nothing with is left out (a debounce or
// excluded files without a watch; a probe's timing without a probe), and
// a probe's timeout is cut to the time between probes.
func (s Spec) recorded() Spec {
	if len(s.Watch) == 0 {
		s.Debounce, s.WatchExclude = 0, nil
	}
	if !s.Probes() {
		s.HealthEvery, s.HealthTimeout, s.HealthFailures = 0, 0, 0
	} else if every := cmp.Or(s.HealthEvery, DefaultHealthEvery); s.HealthTimeout > every {
		s.HealthTimeout = every
	}
	return s
}

// CheckReadyPort is a *PortError when another process already listens on
// the ready port: it could never show the service ready.
func CheckReadyPort(port int) error {
	if port <= 0 {
		return nil
	}
	if holder := ready.PortHolder(port); holder != "" {
		return &PortError{Field: "readyPort", Port: port, Holder: holder}
	}
	return nil
}
