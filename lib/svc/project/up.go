package project

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/dotenv"
)

// What svc up did with a service.
const (
	ActStarted   = "started"
	ActRestarted = "restarted" // running with another definition: stopped, then started
	ActUnchanged = "unchanged" // running (or, a one-shot, succeeded) with the same definition
	ActSkipped   = "skipped"   // a dependency did not meet its condition
	ActFailed    = "failed"    // it could not be started at all
)

// Result is what svc up says of one service, once it is true.
type Result struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	// Up: a service is live; a one-shot exited 0.
	Up bool `json:"up"`
	// Reason says why it was skipped, failed or restarted.
	Reason string `json:"reason,omitempty"`
	// Start is what its start (or, unchanged, its state) found.
	Start *svc.StartResult `json:"start,omitempty"`
	// Worker: it runs without listening — a watcher, or a service that
	// svc up need not wait for that did not listen within WorkerSettle —
	// so svc up did not wait for it to be ready. It is still watched: it
	// is ready once it listens.
	Worker bool `json:"worker,omitempty"`
	// Watcher: a worker that is a watcher by its command (svc.Classify).
	Watcher bool `json:"watcher,omitempty"`
}

// WorkerSettle is how long svc up gives a service it need not wait for
// (no port or ready_* key, not a Procfile's web, not a server by its
// command, and nothing waits for it to be ready) to start listening,
// before it takes it for a worker and goes on.
const WorkerSettle = svc.DefaultSettle

// Up is one run of svc up over a checked file.
type Up struct {
	Home    string
	Project string // the project's name under Home
	File    *File
	// ReadyTimeout is the ready timeout of services whose file gives none.
	ReadyTimeout time.Duration
	// Report is called once per service, as its result becomes true; calls
	// never overlap.
	Report func(Result)
	// Note is called for what is true of the project but of no one
	// service (one that runs but is no longer in the file); calls never
	// overlap with Report's.
	Note func(string)

	mu sync.Mutex
	// block is the first port of the worktree's port_block, 0 for none.
	block int
}

// node is one service in the walk.
type node struct {
	def     *Def
	dir     svc.Dir
	env     []string      // env_file lines then env, read before anything starts
	started chan struct{} // closed once its command runs, or when settled
	settled chan struct{} // closed once its result is known
	res     Result
	final   *svc.StartResult // how it stood when settled
	// awaited: svc up waits for it to be ready, up to its ready timeout,
	// not only WorkerSettle.
	awaited bool
	// port is the port it is given: the file's, or with port_block, a
	// port of the block for "auto".
	port string
	// reported: its result line is out (under Up.mu).
	reported bool
}

// Plan is one line of --dry-run: what svc up would do with a service.
type Plan struct {
	Name      string   `json:"name"`
	Level     int      `json:"level"`
	Action    string   `json:"action"`
	Reason    string   `json:"reason,omitempty"`
	DependsOn []string `json:"dependsOn,omitempty"`
	// From is the file that defines it, when not svc.toml or a Procfile.
	From string `json:"from,omitempty"`
}

// CheckError is what Run and Plan find wrong before anything starts: in
// the file, or on disk for a service of it.
type CheckError struct{ Err error }

func (e *CheckError) Error() string { return e.Err.Error() }
func (e *CheckError) Unwrap() error { return e.Err }

// prepare checks what can be checked before anything starts, for the
// named services and what they need: env files, working directories.
func (u *Up) prepare(names []string) ([]*node, error) {
	defs, err := u.File.Closure(names)
	if err != nil {
		return nil, &CheckError{err}
	}
	ports, err := u.blockPorts()
	if err != nil {
		return nil, &CheckError{err}
	}
	nodes := make([]*node, len(defs))
	for i, d := range defs {
		n := &node{def: d, dir: svc.Dir{Home: u.Home, Name: u.Project + "/" + d.Name},
			started: make(chan struct{}), settled: make(chan struct{}), port: d.Port}
		if p, ok := ports[d.Name]; ok {
			n.port = p
		}
		for i, ef := range d.EnvFile {
			kvs, err := dotenv.Read(ef)
			if err != nil {
				line := d.at("env_file")
				if l, ok := d.lines["env_file["+strconv.Itoa(i)+"]"]; ok {
					line = l // the element of an array of them
				}
				return nil, &CheckError{fmt.Errorf("%s:%d: %s: env_file %v", u.File.Path, line, d.Name, err)}
			}
			n.env = append(n.env, kvs...)
		}
		n.env = append(n.env, d.Env...)
		if st, err := os.Stat(d.Cwd); err != nil || !st.IsDir() {
			return nil, &CheckError{fmt.Errorf("%s:%d: %s: cwd %s is not a directory", u.File.Path, d.at("cwd"), d.Name, d.Cwd)}
		}
		nodes[i] = n
	}
	for _, n := range nodes {
		n.awaited = awaited(n.def, defsOf(nodes))
	}
	return nodes, nil
}

// blockPorts reserves the worktree's port_block and gives its ports to
// the services whose port is "auto", in the order of the file (of every
// service, so that a subset gets the same ones).
func (u *Up) blockPorts() (map[string]string, error) {
	f := u.File
	if f.PortBlock == 0 {
		return nil, nil
	}
	wt, err := svc.ReservePorts(u.Home, f.Dir, f.PortBlock)
	if err != nil {
		return nil, err
	}
	u.block = wt.PortBase
	ports := map[string]string{}
	// The ports the file names itself ({port+K}) are not given again.
	taken := f.blockRefs()
	for _, d := range f.Services {
		if d.PortBase {
			ports[d.Name] = strconv.Itoa(wt.PortBase)
			taken[0] = true
		}
	}
	next := 0
	for _, d := range f.Services {
		if d.Port != svc.PortAuto || d.PortBase {
			continue
		}
		for next < f.PortBlock && taken[next] {
			next++
		}
		if next == f.PortBlock {
			return nil, fmt.Errorf("%s: port_block = %d, but more services than that have port = \"auto\" besides the {port+K} it names", f.Path, f.PortBlock)
		}
		ports[d.Name] = strconv.Itoa(wt.PortBase + next)
		taken[next] = true
	}
	return ports, nil
}

// awaited tells whether svc up waits for a service to be ready: the file
// says it listens, its command is a server's, or a service of this svc up
// waits for it to be ready. Any other is a worker once it has run
// WorkerSettle without listening.
func awaited(d *Def, defs []*Def) bool {
	if d.Serves || looksServer(d.Command) {
		return true
	}
	for _, o := range defs {
		for _, need := range o.Needs {
			if need.Name == d.Name && need.Cond == Ready {
				return true
			}
		}
	}
	return false
}

// Plan is what Run would do, without doing it.
func (u *Up) Plan(names []string) ([]Plan, error) {
	nodes, err := u.prepare(names)
	if err != nil {
		return nil, err
	}
	var out []Plan
	for lvl, defs := range Levels(defsOf(nodes), NeedNames) {
		for _, d := range defs {
			n := nodeOf(nodes, d.Name)
			p := Plan{Name: n.dir.Name, Level: lvl, Action: ActStarted, DependsOn: NeedNames(d), From: d.From}
			if l, err := svc.Look(n.dir); err == nil {
				spec, err := u.spec(n, nodes, true)
				if err == nil {
					p.Action, p.Reason = decide(l, spec)
				}
			}
			if p.Action == ActUnchanged && d.Oneshot {
				for _, need := range d.Needs {
					if a := nodeOf(nodes, need.Name).res.Action; a == ActStarted || a == ActRestarted {
						p.Action, p.Reason = ActStarted, nodeOf(nodes, need.Name).dir.Name+" is started again"
					}
				}
			}
			if p.Action == ActUnchanged && d.Release {
				if why := u.releaseDue(n, nodes); why != "" {
					p.Action, p.Reason = ActStarted, why
				}
			}
			n.res.Action = p.Action
			out = append(out, p)
		}
	}
	return out, nil
}

// Run starts the named services (none: all) and what they need, each
// once what it needs meets its condition, and reports each. It returns
// whether every one is up.
func (u *Up) Run(ctx context.Context, names []string) (bool, error) {
	nodes, err := u.prepare(names)
	if err != nil {
		return false, err
	}
	u.noteStrays(nodes)
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u.walk(ctx, n, nodes)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	for _, n := range nodes {
		if !n.res.Up {
			return false, nil
		}
	}
	return true, nil
}

// noteStrays says which live services of the project the file no longer
// defines: svc up leaves them alone.
func (u *Up) noteStrays(nodes []*node) {
	_, names, _ := svc.ProjectServices(u.Home, u.File.Dir)
	for _, name := range names {
		_, short, _ := strings.Cut(name, "/")
		if u.File.Lookup(short) != nil {
			continue
		}
		if l, err := svc.Look(svc.Dir{Home: u.Home, Name: name}); err == nil && l.Status.Live() {
			u.note(fmt.Sprintf("%s runs but %s no longer defines it: svc down %s stops it", name, u.File.Path, short))
		}
	}
}

func (u *Up) note(s string) {
	if u.Note == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.Note(s)
}

func (u *Up) report(n *node) {
	u.mu.Lock()
	defer u.mu.Unlock()
	n.reported = true
	if u.Report != nil {
		u.Report(n.res)
	}
}

// walk is one service's part: wait for what it needs, then start it (or
// find it unchanged), then wait for its own condition.
func (u *Up) walk(ctx context.Context, n *node, nodes []*node) {
	defer close(n.settled)
	defer func() {
		select {
		case <-n.started:
		default:
			close(n.started)
		}
	}()
	n.res = Result{Name: n.dir.Name}
	if why := u.waitNeeds(ctx, n, nodes); why != "" {
		if l, err := svc.Look(n.dir); err == nil && l.Status.Live() {
			why += "; the one running from before is left as it is"
		}
		n.res.Action, n.res.Reason = ActSkipped, why
		if ctx.Err() == nil {
			u.report(n)
		}
		return
	}
	n.final = u.bringUp(ctx, n, nodes)
	if ctx.Err() != nil {
		return
	}
	n.res.Start = n.final
	n.res.Up = n.final != nil && isUp(n.def, n.final)
	n.res.Worker = n.final != nil && !n.def.Oneshot && !n.awaited &&
		(n.final.Status == svc.Running || n.final.Status == svc.Starting)
	n.res.Watcher = n.res.Worker && cmdline.RunsAtOnce(cmdline.ShellLine(n.def.Command))
	u.report(n)
}

// waitNeeds waits for each dependency's condition; it returns why one was
// not met, or "".
func (u *Up) waitNeeds(ctx context.Context, n *node, nodes []*node) string {
	for _, need := range n.def.Needs {
		dep := nodeOf(nodes, need.Name)
		ch := dep.settled
		if need.Cond == Started {
			ch = dep.started
		}
		select {
		case <-ctx.Done():
			return "interrupted"
		case <-ch:
		case <-time.After(waitNoteAfter):
			// A database that takes its time: say what the wait is for,
			// once, rather than nothing until it ends.
			u.noteWait(n, dep, need.Cond, ch)
			select {
			case <-ctx.Done():
				return "interrupted"
			case <-ch:
			}
		}
		if why := unmet(dep, need.Cond); why != "" {
			return why
		}
	}
	return ""
}

// unmet says why dep does not meet cond, or "" when it does.
// waitNoteAfter is how long a service waits for what it needs before
// svc up says so.
const waitNoteAfter = 2 * time.Second

// noteWait says that n waits for dep's condition, unless the wait is
// over after all: dep reported (its line is out) or ch closed.
func (u *Up) noteWait(n, dep *node, cond string, ch <-chan struct{}) {
	if u.Note == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	select {
	case <-ch:
		return
	default:
	}
	if dep.reported {
		return
	}
	u.Note(fmt.Sprintf("%s waits for %s %s%s", n.dir.Name, dep.dir.Name, waitWord(cond), u.waitBound(dep, cond)))
}

// waitWord is what a service waits for of one it needs under cond.
func waitWord(cond string) string {
	switch cond {
	case Started:
		return "to start"
	case Succeeded:
		return "to exit 0"
	case Completed:
		return "to end"
	}
	return "to be ready"
}

// waitBound says how long a wait for dep's condition can last: a
// server's ready timeout (and the 10 s svc up adds to it, from its
// start); a one-shot's, until it ends.
func (u *Up) waitBound(dep *node, cond string) string {
	if cond != Ready || dep.def.Oneshot {
		return ""
	}
	return fmt.Sprintf(" (up to %s from its start)", l0(dep.def.ReadyTimeout, u.ReadyTimeout)+10*time.Second)
}

func unmet(dep *node, cond string) string {
	name := dep.dir.Name
	r := dep.final
	if cond == Started {
		if dep.res.Action == ActSkipped || dep.res.Action == ActFailed {
			return fmt.Sprintf("%s was not started (it needs it started)", name)
		}
		return ""
	}
	if dep.res.Action == ActSkipped || dep.res.Action == ActFailed || r == nil {
		return fmt.Sprintf("%s was not started (it needs it %s)", name, condWord(cond))
	}
	ok := false
	switch cond {
	case Ready:
		ok = r.Status == svc.Ready
	case Succeeded:
		ok = r.Status == svc.Exited && r.ExitCode != nil && *r.ExitCode == 0
	case Completed:
		ok = r.Status == svc.Exited
	}
	if ok {
		return ""
	}
	if cond == Ready && r.Status == svc.Exited && r.ExitCode != nil && *r.ExitCode == 0 && !dep.def.Oneshot {
		// A migration run to completion, declared as a server.
		return fmt.Sprintf("%s %s (it needs it ready; a step that runs once to completion is oneshot = true)", name, Outcome(r))
	}
	return fmt.Sprintf("%s %s (it needs it %s)", name, Outcome(r), condWord(cond))
}

func condWord(cond string) string {
	switch cond {
	case Succeeded:
		return "to exit 0"
	case Completed:
		return "to have exited"
	}
	return cond
}

// Outcome is a short account of a result, for a skip's reason.
func Outcome(r *svc.StartResult) string {
	switch {
	case r.Status == svc.Exited && r.Signal != "":
		return "was killed by " + r.Signal
	case r.Status == svc.Exited && r.ExitCode != nil:
		return fmt.Sprintf("exited with code %d", *r.ExitCode)
	case r.Status == svc.Failed:
		return "failed: " + r.Error
	case r.Status == svc.Running:
		return "runs but was not found ready"
	}
	return "is " + string(r.Status)
}

// isUp is a service's own condition: live for a service, exit 0 for a
// one-shot.
func isUp(d *Def, r *svc.StartResult) bool {
	if d.Oneshot {
		return r.Status == svc.Exited && r.ExitCode != nil && *r.ExitCode == 0
	}
	return r.Status.Live()
}

// bringUp starts the service, restarts it when its definition changed, or
// leaves it as it is, and waits until its result is known.
func (u *Up) bringUp(ctx context.Context, n *node, nodes []*node) *svc.StartResult {
	spec, err := u.spec(n, nodes, false)
	if err != nil {
		n.res.Action, n.res.Reason = ActFailed, err.Error()
		return nil
	}
	n.res.Action = ActStarted
	if l, err := svc.Look(n.dir); err == nil {
		n.res.Action, n.res.Reason = decide(l, spec)
		if dep := startedNeed(n, nodes); n.res.Action == ActUnchanged && n.def.Oneshot && dep != "" {
			// A migration that ran against the old database runs again
			// against the new one.
			n.res.Action, n.res.Reason = ActStarted, dep+" was started again"
		}
		if n.res.Action == ActUnchanged && n.def.Release {
			if why := u.releaseDue(n, nodes); why != "" {
				n.res.Action, n.res.Reason = ActStarted, why
			}
		}
		switch n.res.Action {
		case ActUnchanged:
			close(n.started)
			return u.settle(ctx, n, fromListing(l), time.Now())
		case ActRestarted:
			if _, err := svc.Stop(n.dir, 0); err != nil {
				n.res.Action, n.res.Reason = ActFailed, "stopping the old one: "+err.Error()
				return nil
			}
		}
	}
	return u.start(ctx, n, spec)
}

// releaseDue is why a Procfile's release that succeeded with the same
// command runs again: svc up is to start (or restart) a service that
// needs it, as Heroku runs release before each deploy's new processes.
// "" when every service that needs it runs unchanged.
func (u *Up) releaseDue(n *node, nodes []*node) string {
	for _, o := range nodes {
		if !slices.ContainsFunc(o.def.Needs, func(need Need) bool { return need.Name == n.def.Name }) {
			continue
		}
		l, err := svc.Look(o.dir)
		if err != nil {
			return o.dir.Name + " is to be started"
		}
		spec, err := u.spec(o, nodes, true)
		if err != nil {
			return o.dir.Name + " is to be started"
		}
		if a, _ := decide(l, spec); a != ActUnchanged {
			return o.dir.Name + " is to be started"
		}
	}
	return ""
}

// startedNeed is a dependency that this svc up started or restarted, or
// "".
func startedNeed(n *node, nodes []*node) string {
	for _, need := range n.def.Needs {
		if dep := nodeOf(nodes, need.Name); dep.res.Action == ActStarted || dep.res.Action == ActRestarted {
			return dep.dir.Name
		}
	}
	return ""
}

// decide is what to do with a service that exists: leave it, restart it,
// or start it.
func decide(l *svc.Listing, spec svc.Spec) (action, reason string) {
	same := l.Spec.Project != nil && (l.Spec.Project.Digest == spec.Project.Digest || l.Spec.Project.Digest == spec.Project.EarlierDigest)
	switch {
	case l.Status.Live() && same:
		return ActUnchanged, ""
	case l.Status.Live():
		return ActRestarted, "its definition changed (" + strings.Join(changed(l.Spec, spec), ", ") + ")"
	case same && spec.Project.Oneshot && l.Status == svc.Exited && l.ExitCode != nil && *l.ExitCode == 0:
		return ActUnchanged, ""
	}
	return ActStarted, ""
}

// changed names the parts of a definition that differ: never values,
// which may be secrets.
func changed(old, new svc.Spec) []string {
	new = new.WithDefaults().Resolved(old.Worktree, old.Port)
	var out []string
	add := func(diff bool, what string) {
		if diff {
			out = append(out, what)
		}
	}
	add(!slices.Equal(old.Command, new.Command), "command")
	add(old.Cwd != new.Cwd, "cwd")
	add(!slices.Equal(old.Env, new.Env), "env")
	add(old.ReadyURL != new.ReadyURL || old.ReadyPort != new.ReadyPort || old.ReadyRegex != new.ReadyRegex ||
		old.ReadyCmd != new.ReadyCmd || old.ReadyTimeout != new.ReadyTimeout, "readiness")
	add(old.Restart != new.Restart || old.MaxRestarts != new.MaxRestarts, "restart")
	add(old.StopGrace != new.StopGrace, "stop_grace")
	add(old.StopSignal != new.StopSignal && old.StopSignal != "", "stop_signal")
	add(old.NoFollow != new.NoFollow, "follow")
	add(old.HealthSpec != new.HealthSpec, "health")
	add(!slices.Equal(old.Watch, new.Watch) || !slices.Equal(old.WatchExclude, new.WatchExclude) ||
		old.Debounce != new.Debounce || old.Cascade != new.Cascade, "watch")
	if len(out) == 0 {
		out = append(out, "port, pty or oneshot, or it was not started by svc up")
	}
	return out
}

// start starts the service and waits for its own condition.
func (u *Up) start(ctx context.Context, n *node, spec svc.Spec) *svc.StartResult {
	if err := svc.CheckReadyPort(spec.ReadyPort); err != nil {
		n.res.Action, n.res.Reason = ActFailed, err.Error()
		return nil
	}
	if n.port == "" && spec.MentionsPort() {
		u.note(fmt.Sprintf("%s has {port} in its definition but no port: it is passed as written (port = \"auto\" gives it one)", n.def.Name))
	}
	var once sync.Once
	begin := time.Now()
	settle := spec.ReadyTimeout + 10*time.Second
	if !n.awaited && !n.def.Oneshot {
		settle = WorkerSettle
	}
	res, err := svc.Start(ctx, svc.StartOptions{Home: u.Home, Scope: u.Project, Name: n.def.Name, Spec: spec,
		Port: n.port, Settle: settle,
		OnStarted: func(int) { once.Do(func() { close(n.started) }) }})
	if err != nil {
		if res == nil || ctx.Err() == nil {
			n.res.Action, n.res.Reason = ActFailed, err.Error()
			return nil
		}
		return res
	}
	return u.settle(ctx, n, res, begin)
}

// settle waits for what is still to come: a service starting to be ready
// or not, a one-shot to end. A service's wait is its ready timeout (and
// 10 s) from begin, when its start began, all told: the start's own wait
// is part of it.
func (u *Up) settle(ctx context.Context, n *node, r *svc.StartResult, begin time.Time) *svc.StartResult {
	switch {
	case n.def.Oneshot && r.Status.Live():
		l, err := svc.WaitEnded(ctx, n.dir)
		if err != nil || l == nil {
			return r
		}
		end := fromListing(l)
		end.Tail = svc.EndTail(n.dir, &l.State)
		end.AfterMs = proc.Ms(time.Since(l.StartedAt))
		return end
	case r.Status == svc.Starting && n.awaited:
		left := time.Until(begin.Add(l0(n.def.ReadyTimeout, u.ReadyTimeout) + 10*time.Second))
		if left > 0 {
			if l, _ := svc.WaitReady(ctx, n.dir, left); l != nil {
				r = fromListing(l)
			}
		}
		if r.Status == svc.Starting {
			r.AfterMs = proc.Ms(time.Since(begin)) // how long it was waited for
		}
	}
	return r
}

// readyTimeout is the ready timeout of a service's spec: the file's,
// else svc up's; for a worker the file gives none, WorkerSettle, so that
// its monitor calls it running when svc up does (a worker is still
// watched, and ready once it listens).
func (u *Up) readyTimeout(n *node) time.Duration {
	if !n.awaited && !n.def.Oneshot && n.def.ReadyTimeout == 0 {
		return WorkerSettle
	}
	return l0(n.def.ReadyTimeout, u.ReadyTimeout)
}

func l0(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	if def > 0 {
		return def
	}
	return svc.DefaultReadyTimeout
}

// fromListing is a service's recorded state in the shape of a start's
// result.
func fromListing(l *svc.Listing) *svc.StartResult {
	r := &svc.StartResult{Name: l.Name, Status: l.Status, PID: l.PID, Endpoint: l.Endpoint,
		ReadyBy: l.ReadyBy, Warning: l.Warning, Ended: l.Ended, Error: l.Error,
		PortPreoccupied: l.PortPreoccupied, PortHolder: l.PortHolder, Restarts: l.Restarts}
	r.RestartAt = l.RestartDue()
	if l.ReadyAt != nil {
		r.AfterMs = proc.Ms(l.ReadyAt.Sub(l.StartedAt))
	}
	if r.Port == 0 {
		r.Port = l.Spec.Port
	}
	return r
}

// spec is the service's spec: its definition with the ports of what it
// needs in place of {port:NAME}, tagged with the project and a digest of
// all that. dry: a dependency's port is the one it has now, if any.
func (u *Up) spec(n *node, nodes []*node, dry bool) (svc.Spec, error) {
	d := n.def
	uses := strings.Join(slices.Concat(d.Command, n.env, []string{d.ReadyURL, d.ReadyCmd}), "\x00")
	ports := map[string]string{}
	for _, need := range d.Needs {
		if !strings.Contains(uses, "{port:"+need.Name+"}") {
			continue
		}
		dep := nodeOf(nodes, need.Name)
		if _, fixed := strconv.Atoi(dep.port); dry && fixed == nil && (dep.res.Action == ActStarted || dep.res.Action == ActRestarted) {
			// Planned to start on the port its definition gives, which
			// may not be the one it has now.
			ports[need.Name] = dep.port
			continue
		}
		p, err := svc.Port(dep.dir)
		if err != nil && !dry {
			return svc.Spec{}, fmt.Errorf("%s has no port for {port:%s}", need.Name, need.Name)
		}
		ports[need.Name] = strconv.Itoa(p)
	}
	sub := func(s string) string {
		s = blockRef.ReplaceAllStringFunc(s, func(m string) string {
			k, _ := strconv.Atoi(blockRef.FindStringSubmatch(m)[1])
			return strconv.Itoa(u.block + k)
		})
		return portRef.ReplaceAllStringFunc(s, func(m string) string { return ports[portRef.FindStringSubmatch(m)[1]] })
	}
	subAll := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = sub(s)
		}
		return out
	}
	spec := svc.Spec{Command: subAll(d.Command), Cwd: d.Cwd, Env: subAll(n.env), ReadyURL: sub(d.ReadyURL), ReadyPort: d.ReadyPort,
		ReadyRegex: d.ReadyRegex, ReadyCmd: sub(d.ReadyCmd), ReadyTimeout: u.readyTimeout(n), StopGrace: d.StopGrace,
		Restart: d.Restart, MaxRestarts: d.MaxRestarts, StopSignal: d.StopSignal,
		NoFollow:   d.NoFollow || d.Oneshot, // a one-shot runs to completion: what it leaves is stopped
		HealthSpec: d.Health, WatchSpec: d.Watch}
	spec.HealthURL, spec.HealthCmd = sub(spec.HealthURL), sub(spec.HealthCmd)
	if d.PTY {
		spec.PTY = &svc.TermSize{Rows: 24, Cols: 80}
		spec.StopKeys, _ = svc.UnescapeKeys(d.StopKeys) // checked at load
	}
	// The digest leaves out the ready timeout svc up derives: it follows
	// whether another service waits for this one to be ready, and a
	// change of that one's depends_on is no change of this one.
	own := spec
	own.ReadyTimeout = d.ReadyTimeout
	spec.Project = &svc.ProjectTag{Dir: u.File.Dir, DependsOn: NeedNames(d), Oneshot: d.Oneshot,
		Digest: digest(own, n.port, d.Oneshot), EarlierDigest: digest(spec, n.port, d.Oneshot)}
	return spec, nil
}

// digest is a hash of everything a service is started with, less what
// svc picks itself (an auto port) or the project's own bookkeeping.
func digest(spec svc.Spec, port string, oneshot bool) string {
	spec.Project = nil
	b, _ := json.Marshal(struct {
		Spec    svc.Spec
		Port    string
		Oneshot bool
	}{spec, port, oneshot})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func nodeOf(nodes []*node, name string) *node {
	for _, n := range nodes {
		if n.def.Name == name {
			return n
		}
	}
	return nil
}

func defsOf(nodes []*node) []*Def {
	out := make([]*Def, len(nodes))
	for i, n := range nodes {
		out[i] = n.def
	}
	return out
}
