// Package echo is the deterministic backend: it streams the prompt back,
// and can be told to misbehave, for wiring tests and demos.
//
// A turn streams the prompt back word by word as text_delta events, then a
// usage event and completed with the whole prompt as its text.
//
// A first prompt line of directives, each starting with '!', changes that:
//
//	!sleep=DUR      wait DUR before answering (an interrupt cuts it short)
//	!slow=DUR       wait DUR between deltas
//	!error=CODE     end the turn with a terminal error of that code
//	!panic          panic inside the backend (the host survives it)
//	!exit=N         end the whole agent-host process with status N
//	!hang           ignore interrupts: stop only when the host gives up
//	!tool=NAME      first report a call of tool NAME on the rest of the
//	                prompt, and its result (nothing is ever run): a shell
//	                tool's (Bash, shell, exec…) input {"command": rest}, a
//	                writing tool's (Write, Edit…) {"file_path": rest}, a
//	                reading tool's (Read, Grep, Glob) {"file_path": rest},
//	                WebFetch's {"url": rest}, another's {"command": rest};
//	                in a run that asks (params.permissions "ask") or that a
//	                policy applies to (Turn.AskAll), the call is put to
//	                Turn.Ask first, and a denied call's result is an error
//	                that says why
//	!ask=HEADER     put a question to the person (tool AskUserQuestion):
//	                the rest of the prompt's first line is the question,
//	                each further line an option (none: a free answer); its
//	                id is HEADER (q1 when empty); the turn's text is then
//	                "answered ID: LABEL" (labels
//	                joined by ", "), or "no answer: " and what the agent
//	                was told (nobody asked: params.questions is not "ask")
//
// Echo's level allows every call: a !tool call in a run that does not ask
// is Ask.Granted, so that only a policy stops it; in a run that asks, no
// call is granted, and each goes to the daemon unless a policy denies it.

// The same keys in hello.config's "echo" object apply to every turn:
// {"backend":"echo","echo":{"slow":"5ms"}}.
package echo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// Backend is the echo backend.
type Backend struct {
	defaults directives

	mu       sync.Mutex
	sessions map[string]*protocol.SessionInfo
	servers  map[string]map[string]bool
}

type directives struct {
	Sleep time.Duration
	Slow  time.Duration
	Error string
	Panic bool
	Exit  int
	Hang  bool
	Tool  string
	Ask   string
}

// New makes an echo backend from hello.config (which may be empty).
func New(config json.RawMessage) (*Backend, error) {
	b := &Backend{sessions: map[string]*protocol.SessionInfo{}, servers: map[string]map[string]bool{}}
	if len(config) > 0 {
		var c struct {
			Echo map[string]any `json:"echo"`
		}
		if err := json.Unmarshal(config, &c); err != nil {
			return nil, fmt.Errorf("echo: bad config: %v", err)
		}
		for k, v := range c.Echo {
			if err := b.defaults.set(k, fmt.Sprint(v)); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

func (d *directives) set(k, v string) error {
	var err error
	switch k {
	case "sleep":
		d.Sleep, err = time.ParseDuration(v)
	case "slow":
		d.Slow, err = time.ParseDuration(v)
	case "error":
		d.Error = v
		if v == "" {
			d.Error = protocol.CodeBackendFailed
		}
	case "panic":
		d.Panic = true
	case "exit":
		d.Exit, err = strconv.Atoi(v)
		if err == nil && d.Exit == 0 {
			err = fmt.Errorf("exit status must not be 0")
		}
	case "hang":
		d.Hang = true
	case "tool":
		d.Tool = v
		if v == "" {
			err = fmt.Errorf("a tool needs a name")
		}
	case "ask":
		d.Ask = v
		if v == "" {
			err = fmt.Errorf("a question needs a header")
		}
	default:
		return fmt.Errorf("echo: unknown directive %q", k)
	}
	if err != nil {
		return fmt.Errorf("echo: directive %s=%s: %v", k, v, err)
	}
	return nil
}

// parse splits the directives line off a prompt.
func (b *Backend) parse(prompt string) (directives, string, error) {
	d := b.defaults
	first, rest, _ := strings.Cut(prompt, "\n")
	if !strings.HasPrefix(first, "!") {
		return d, prompt, nil
	}
	for _, f := range strings.Fields(first) {
		k, v, _ := strings.Cut(strings.TrimPrefix(f, "!"), "=")
		if err := d.set(k, v); err != nil {
			return d, rest, err
		}
	}
	return d, rest, nil
}

func (b *Backend) Name() string { return "echo" }

// Said is the prompt less its line of directives: a line of them is not
// what the user said to the agent.
func (b *Backend) Said(prompt string) string {
	if first, rest, _ := strings.Cut(prompt, "\n"); strings.HasPrefix(first, "!") {
		return rest
	}
	return prompt
}

// AsksPermissions: a !tool call is put to the daemon in a run that asks.
func (b *Backend) AsksPermissions() bool { return true }

// EnforcesPolicy: a !tool call is put to Turn.Ask in a run a policy
// applies to, granted or not.
func (b *Backend) EnforcesPolicy() bool { return true }

func (b *Backend) Version() string { return "echo 1" }

// DescribeTool: a !tool call runs its input's command, or writes, reads
// or fetches what its input names.
func (b *Backend) DescribeTool(name string, input json.RawMessage) host.ToolView {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		URL      string `json:"url"`
	}
	if json.Unmarshal(input, &in) != nil {
		return host.ToolView{Title: name, Kind: host.ToolOther}
	}
	_, call := toolCall(name, "")
	switch {
	case strings.TrimSpace(in.Command) != "":
		return host.ToolView{Title: strings.TrimSpace(in.Command), Kind: host.ToolExecute}
	case in.FilePath != "" && call.Writes != nil:
		return host.ToolView{Title: name + " " + in.FilePath, Kind: host.ToolEdit, Paths: []string{in.FilePath}}
	case in.FilePath != "":
		return host.ToolView{Title: name + " " + in.FilePath, Kind: host.ToolRead, Paths: []string{in.FilePath}}
	case in.URL != "":
		return host.ToolView{Title: name + " " + in.URL, Kind: host.ToolFetch}
	}
	return host.ToolView{Title: name, Kind: host.ToolOther}
}

// RunTurn echoes the prompt.
func (b *Backend) RunTurn(ctx context.Context, t *host.Turn) error {
	d, text, err := b.parse(t.Params.Prompt)
	if err != nil {
		return host.Failed(protocol.CodeBadRequest, err.Error(), false)
	}
	interrupted := t.Interrupted
	if d.Hang {
		interrupted = nil
	}
	wait := func(dur time.Duration) error {
		if dur <= 0 {
			return nil
		}
		timer := time.NewTimer(dur)
		defer timer.Stop()
		select {
		case <-timer.C:
			return nil
		case <-interrupted:
			return host.ErrInterrupted
		case <-ctx.Done():
			return host.ErrInterrupted
		}
	}
	if d.Hang {
		<-ctx.Done()
		return host.ErrInterrupted
	}
	if err := wait(d.Sleep); err != nil {
		return err
	}
	switch {
	case d.Panic:
		panic("echo: told to panic")
	case d.Exit != 0:
		os.Exit(d.Exit)
	}
	if d.Tool != "" {
		if err := b.tool(t, d.Tool, text); err != nil {
			return err
		}
	}
	if d.Ask != "" {
		answer, err := b.ask(t, d.Ask, text)
		if err != nil {
			return err
		}
		text = answer
	}
	words := splitWords(text)
	for i, w := range words {
		if i > 0 {
			if err := wait(d.Slow); err != nil {
				return err
			}
		}
		select {
		case <-interrupted:
			return host.ErrInterrupted
		default:
		}
		t.Emit(protocol.AgentEvent{Type: protocol.EvTextDelta, Text: w})
	}
	if d.Error != "" {
		return host.Failed(d.Error, "echo: told to fail with "+d.Error, false)
	}
	usage := &protocol.Usage{InputTokens: int64(len(words)), OutputTokens: int64(len(words))}
	t.Emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: usage})
	b.turn(t.Params.ChatID, len(words))
	t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: text, Usage: usage, SessionID: b.sessionID(t.Params.ChatID)})
	return nil
}

// tool reports one call of tool name on the prompt's text, asking first
// when the run asks or a policy applies.
func (b *Backend) tool(t *host.Turn, name, text string) error {
	id := "echo-" + t.RunID + "-tool"
	key, call := toolCall(name, text)
	input, _ := protocol.Marshal(map[string]string{key: text})
	t.Emit(protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: id, Name: name, Input: input})
	if t.Ask != nil {
		a := t.Ask(host.Ask{Tool: name, Input: input, ToolCallID: id, Call: call,
			Granted: t.Params.Permissions != protocol.PermissionsAsk,
			Choices: []string{protocol.DecisionAllow, protocol.DecisionAllowSession, protocol.DecisionDeny}})
		if !a.Allowed() {
			out := "denied: " + a.By
			if a.Message != "" {
				out += ": " + a.Message
			}
			t.Emit(protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: out, IsError: true})
			if a.By == protocol.ResolvedByInterrupt || a.By == protocol.ResolvedByShutdown {
				return host.ErrInterrupted
			}
			return nil
		}
		if v := gjson.GetBytes(a.Input, key); len(a.Input) > 0 && v.Type == gjson.String {
			text = v.Str // the daemon's input replaces the call's, as claude takes it
		}
	}
	t.Emit(protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: "ran: " + text})
	return nil
}

// toolCall is the input's key for a call of tool name on text, and the
// call in a policy's terms.
func toolCall(name, text string) (string, policy.Call) {
	c := policy.Call{Tool: name}
	switch strings.ToLower(name) {
	case "bash", "shell", "sh", "exec", "exec_command", "local_shell", "run_shell_command", "execute":
		c.Command = text
		return "command", c
	case "write", "edit", "multiedit", "notebookedit", "write_file", "edit_file", "replace":
		c.Writes = []string{text}
		return "file_path", c
	case "read", "grep", "glob", "read_file":
		c.Reads = []string{text}
		return "file_path", c
	case "webfetch", "web_fetch", "fetch":
		c.Hosts = []string{text}
		return "url", c
	}
	return "command", c
}

// ask puts the question of !ask=header to the person, when the run takes
// questions, and returns the turn's text: what was answered, or that
// nothing was.
func (b *Backend) ask(t *host.Turn, header, text string) (string, error) {
	id := "echo-" + t.RunID + "-ask"
	lines := strings.Split(strings.TrimSpace(text), "\n")
	// Its id as the host would fill it: the header, else q1.
	q := protocol.Question{ID: header, Header: header, Question: strings.TrimSpace(lines[0])}
	if q.ID == "" {
		q.ID = "q1"
	}
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); l != "" {
			q.Options = append(q.Options, protocol.QuestionOption{Label: l})
		}
	}
	input, _ := protocol.Marshal(map[string]any{"questions": []protocol.Question{q}})
	t.Emit(protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: id, Name: "AskUserQuestion", Input: input})
	if t.Question == nil {
		t.Emit(protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: host.NoAnswerMessage, IsError: true})
		return "no answer: " + host.NoAnswerMessage, nil
	}
	a := t.Question(host.QuestionAsk{ToolCallID: id, Questions: []protocol.Question{q}})
	if !a.Answered {
		t.Emit(protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: a.Message, IsError: true})
		if a.By == protocol.ResolvedByInterrupt || a.By == protocol.ResolvedByShutdown {
			return "", host.ErrInterrupted
		}
		return "no answer: " + a.Message, nil
	}
	out := "answered " + q.ID + ": " + strings.Join(a.Answers[q.ID], ", ")
	t.Emit(protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: out})
	return out, nil
}

// splitWords cuts text into words that keep their leading space, so the
// deltas concatenate back to the text.
func splitWords(text string) []string {
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' && text[i-1] != ' ' {
			out = append(out, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

func (b *Backend) turn(chatID string, tokens int) {
	if chatID == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.session(chatID)
	s.Turns++
	s.ContextTokens += 2 * tokens
}

// session returns the chat's session, made on first use; b.mu is held.
func (b *Backend) session(chatID string) *protocol.SessionInfo {
	s := b.sessions[chatID]
	if s == nil {
		s = &protocol.SessionInfo{ChatID: chatID, SessionID: "echo-" + chatID, ContextWindow: 200000}
		b.sessions[chatID] = s
	}
	return s
}

func (b *Backend) sessionID(chatID string) string {
	if chatID == "" {
		return ""
	}
	return "echo-" + chatID
}

// WarmSession makes the chat's session.
func (b *Backend) WarmSession(ctx context.Context, chatID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.session(chatID)
	return nil
}

// SessionInfo reports the chat's session; nil for a chat never seen.
func (b *Backend) SessionInfo(ctx context.Context, chatID string) (*protocol.SessionInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[chatID]
	if !ok {
		return nil, nil
	}
	c := *s
	return &c, nil
}

// ResetSession forgets the chat.
func (b *Backend) ResetSession(ctx context.Context, chatID string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.sessions[chatID]
	delete(b.sessions, chatID)
	delete(b.servers, chatID)
	return ok, nil
}

// SetMCPServers records the chat's servers and reports what changed.
func (b *Backend) SetMCPServers(ctx context.Context, chatID string, servers map[string]json.RawMessage) (*protocol.ToolRefresh, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := map[string]bool{}
	for name := range servers {
		now[name] = true
	}
	r := host.ServersChanged(b.servers[chatID], now)
	b.servers[chatID] = now
	return r, nil
}

// RefreshTools reports no change.
func (b *Backend) RefreshTools(ctx context.Context, chatID string) (*protocol.ToolRefresh, error) {
	return &protocol.ToolRefresh{Added: []string{}, Removed: []string{}, Errors: map[string]string{}}, nil
}

// ListModels lists the echo model.
func (b *Backend) ListModels(ctx context.Context, filter string) ([]protocol.ModelInfo, int, error) {
	m := []protocol.ModelInfo{{ID: "echo-1", Name: "Echo", ContextWindow: 200000, Free: true}}
	return m, len(m), nil
}
