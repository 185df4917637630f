package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/agentry/agentry/lib/atomicfile"
	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/confine"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// agent is one agent process, its session and what agentry serves it.
type agent struct {
	conn    *conn
	caps    agentCaps
	root    string
	environ []string
	starts  proc.Options // how its terminals start (through the host's reaper)
	terms   terminals
	session string
	forms   bool // it was told agentry takes its form elicitations
	// modes are the session's modes, mode the one it is in.
	modes []Mode
	mode  string

	mu   sync.Mutex
	turn *turnState          // the turn in flight, if any
	sink func(u sessionNote) // where session updates go (a turn, a load)
}

// agentCaps is what the agent said it can do in initialize (raw: all
// of it, as it said it, for a face that passes it on).
type agentCaps struct {
	raw                json.RawMessage
	LoadSession        bool `json:"loadSession"`
	PromptCapabilities struct {
		Image           bool `json:"image"`
		EmbeddedContext bool `json:"embeddedContext"`
	} `json:"promptCapabilities"`
	McpCapabilities struct {
		HTTP bool `json:"http"`
		SSE  bool `json:"sse"`
	} `json:"mcpCapabilities"`
	SessionCapabilities struct {
		Resume *struct{} `json:"resume"`
		List   *struct{} `json:"list"`
		Close  *struct{} `json:"close"`
	} `json:"sessionCapabilities"`
}

// sessionNote is one session/update.
type sessionNote struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

// startAgent starts the command in root and initializes it. With asks
// (the turn that starts it takes questions), agentry says it takes the
// agent's form elicitations, which it puts to the turn as questions.
func (b *Backend) startAgent(ctx context.Context, root string, asks bool, logf func(level, msg string)) (*agent, error) {
	cmd := exec.Command(b.cfg.Command[0], b.cfg.Command[1:]...)
	cmd.Dir = root
	cmd.Env = b.env.Environ
	ag := &agent{root: root, environ: b.env.Environ, starts: b.env.Start()}
	warn := func(msg string) { logf("warn", msg) }
	c, err := start(cmd, b.env, handlers{serve: ag.serve, notify: ag.notify, warn: warn})
	if err != nil {
		return nil, host.Failed(protocol.CodeBackendUnavailable, "acp: could not start the agent: "+err.Error(), false)
	}
	ag.conn = c
	ictx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	caps := map[string]any{
		"fs":       map[string]bool{"readTextFile": true, "writeTextFile": true},
		"terminal": true,
	}
	if asks {
		caps["elicitation"] = map[string]any{"form": map[string]any{}}
		ag.forms = true
	}
	res, err := c.call(ictx, "initialize", map[string]any{
		"protocolVersion":    ProtocolVersion,
		"clientCapabilities": caps,
		"clientInfo":         map[string]string{"name": "agentry", "title": "agentry (agent-host --backend acp)", "version": "1"},
	})
	if err != nil {
		return nil, ag.fail("initialize", err)
	}
	var init struct {
		ProtocolVersion   int       `json:"protocolVersion"`
		AgentCapabilities agentCaps `json:"agentCapabilities"`
	}
	if err := json.Unmarshal(res, &init); err != nil {
		return nil, ag.fail("initialize", err)
	}
	var raw struct {
		AgentCapabilities json.RawMessage `json:"agentCapabilities"`
	}
	_ = json.Unmarshal(res, &raw)
	init.AgentCapabilities.raw = raw.AgentCapabilities
	if init.ProtocolVersion != ProtocolVersion {
		return nil, ag.fail("initialize", fmt.Errorf("the agent speaks ACP version %d, not %d", init.ProtocolVersion, ProtocolVersion))
	}
	ag.caps = init.AgentCapabilities
	b.mu.Lock()
	b.caps = &ag.caps
	b.mu.Unlock()
	return ag, nil
}

// fail ends the agent and words why it could not be used.
func (ag *agent) fail(what string, err error) error {
	msg := strings.TrimPrefix(err.Error(), what+": ")
	var rpc *RPCError
	answered := errors.As(err, &rpc) // the agent said why
	auth := answered && rpc.Code == codeAuthRequired && strings.Contains(strings.ToLower(rpc.Message), "auth")
	if auth {
		msg += "; log in with the agent's own command first" // and asking again says no again
	}
	if last := ag.conn.stderr.LastLine(); !answered && strings.ContainsFunc(last, unicode.IsLetter) {
		// Why it gave no answer, if it said: a line with words in it,
		// not the end of a dump.
		msg += ": " + last
	}
	ag.end(0)
	return host.Failed(protocol.CodeBackendUnavailable, "acp: the agent's "+what+": "+msg, !auth)
}

// codeAuthRequired is ACP's error for a request the agent will serve only
// once its user has logged in.
const codeAuthRequired = -32000

// sessionResult is what session/new, session/load and session/resume say.
type sessionResult struct {
	SessionID string `json:"sessionId"`
	Modes     *struct {
		CurrentModeID  string `json:"currentModeId"`
		AvailableModes []Mode `json:"availableModes"`
	} `json:"modes"`
}

// Mode is a session mode an agent offers.
type Mode struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// newSession starts a session in root, with the MCP servers mcp (ACP's
// shapes), and picks its mode.
func (ag *agent) newSession(ctx context.Context, root string, mcp []any) (string, error) {
	res, err := ag.conn.call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": mcp})
	if err != nil {
		return "", ag.fail("session/new", err)
	}
	var s sessionResult
	if err := json.Unmarshal(res, &s); err != nil || s.SessionID == "" {
		return "", ag.fail("session/new", fmt.Errorf("no sessionId in %.200s", res))
	}
	ag.keepModes(s)
	return s.SessionID, nil
}

// reopen takes up session id, by session/load (its replay given to said,
// when said is not nil) or session/resume, with the MCP servers mcp, and
// picks its mode.
func (ag *agent) reopen(ctx context.Context, id, root string, mcp []any, said *[]host.Said) error {
	method := "session/load"
	switch {
	case ag.caps.LoadSession:
	case ag.caps.SessionCapabilities.Resume != nil:
		method = "session/resume"
	default:
		return host.Failed(protocol.CodeUnsupported, "the agent can neither load nor resume a session", false)
	}
	return ag.reopenBy(ctx, method, id, root, mcp, said)
}

// reopenBy takes up session id by method (session/load or
// session/resume), with the MCP servers mcp, the replay given to said
// when said is not nil.
func (ag *agent) reopenBy(ctx context.Context, method, id, root string, mcp []any, said *[]host.Said) error {
	var r replay
	if said != nil {
		ag.mu.Lock()
		ag.sink = r.take
		ag.mu.Unlock()
		defer func() {
			ag.mu.Lock()
			ag.sink = nil
			ag.mu.Unlock()
			*said = r.said
		}()
	}
	res, err := ag.conn.call(ctx, method, map[string]any{"sessionId": id, "cwd": root, "mcpServers": mcp})
	if err != nil {
		return host.Failed(protocol.CodeBackendFailed, "acp: "+err.Error(), false)
	}
	var s sessionResult
	_ = json.Unmarshal(res, &s)
	s.SessionID = id
	ag.keepModes(s)
	return nil
}

// keepModes keeps what a session says of its modes, for setMode.
func (ag *agent) keepModes(s sessionResult) {
	ag.session = s.SessionID
	if s.Modes != nil {
		ag.modes, ag.mode = s.Modes.AvailableModes, s.Modes.CurrentModeID
	}
}

// setMode puts the session in the mode, of those it offers, that asks the
// most for pol (PickMode), unless it is in it already.
func (ag *agent) setMode(ctx context.Context, pol Policy) error {
	ag.mu.Lock()
	cur := ag.mode
	ag.mu.Unlock()
	if len(ag.modes) == 0 {
		return nil
	}
	id := PickMode(ag.modes, cur, pol)
	if id == cur {
		return nil
	}
	if _, err := ag.conn.call(ctx, "session/set_mode", map[string]any{"sessionId": ag.session, "modeId": id}); err != nil {
		return host.Failed(protocol.CodeBackendFailed, "acp: the agent's session/set_mode: "+err.Error(), false)
	}
	ag.mu.Lock()
	ag.mode = id
	ag.mu.Unlock()
	return nil
}

// Modes by how much they ask, the most first, by id. Modes that ask less
// than the agent's default, or plan instead of acting, are never picked.
// A read-only mode (codex-acp's) comes first where nothing may change
// (level 1, or a level that asks: the agent's own sandbox then stops what
// it runs unasked), and never where the level lets it change the working
// copy, which it would stop.
var (
	modeRankReadOnly = []string{"read-only", "readonly", "read_only", "default", "ask", "always-ask", "manual", "auto"}
	modeRank         = []string{"default", "ask", "always-ask", "manual", "auto"}
)

// PickMode is the mode, of those an agent offers, that asks the most at
// pol: the first of the ranked ids it offers, else the current one.
func PickMode(modes []Mode, current string, pol Policy) string {
	rank := modeRank
	if pol.Level < 2 || pol.Ask || pol.AskAll {
		rank = modeRankReadOnly
	}
	for _, want := range rank {
		for _, m := range modes {
			if strings.EqualFold(m.ID, want) {
				return m.ID
			}
		}
	}
	return current
}

// end ends the agent's whole group and its terminals.
func (ag *agent) end(grace time.Duration) {
	if grace == 0 {
		ag.conn.kill()
	} else {
		ag.conn.stop(grace)
	}
	ag.terms.killAll()
}

// notify takes the agent's notifications, in order, on the reading
// goroutine.
func (ag *agent) notify(method string, params json.RawMessage) {
	if method != "session/update" {
		return
	}
	var n sessionNote
	if json.Unmarshal(params, &n) != nil {
		return
	}
	var u struct {
		SessionUpdate string `json:"sessionUpdate"`
		CurrentModeID string `json:"currentModeId"`
	}
	_ = json.Unmarshal(n.Update, &u)
	ag.mu.Lock()
	sink := ag.sink
	if u.SessionUpdate == "current_mode_update" && u.CurrentModeID != "" {
		ag.mode = u.CurrentModeID // the agent changed it itself
	}
	ag.mu.Unlock()
	if sink != nil {
		sink(n)
	}
}

// current is the turn in flight, or nil.
func (ag *agent) current() *turnState {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	return ag.turn
}

// policy is the level the agent's requests are served at: the turn's, or
// between turns level 1's.
func (ag *agent) policy() Policy {
	if ts := ag.current(); ts != nil {
		return ts.pol
	}
	return Policy{Level: 1, Root: ag.root}
}

// serve answers one request of the agent.
func (ag *agent) serve(method string, params json.RawMessage) (any, error) {
	switch method {
	case "session/request_permission":
		return ag.permission(params)
	case "fs/read_text_file":
		return ag.readFile(params)
	case "fs/write_text_file":
		return ag.writeFile(params)
	case "terminal/create":
		return ag.createTerminal(params)
	case "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release":
		return ag.terminal(method, params)
	case "elicitation/create":
		return ag.elicit(params)
	}
	return nil, &RPCError{Code: codeMethodNotFound, Message: "method not found: " + method}
}

func decode(params json.RawMessage, v any) error {
	if err := json.Unmarshal(params, v); err != nil {
		return &RPCError{Code: codeInvalidParams, Message: "invalid params: " + err.Error()}
	}
	return nil
}

func refused(format string, args ...any) error {
	return &RPCError{Code: codeRefused, Message: fmt.Sprintf(format, args...)}
}

// maxReadFile is the largest file fs/read_text_file reads.
const maxReadFile = 64 << 20

func (ag *agent) readFile(params json.RawMessage) (any, error) {
	var p struct {
		Path  string `json:"path"`
		Line  *int   `json:"line"`
		Limit *int   `json:"limit"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	path, err := confine.Within(ag.root, p.Path)
	if err != nil {
		return nil, refused("agentry refuses to read %s: %v", p.Path, err)
	}
	if ok, why := ag.check(policy.Call{Tool: "fs/read_text_file", Reads: []string{path}}); !ok {
		return nil, refused("agentry refuses to read %s: %s", p.Path, why)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxReadFile {
		return nil, refused("agentry refuses to read %s: %d bytes, over %d", p.Path, fi.Size(), maxReadFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &RPCError{Code: codeInternal, Message: err.Error()}
	}
	text := string(b)
	if p.Line != nil || p.Limit != nil {
		lines := strings.SplitAfter(text, "\n")
		from := 0
		if p.Line != nil && *p.Line > 1 {
			from = min(*p.Line-1, len(lines))
		}
		to := len(lines)
		if p.Limit != nil && *p.Limit >= 0 {
			to = min(from+*p.Limit, len(lines))
		}
		text = strings.Join(lines[from:to], "")
	}
	return map[string]string{"content": text}, nil
}

func (ag *agent) writeFile(params json.RawMessage) (any, error) {
	var p struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ts := ag.current()
	pol := ag.policy()
	if pol.Level < 2 && (ts == nil || !ts.editAllowed()) {
		return nil, refused("agentry refuses to write %s: level %d writes nothing", p.Path, pol.Level)
	}
	path, err := confine.Writable(ag.root, p.Path)
	if err != nil {
		return nil, refused("agentry refuses to write %s: %v", p.Path, err)
	}
	if ok, why := ag.checkAt(pol, policy.Call{Tool: "fs/write_text_file", Writes: []string{path}}); !ok {
		return nil, refused("agentry refuses to write %s: %s", p.Path, why)
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := atomicfile.Write(path, []byte(p.Content), mode); err != nil {
		return nil, &RPCError{Code: codeInternal, Message: err.Error()}
	}
	return nil, nil
}

func (ag *agent) createTerminal(params json.RawMessage) (any, error) {
	var p createTerminal
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ts := ag.current()
	pol := ag.policy()
	if pol.Level < 2 && (ts == nil || !ts.execAllowed()) {
		return nil, refused("agentry refuses to run `%s`: level %d runs no command", cmdline.ShellLine(append([]string{p.Command}, p.Args...)), pol.Level)
	}
	if ts == nil {
		return nil, refused("agentry runs commands only during a turn")
	}
	dir := ag.root
	if p.Cwd != "" {
		d, err := confine.Within(ag.root, p.Cwd)
		if err != nil {
			return nil, refused("agentry refuses to run a command in %s: %v", p.Cwd, err)
		}
		dir = d
	}
	if ok, why := ag.checkAt(pol, terminalCall(p, dir)); !ok {
		return nil, refused("agentry refuses to run `%s`: %s", cmdline.ShellLine(append([]string{p.Command}, p.Args...)), why)
	}
	id, err := ag.terms.create(p, dir, ag.environ, ag.starts)
	if err != nil {
		return nil, &RPCError{Code: codeInternal, Message: err.Error()}
	}
	return map[string]string{"terminalId": id}, nil
}

func (ag *agent) terminal(method string, params json.RawMessage) (any, error) {
	var p struct {
		TerminalID string `json:"terminalId"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if method == "terminal/release" {
		return nil, ag.terms.release(p.TerminalID)
	}
	t, err := ag.terms.get(p.TerminalID)
	if err != nil {
		return nil, err
	}
	switch method {
	case "terminal/output":
		return t.output(), nil
	case "terminal/kill":
		t.kill()
		return nil, nil
	}
	ctx := context.Background()
	if ts := ag.current(); ts != nil {
		ctx = ts.ctx
	}
	return t.wait(ctx)
}

// permission answers session/request_permission from the level, or puts
// it to the daemon where the turn asks and the level does not allow it.
func (ag *agent) permission(params json.RawMessage) (any, error) {
	var p struct {
		ToolCall json.RawMessage `json:"toolCall"`
		Options  []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	cancelled := map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
	ts := ag.current()
	if ts == nil {
		return cancelled, nil
	}
	tc := ts.seen(p.ToolCall)
	granted := ts.pol.Allows(tc.Kind, tc.paths())
	allow := granted
	if ts.t.Ask != nil && (!granted || ts.pol.AskAll) {
		input, _ := json.Marshal(tc)
		call := callOf(tc)
		var extra protocol.Extra
		if gjson.ValidBytes(p.ToolCall) && gjson.GetBytes(p.ToolCall, "toolCallId").Str != "" {
			extra = protocol.Extra{ExtraToolCall: p.ToolCall} // the agent's own, for a face that is ACP
		}
		a := ts.t.Ask(host.Ask{Tool: tc.name(), Input: input, Description: tc.Title, ToolCallID: tc.ToolCallID,
			Choices: []string{protocol.DecisionAllow, protocol.DecisionDeny}, Call: call, Granted: granted,
			Extra: extra})
		allow = a.Allowed()
		if allow {
			ts.clear(call, ag.root)
		}
	}
	if ts.isInterrupted() {
		return cancelled, nil
	}
	if allow {
		ts.allow(tc)
	}
	want := []string{"reject_once", "reject_always"}
	if allow {
		want = []string{"allow_once", "allow_always"}
	}
	for _, k := range want {
		for _, o := range p.Options {
			if o.Kind == k {
				return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": o.OptionID}}, nil
			}
		}
	}
	return cancelled, nil
}

// checkAt is check for a request the turn's level may not allow by
// itself: at level 1 a command or a write runs only when a permission
// request allowed this turn named it (cleared), or, asked of the host as
// beyond the level, it is allowed now. One allowed call is no leave for
// others: what an agent runs after an allowed `ls` is asked again.
func (ag *agent) checkAt(pol Policy, c policy.Call) (bool, string) {
	ts := ag.current()
	if pol.Level >= 2 || ts == nil || ts.isCleared(c, ag.root) {
		return ag.check(c)
	}
	if ts.t.Ask == nil {
		return false, fmt.Sprintf("level %d runs or writes only what a permission request allowed named, and no request named it", pol.Level)
	}
	a := ts.t.Ask(host.Ask{Tool: c.Tool, Input: callInput(c), Description: c.Tool, ToolCallID: ts.active(),
		Choices: []string{protocol.DecisionAllow, protocol.DecisionDeny}, Call: c})
	if !a.Allowed() {
		if a.Message != "" {
			return false, a.Message
		}
		return false, fmt.Sprintf("level %d, and it was not allowed", pol.Level)
	}
	ts.clear(c, ag.root)
	return true, ""
}

// check puts a request agentry serves itself (a file read or written, a
// command run in a terminal), which the level already allows, to the host
// when a policy applies to the turn (Turn.AskAll), with Granted set: the
// host checks the policy, and a call it denies is refused, never carried
// out (the host reports the denial). What a request_permission allowed
// this turn already, naming the same file or command, is not put again.
// It returns whether the request may go ahead, and the host's word when
// not.
func (ag *agent) check(c policy.Call) (bool, string) {
	ts := ag.current()
	if ts == nil || !ts.pol.AskAll || ts.t.Ask == nil || ts.isCleared(c, ag.root) {
		return true, ""
	}
	a := ts.t.Ask(host.Ask{Tool: c.Tool, Input: callInput(c), Description: c.Tool, ToolCallID: ts.active(),
		Choices: []string{protocol.DecisionAllow, protocol.DecisionDeny}, Call: c, Granted: true})
	if a.Allowed() {
		return true, ""
	}
	if a.Message != "" {
		return false, a.Message
	}
	return false, "denied"
}

// callInput is a request's call as a permission request's input.
func callInput(c policy.Call) json.RawMessage {
	m := map[string]any{}
	switch {
	case c.Command != "":
		m["command"] = c.Command
	case len(c.Argv) > 0:
		m["argv"] = c.Argv
	}
	if len(c.Reads) > 0 {
		m["path"] = c.Reads[0]
	}
	if len(c.Writes) > 0 {
		m["path"] = c.Writes[0]
	}
	if c.Dir != "" {
		m["cwd"] = c.Dir
	}
	b, _ := json.Marshal(m)
	return b
}
