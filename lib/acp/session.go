package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/protocol"
)

// session is one ACP session: a chat of the host.
type session struct {
	id, cwd string
	dirs    []string // additionalDirectories
	created time.Time

	mu        sync.Mutex
	mode      mode
	model     string         // "" for the backend's default
	effort    string         // "" for the backend's default
	seq       int64          // prompts read
	cancelled int64          // prompts read up to the last cancel are cancelled
	dropped   map[int64]bool // and these, cancelled one by one ($/cancel_request)
	run       *hostclient.Run
	runSeq    int64 // the prompt whose turn run is
	closed    bool
	// last is closed when the turn of the last prompt read has ended:
	// each prompt waits for the one read before it, so turns run in
	// input order.
	last    chan struct{}
	prompts sync.WaitGroup
	updated time.Time
	title   string // the first prompt's first line
	// commands is the available_commands_update last sent, as JSON.
	commands string
	// warm is closed once the session's process, started at
	// session/new, has started (nil: none was).
	warm chan struct{}
	// idle stops the session's process after Options.IdleStop without
	// a turn.
	idle *time.Timer
	// grants are the calls the person allowed for the session
	// (allow_always), by grantKey: kept here, not only in the backend's
	// process, so that a CLI started again (a mode change, the idle
	// stop) does not ask again.
	grants map[string]bool
	// cli is the backend's own session id as its last turn reported it,
	// and unsaved whether the record kept for session/load is behind
	// that turn; saving orders the record's writes.
	cli     string
	unsaved bool
	saving  sync.Mutex
}

// mode is a session mode: a level, and whether tool calls outside its
// grant are put to the client.
type mode struct {
	level int
	ask   bool
}

func (m mode) id() string {
	if m.ask {
		return fmt.Sprintf("level-%d-ask", m.level)
	}
	return fmt.Sprintf("level-%d", m.level)
}

var levelWords = map[int][2]string{
	1: {"Level 1: no tools", "No code tool at all (codex: no shell, its read-only sandbox); the agent answers from the prompt and its own knowledge."},
	2: {"Level 2: edit and run", "Read, search, edit and write files and run commands in the session's directory (codex: its workspace-write sandbox, network on)."},
	3: {"Level 3", "Today the same grant as level 2."},
}

func (m mode) words() (name, desc string) {
	w := levelWords[m.level]
	if !m.ask {
		return w[0], w[1]
	}
	if m.level == 1 {
		return "Level 1, ask: every tool asked", "Every code tool is offered, and each call is put to you first."
	}
	return w[0] + ", ask", w[1] + " Every call the level does not allow outright (commands; for codex, file changes too) is put to you first."
}

// modes are the modes a backend can be in: every level, and its ask
// variant where the backend can ask.
func (a *agent) modes() []mode {
	var ms []mode
	for level := 1; level <= 3; level++ {
		ms = append(ms, mode{level: level})
		if a.caps.asks {
			ms = append(ms, mode{level: level, ask: true})
		}
	}
	return ms
}

func (a *agent) defaultMode() mode { return mode{level: 2, ask: a.caps.asks} }

func (a *agent) modeByID(id string) (mode, bool) {
	for _, m := range a.modes() {
		if m.id() == id {
			return m, true
		}
	}
	return mode{}, false
}

// catalog is the backend's models, asked once.
func (a *agent) catalog() []protocol.ModelInfo {
	a.mu.Lock()
	if a.modelsOK {
		defer a.mu.Unlock()
		return a.models
	}
	a.mu.Unlock()
	ctx, cancel := a.callCtx()
	defer cancel()
	models, _, err := a.hc.ListModels(ctx, "all")
	if err != nil {
		models = nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.models, a.modelsOK = models, true
	return models
}

// state is the session's modes and config options as the client is told.
func (a *agent) state(s *session) (*modeState, []configOption) {
	s.mu.Lock()
	cur, model, effort := s.mode, s.model, s.effort
	s.mu.Unlock()
	ms := &modeState{CurrentModeID: cur.id()}
	opt := configOption{ID: "mode", Name: "Mode", Description: "The permission level the agent runs at, enforced by its grant.",
		Category: "mode", Type: "select", CurrentValue: cur.id()}
	for _, m := range a.modes() {
		name, desc := m.words()
		ms.AvailableModes = append(ms.AvailableModes, sessionMode{ID: m.id(), Name: name, Description: desc})
		opt.Options = append(opt.Options, selectOption{Value: m.id(), Name: name, Description: desc})
	}
	opts := []configOption{opt}
	if models := a.catalog(); len(models) > 0 {
		mo := configOption{ID: "model", Name: "Model", Category: "model", Type: "select", CurrentValue: "default",
			Options: []selectOption{{Value: "default", Name: "Default", Description: "The backend's default model."}}}
		for _, m := range models {
			mo.Options = append(mo.Options, selectOption{Value: m.ID, Name: m.Name})
			if m.ID == model {
				mo.CurrentValue = m.ID
			}
		}
		opts = append(opts, mo)
	}
	if len(a.caps.efforts) > 0 {
		eo := configOption{ID: "thought_level", Name: "Thinking", Category: "thought_level", Type: "select", CurrentValue: "default",
			Options: []selectOption{{Value: "default", Name: "Default", Description: "The backend's default reasoning effort."}}}
		for _, e := range a.caps.efforts {
			eo.Options = append(eo.Options, selectOption{Value: e, Name: e})
			if e == effort {
				eo.CurrentValue = e
			}
		}
		opts = append(opts, eo)
	}
	return ms, opts
}

func (a *agent) session(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// open finds a session for a request, or is the error saying there is none.
func (a *agent) open(id string) (*session, error) {
	if s := a.session(id); s != nil {
		return s, nil
	}
	return nil, &rpcError{Code: codeNotFound, Message: "no session " + id, Data: map[string]string{"sessionId": id}}
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (a *agent) newSession(params json.RawMessage) (any, error) {
	var p newSessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := checkCwd(p.Cwd); err != nil {
		return nil, err
	}
	if err := a.checkDirs(p.AdditionalDirectories); err != nil {
		return nil, err
	}
	s := &session{id: newID(), cwd: p.Cwd, dirs: p.AdditionalDirectories, created: time.Now(), mode: a.defaultMode()}
	s.updated = s.created
	if len(p.MCPServers) > 0 {
		if err := a.setServers(s, p.MCPServers); err != nil {
			return nil, err
		}
	}
	if err := a.setDirs(s); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
	a.warm(s)
	a.prestart()
	ms, opts := a.state(s)
	return newSessionResult{SessionID: s.id, Modes: ms, ConfigOptions: opts}, nil
}

// warm starts the session's backend process in the background, where the
// backend can, so that its first prompt finds it ready: an editor opens a
// session seconds before its first prompt. Never prompted, it is stopped
// after the idle time like any other.
func (a *agent) warm(s *session) {
	st, ok := a.backend.(starter)
	if !ok {
		return
	}
	s.mu.Lock()
	m, model, effort := s.mode, s.model, s.effort
	done := make(chan struct{})
	s.warm = done
	s.mu.Unlock()
	p := protocol.ChatRunParams{ChatID: s.id, Workspace: s.cwd, Level: m.level, Model: model, ReasoningEffort: effort,
		Permissions: protocol.PermissionsGrant, Questions: protocol.QuestionsAsk} // as runPrompt's turns
	if m.ask {
		p.Permissions = protocol.PermissionsAsk
	}
	a.work.Add(1)
	go func() {
		defer a.work.Done()
		defer close(done)
		ctx, cancel := a.callCtx()
		defer cancel()
		if err := st.StartChat(ctx, p); err != nil {
			return // the first prompt starts it, and says why it cannot
		}
		a.armIdle(s)
	}()
}

// armIdle sets the session's idle stop: after Options.IdleStop with no
// prompt read, its backend process is stopped (the session kept).
func (a *agent) armIdle(s *session) {
	is, ok := a.backend.(idleStopper)
	if !ok || a.opts.IdleStop <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.idle != nil {
		s.idle.Stop()
	}
	seq := s.seq
	s.idle = time.AfterFunc(a.opts.IdleStop, func() {
		s.mu.Lock()
		quiet := !s.closed && s.seq == seq && s.run == nil
		s.mu.Unlock()
		if !quiet || a.ctx.Err() != nil {
			return
		}
		ctx, cancel := a.callCtx()
		defer cancel()
		_, _ = is.StopIdle(ctx, s.id)
	})
}

// checkCwd refuses a new session's cwd that is not an absolute path to a
// directory: its turns could not run there, and the editor is told now
// rather than at the first prompt.
func checkCwd(cwd string) error {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return errorf(codeInvalidParams, "invalid params: cwd must be an absolute path, not %q", cwd)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return errorf(codeInvalidParams, "invalid params: cwd %s is not a directory", cwd)
	}
	return nil
}

// checkDirs refuses additional directories the backend cannot take, or
// that are not absolute paths.
func (a *agent) checkDirs(dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	if _, ok := a.backend.(dirTaker); !ok {
		return errorf(codeInvalidParams, "invalid params: the %s backend takes no additional directories (sessionCapabilities.additionalDirectories is absent)", a.caps.name)
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return errorf(codeInvalidParams, "invalid params: additionalDirectories must be absolute paths, not %q", d)
		}
	}
	return nil
}

// setDirs gives the session's chat its additional directories (claude:
// --add-dir), where it has any.
func (a *agent) setDirs(s *session) error {
	dt, ok := a.backend.(dirTaker)
	if !ok || len(s.dirs) == 0 {
		return nil
	}
	ctx, cancel := a.callCtx()
	defer cancel()
	if err := dt.SetDirectories(ctx, s.id, s.dirs); err != nil {
		return hostError(err)
	}
	return nil
}

// setServers gives the session's chat the client's MCP servers, as
// set_mcp_servers does, in the configuration claude takes.
func (a *agent) setServers(s *session, servers []mcpServer) error {
	if !a.caps.tools {
		a.opts.Warn(fmt.Sprintf("the %s backend takes no MCP servers; the session's %d go unused", a.caps.name, len(servers)))
		return nil
	}
	cfg := map[string]json.RawMessage{}
	for _, m := range servers {
		if m.Name == "" {
			return errorf(codeInvalidParams, "invalid params: an MCP server without a name")
		}
		var v map[string]any
		switch m.Type {
		case "", "stdio":
			if m.Command == "" {
				return errorf(codeInvalidParams, "invalid params: MCP server %q has no command", m.Name)
			}
			env := map[string]string{}
			for _, e := range m.Env {
				env[e.Name] = e.Value
			}
			args := m.Args
			if args == nil {
				args = []string{}
			}
			v = map[string]any{"type": "stdio", "command": m.Command, "args": args, "env": env}
		case "http", "sse":
			if m.URL == "" {
				return errorf(codeInvalidParams, "invalid params: MCP server %q has no url", m.Name)
			}
			headers := map[string]string{}
			for _, h := range m.Headers {
				headers[h.Name] = h.Value
			}
			v = map[string]any{"type": m.Type, "url": m.URL, "headers": headers}
		default:
			return errorf(codeInvalidParams, "invalid params: MCP server %q: transport %q is not stdio, http or sse", m.Name, m.Type)
		}
		b, _ := json.Marshal(v)
		cfg[m.Name] = b
	}
	ctx, cancel := a.callCtx()
	defer cancel()
	refresh, err := a.hc.SetMCPServers(ctx, s.id, cfg)
	if err != nil {
		return hostError(err)
	}
	if refresh != nil {
		for _, n := range slices.Sorted(maps.Keys(refresh.Errors)) {
			a.opts.Warn(fmt.Sprintf("MCP server %q: %s", n, refresh.Errors[n]))
		}
	}
	return nil
}

func (a *agent) setMode(params json.RawMessage) (any, error) {
	var p setModeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s, err := a.open(p.SessionID)
	if err != nil {
		return nil, err
	}
	m, ok := a.modeByID(p.ModeID)
	if !ok {
		return nil, errorf(codeInvalidParams, "invalid params: no mode %q (%s)", p.ModeID, a.modeIDs())
	}
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
	_, opts := a.state(s)
	a.update(s, configUpdate{SessionUpdate: "config_option_update", ConfigOptions: opts})
	return empty{}, nil
}

func (a *agent) modeIDs() string {
	var ids []string
	for _, m := range a.modes() {
		ids = append(ids, m.id())
	}
	return strings.Join(ids, ", ")
}

func (a *agent) setConfigOption(params json.RawMessage) (any, error) {
	var p setConfigParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s, err := a.open(p.SessionID)
	if err != nil {
		return nil, err
	}
	var value string
	if json.Unmarshal(p.Value, &value) != nil {
		return nil, errorf(codeInvalidParams, "invalid params: the value of %q is a value id (a string)", p.ConfigID)
	}
	switch p.ConfigID {
	case "mode":
		m, ok := a.modeByID(value)
		if !ok {
			return nil, errorf(codeInvalidParams, "invalid params: no mode %q (%s)", value, a.modeIDs())
		}
		s.mu.Lock()
		s.mode = m
		s.mu.Unlock()
		a.update(s, modeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: m.id()})
	case "model":
		known := value == "default"
		for _, m := range a.catalog() {
			known = known || m.ID == value
		}
		if !known {
			return nil, errorf(codeInvalidParams, "invalid params: no model %q", value)
		}
		if value == "default" {
			value = ""
		}
		s.mu.Lock()
		s.model = value
		s.mu.Unlock()
	case "thought_level":
		known := value == "default"
		for _, e := range a.caps.efforts {
			known = known || e == value
		}
		switch {
		case len(a.caps.efforts) == 0:
			return nil, errorf(codeInvalidParams, "invalid params: no thought level %q: %s has no thought levels", value, a.caps.name)
		case !known:
			return nil, errorf(codeInvalidParams, "invalid params: no thought level %q (default, %s)", value, strings.Join(a.caps.efforts, ", "))
		}
		if value == "default" {
			value = ""
		}
		s.mu.Lock()
		s.effort = value
		s.mu.Unlock()
	default:
		return nil, errorf(codeInvalidParams, "invalid params: no config option %q", p.ConfigID)
	}
	_, opts := a.state(s)
	return setConfigResult{ConfigOptions: opts}, nil
}

// listSessions lists this connection's open sessions and those kept for
// session/load, most recently used first.
func (a *agent) listSessions(params json.RawMessage) (any, error) {
	var p struct {
		Cwd *string `json:"cwd"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if pe, ok := a.backend.(peer); ok {
		return a.listAgentSessions(pe, params)
	}
	byID := map[string]sessionInfo{}
	for _, r := range a.store.all() {
		if r.Backend == a.caps.name {
			byID[r.SessionID] = sessionInfo{SessionID: r.SessionID, Cwd: r.Cwd, AdditionalDirectories: r.Dirs, Title: r.Title, UpdatedAt: r.UpdatedAt}
		}
	}
	a.mu.Lock()
	for _, s := range a.sessions {
		s.mu.Lock()
		byID[s.id] = sessionInfo{SessionID: s.id, Cwd: s.cwd, AdditionalDirectories: s.dirs, Title: s.title, UpdatedAt: s.updated.UTC().Format(time.RFC3339)}
		s.mu.Unlock()
	}
	a.mu.Unlock()
	res := listSessionsResult{Sessions: []sessionInfo{}}
	for _, info := range byID {
		if p.Cwd == nil || *p.Cwd == info.Cwd {
			res.Sessions = append(res.Sessions, info)
		}
	}
	sort.Slice(res.Sessions, func(i, j int) bool {
		x, y := res.Sessions[i], res.Sessions[j]
		if x.UpdatedAt != y.UpdatedAt {
			return x.UpdatedAt > y.UpdatedAt
		}
		return x.SessionID < y.SessionID
	})
	return res, nil
}

// cancel cancels every prompt of the session read so far: the turn
// running is interrupted (the host's ladder), and one waiting for it ends
// cancelled without running.
func (a *agent) cancel(s *session) {
	s.mu.Lock()
	seq := s.seq
	s.mu.Unlock()
	a.cancelUpTo(s, seq)
}

// cancelUpTo cancels the session's prompts up to the seq-th read: the
// turn running is interrupted, and those waiting end cancelled without
// running.
func (a *agent) cancelUpTo(s *session, seq int64) {
	s.mu.Lock()
	s.cancelled = max(s.cancelled, seq)
	r := s.run
	if s.runSeq > seq {
		r = nil
	}
	s.mu.Unlock()
	a.interrupt(s, r)
}

// cancelOne cancels the seq-th prompt read alone ($/cancel_request): its
// turn is interrupted if it runs, or it ends cancelled without running.
func (a *agent) cancelOne(s *session, seq int64) {
	s.mu.Lock()
	if s.dropped == nil {
		s.dropped = map[int64]bool{}
	}
	s.dropped[seq] = true
	r := s.run
	if s.runSeq != seq {
		r = nil
	}
	s.mu.Unlock()
	a.interrupt(s, r)
}

// isCancelled: whether the seq-th prompt read is cancelled; s.mu is held.
func (s *session) isCancelled(seq int64) bool { return s.cancelled >= seq || s.dropped[seq] }

// interrupt interrupts a run, if any, through the host's ladder.
func (a *agent) interrupt(s *session, r *hostclient.Run) {
	if r != nil {
		go func() {
			ctx, cancel := a.callCtx()
			defer cancel()
			_, _ = a.hc.Interrupt(ctx, s.id, r.ID)
		}()
	}
}

// take removes the session from the open ones and returns it (nil when
// none is open under that id).
func (a *agent) take(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	delete(a.sessions, id)
	return s
}

// closeSession cancels the session's turns, waits for them, and ends its
// chat: the backend's processes for it end.
func (a *agent) closeSession(params json.RawMessage) (any, error) {
	var p sessionRef
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s := a.take(p.SessionID)
	if s == nil {
		return nil, &rpcError{Code: codeNotFound, Message: "no session " + p.SessionID}
	}
	a.end(s)
	return empty{}, nil
}

// deleteSession takes a session out of session/list: open, it is closed
// as by session/close; its record for session/load is removed. The CLI's
// own record of the session (claude's session file, codex's thread) is
// the CLI's, and left as it is.
func (a *agent) deleteSession(params json.RawMessage) (any, error) {
	var p sessionRef
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s := a.take(p.SessionID)
	if s != nil {
		a.end(s)
	}
	err := a.store.remove(p.SessionID)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		if s == nil {
			return nil, &rpcError{Code: codeNotFound, Message: "no session " + p.SessionID, Data: map[string]string{"sessionId": p.SessionID}}
		}
	default:
		return nil, errorf(codeInternal, "removing session %s: %v", p.SessionID, err)
	}
	return empty{}, nil
}

// end cancels a session's turns, waits for their answers, and ends its chat.
func (a *agent) end(s *session) {
	s.mu.Lock()
	s.closed = true
	warm := s.warm
	if s.idle != nil {
		s.idle.Stop()
	}
	s.mu.Unlock()
	if warm != nil {
		<-warm // what started last is ended below
	}
	a.cancel(s)
	s.prompts.Wait()
	ctx, cancel := a.callCtx()
	defer cancel()
	_, _ = a.hc.ResetSession(ctx, s.id)
}

// drain is the end of input: for an editor the only way to say stop short
// of a signal, so the turns in flight are cancelled at once (their answers
// still written), the other requests read are answered within timeout,
// and every backend process ends.
func (a *agent) drain(ctx context.Context, timeout time.Duration) {
	a.cancelAll()
	done := make(chan struct{})
	go func() { a.work.Wait(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		a.opts.Warn(fmt.Sprintf("requests still in flight after the %v drain timeout; cancelling them", timeout))
		a.cancelAll()
		a.waitCancelled(done)
	case <-ctx.Done():
		a.cancelAll()
		<-done
	case <-a.w.gone:
		a.cancelAll()
		<-done
	}
	a.shut()
}

// waitCancelled waits for the turns cancelled to be answered, within the
// interrupt grace; if a write to the client blocks them longer (it reads
// nothing), their answers are given up.
func (a *agent) waitCancelled(done <-chan struct{}) {
	t := time.NewTimer(a.stuckAfter())
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		a.opts.Warn("the client reads nothing of what is written to it; ending without the answers of the turns cancelled")
		a.w.fail(errors.New("the client reads nothing"))
	}
}

// stuckAfter is how long cancelled turns may take to be answered before
// the client is taken as reading nothing: twice the interrupt grace, and
// a second.
func (a *agent) stuckAfter() time.Duration {
	grace := a.opts.Host.InterruptGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	return 2*grace + time.Second
}

// abort is a signal or the client gone: every turn is cancelled now.
func (a *agent) abort() {
	a.cancelAll()
	done := make(chan struct{})
	go func() { a.work.Wait(); close(done) }()
	<-done
	a.shut()
}

func (a *agent) cancelAll() {
	a.mu.Lock()
	var ss []*session
	for _, s := range a.sessions {
		ss = append(ss, s)
	}
	a.mu.Unlock()
	for _, s := range ss {
		a.cancel(s)
	}
}

// shut ends the host: the backend's processes are stopped.
func (a *agent) shut() {
	_ = a.hc.Close()
	a.stop()
}

// update sends one session/update.
func (a *agent) update(s *session, u any) {
	a.w.notify("session/update", sessionNotification{SessionID: s.id, Update: u})
}
