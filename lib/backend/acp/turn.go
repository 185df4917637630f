package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
)

// toolCall is an ACP tool call, as tool_call, tool_call_update and
// request_permission carry it (an update only what changed).
type toolCall struct {
	ToolCallID string            `json:"toolCallId"`
	Title      string            `json:"title,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Status     string            `json:"status,omitempty"`
	RawInput   json.RawMessage   `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage   `json:"rawOutput,omitempty"`
	Locations  []location        `json:"locations,omitempty"`
	Content    []json.RawMessage `json:"content,omitempty"`
}

type location struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

func (tc toolCall) paths() []string {
	var ps []string
	for _, l := range tc.Locations {
		ps = append(ps, l.Path)
	}
	return ps
}

// name is what a tool_call event names the call: its title's first line,
// else its kind.
func (tc toolCall) name() string {
	if tc.Title != "" {
		return firstLine(tc.Title)
	}
	if tc.Kind != "" {
		return tc.Kind
	}
	return "tool"
}

// merge is tc with what update says of it.
func (tc toolCall) merge(u toolCall) toolCall {
	if u.Title != "" {
		tc.Title = u.Title
	}
	if u.Kind != "" {
		tc.Kind = u.Kind
	}
	if u.Status != "" {
		tc.Status = u.Status
	}
	if len(u.RawInput) > 0 {
		tc.RawInput = u.RawInput
	}
	if len(u.RawOutput) > 0 {
		tc.RawOutput = u.RawOutput
	}
	if u.Locations != nil {
		tc.Locations = u.Locations
	}
	if u.Content != nil {
		tc.Content = u.Content
	}
	return tc
}

// turnState is one turn on an agent.
type turnState struct {
	t   *host.Turn
	pol Policy
	ctx context.Context // ended with the turn

	mu          sync.Mutex
	calls       map[string]toolCall // what is known of each call
	announced   map[string]bool     // its tool_call event was sent
	finished    map[string]bool     // its tool_result event was sent
	allowed     map[string]bool     // agentry allowed it
	edits, runs bool                // an ask allowed an edit, a command
	cleared     map[string]bool     // clearedKeys of the calls the host allowed
	lastAllowed string              // the call allowed last
	text        strings.Builder
	usage       *protocol.Usage
	cost        *float64 // the session's cost as last reported
	base        float64  // and at the turn's start
	interrupted bool
	violation   string
	violated    string // its error code: CodeLevelViolated or CodePolicyViolated
	tripped     chan struct{}
}

func newTurn(ctx context.Context, t *host.Turn, pol Policy) *turnState {
	return &turnState{t: t, pol: pol, ctx: ctx, calls: map[string]toolCall{}, announced: map[string]bool{},
		finished: map[string]bool{}, allowed: map[string]bool{}, tripped: make(chan struct{})}
}

// seen records what raw says of a call, announces it when it is new, and
// returns all that is known of it.
func (ts *turnState) seen(raw json.RawMessage) toolCall {
	var u toolCall
	_ = json.Unmarshal(raw, &u)
	ts.mu.Lock()
	tc := ts.calls[u.ToolCallID].merge(u)
	tc.ToolCallID = u.ToolCallID
	ts.calls[u.ToolCallID] = tc
	announce := !ts.announced[u.ToolCallID]
	ts.announced[u.ToolCallID] = true
	ts.mu.Unlock()
	if announce {
		input, _ := json.Marshal(tc)
		ts.t.Emit(protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: tc.ToolCallID, Name: tc.name(), Input: input, Extra: asSent(raw)})
	}
	return tc
}

// ExtraUpdate is the key, in an event's extra fields, of the agent's
// session/update that the event translates, as the agent sent it: a face
// that is itself ACP passes it on unchanged (plans, slash commands, tool
// calls and their diffs).
const ExtraUpdate = "acpUpdate"

// ExtraToolCall is the key, in a permission request's extra fields, of
// the tool call the agent's session/request_permission carried, as the
// agent sent it: a face that is itself ACP asks the editor with it
// unchanged.
const ExtraToolCall = "acpToolCall"

// asSent is the extra fields carrying raw, a session/update's update,
// as the agent sent it; none for a request_permission's tool call, which
// is no update.
func asSent(raw json.RawMessage) protocol.Extra {
	var u map[string]json.RawMessage
	if json.Unmarshal(raw, &u) != nil {
		return nil
	}
	if _, ok := u["sessionUpdate"]; !ok {
		return nil // a request_permission's toolCall: not an update
	}
	return protocol.Extra{ExtraUpdate: raw}
}

func (ts *turnState) allow(tc toolCall) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.allowed[tc.ToolCallID] = true
	ts.lastAllowed = tc.ToolCallID
	switch tc.Kind {
	case "execute":
		ts.runs = true
	case "edit", "delete", "move":
		ts.edits = true
	}
}

// clear keeps what an allowed call names, so that the requests that
// carry it out are not put to the host again.
func (ts *turnState) clear(c policy.Call, root string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.cleared == nil {
		ts.cleared = map[string]bool{}
	}
	for _, k := range clearedKeys(c, root) {
		ts.cleared[k] = true
	}
}

// active is the call an fs or terminal request is taken to carry out (ACP
// does not say): the one allowed last, while it has no result.
func (ts *turnState) active() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.finished[ts.lastAllowed] {
		return ""
	}
	return ts.lastAllowed
}

// known is id when a tool_call event of the turn has that id, else "".
func (ts *turnState) known(id string) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.announced[id] {
		return id
	}
	return ""
}

// isCleared reports whether all c names was allowed this turn already.
func (ts *turnState) isCleared(c policy.Call, root string) bool {
	keys := clearedKeys(c, root)
	if len(keys) == 0 || len(c.Reads) > 0 {
		return false
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, k := range keys {
		if !ts.cleared[k] {
			return false
		}
	}
	return true
}

func (ts *turnState) editAllowed() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.edits
}

func (ts *turnState) execAllowed() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.runs
}

func (ts *turnState) isInterrupted() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.interrupted
}

// policyTripped are the kinds of call a policy's tripwire looks at: those
// whose paths are what they read or write, and a command. A search, a
// fetch, "other" are too vague to end a turn over (a search of "." is no
// read of every file under it).
var policyTripped = map[string]bool{"read": true, "edit": true, "delete": true, "move": true, "execute": true}

// definite is c with the directories among the paths it reads left out:
// a read of a directory names no file in it.
func definite(c policy.Call, root string) policy.Call {
	var files []string
	for _, p := range c.Reads {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			continue
		}
		files = append(files, p)
	}
	c.Reads = files
	return c
}

// trip ends the turn for a call the agent ran that the level forbids.
func (ts *turnState) trip(tc toolCall) {
	ts.tripFor(CodeLevelViolated, fmt.Sprintf("the agent ran %q (%s), a call of kind %s, without asking: level %d does not allow it, so the turn was ended, and the agent with it",
		firstLine(tc.Title), tc.Status, tc.Kind, ts.pol.Level))
}

// tripPolicy ends the turn for a call the agent ran that a policy denies
// (rule names the rule and what it matched).
func (ts *turnState) tripPolicy(tc toolCall, rule string) {
	ts.tripFor(CodePolicyViolated, fmt.Sprintf("the agent ran %q (%s), a call of kind %s, without asking: agentry's policy denies it (%s), so the turn was ended, and the agent with it",
		firstLine(tc.Title), tc.Status, tc.Kind, rule))
}

func (ts *turnState) tripFor(code, msg string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.violation != "" {
		return
	}
	ts.violation, ts.violated = msg, code
	close(ts.tripped)
}

// update takes one session/update of the turn.
func (ts *turnState) update(n sessionNote) {
	var u struct {
		SessionUpdate string          `json:"sessionUpdate"`
		Content       json.RawMessage `json:"content"`
		Entries       []struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"entries"`
		AvailableCommands []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Input       *struct {
				Hint string `json:"hint"`
			} `json:"input"`
		} `json:"availableCommands"`
		Used int64 `json:"used"`
		Cost *struct {
			Amount   float64 `json:"amount"`
			Currency string  `json:"currency"`
		} `json:"cost"`
	}
	if json.Unmarshal(n.Update, &u) != nil {
		return
	}
	ts.mu.Lock()
	tripped := ts.violation != ""
	ts.mu.Unlock()
	if tripped {
		return // nothing the agent says after a violation is passed on
	}
	switch u.SessionUpdate {
	case "agent_message_chunk":
		if s := textOf(u.Content); s != "" {
			ts.mu.Lock()
			ts.text.WriteString(s)
			ts.mu.Unlock()
			ts.t.Emit(protocol.AgentEvent{Type: protocol.EvTextDelta, Text: s})
		}
	case "agent_thought_chunk":
		if s := textOf(u.Content); s != "" {
			ts.t.Emit(protocol.AgentEvent{Type: protocol.EvThinking, Text: s})
		}
	case "tool_call", "tool_call_update":
		tc := ts.seen(n.Update)
		ts.mu.Lock()
		allowed := ts.allowed[tc.ToolCallID]
		done := ts.finished[tc.ToolCallID]
		ts.mu.Unlock()
		ran := tc.Status == "in_progress" || tc.Status == "completed"
		if ran && !allowed && ts.pol.Forbids(tc.Kind, tc.paths()) {
			ts.trip(tc)
			return
		}
		if tc.Status == "completed" && !allowed && ts.t.PolicyDenies != nil && policyTripped[tc.Kind] {
			// Done, not in progress: an agent may show a call in
			// progress before it asks agentry to read, write or run it,
			// which agentry's own check then refuses.
			if rule, denied := ts.t.PolicyDenies(definite(callOf(tc), ts.pol.Root)); denied {
				ts.tripPolicy(tc, rule)
				return
			}
		}
		if (tc.Status == "completed" || tc.Status == "failed") && !done {
			ts.mu.Lock()
			ts.finished[tc.ToolCallID] = true
			ts.mu.Unlock()
			ts.t.Emit(protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: tc.ToolCallID, Output: outputOf(tc), IsError: tc.Status == "failed",
				Extra: asSent(n.Update)})
		}
	case "plan":
		var steps []protocol.PlanStep
		for _, e := range u.Entries {
			steps = append(steps, protocol.PlanStep{Step: e.Content, Status: e.Status})
		}
		ts.t.Emit(protocol.AgentEvent{Type: protocol.EvPlan, Plan: steps, Extra: asSent(n.Update)})
	case "available_commands_update":
		var cs []protocol.Command
		for _, c := range u.AvailableCommands {
			cmd := protocol.Command{Name: c.Name, Description: c.Description}
			if c.Input != nil {
				cmd.Hint = c.Input.Hint
			}
			cs = append(cs, cmd)
		}
		ts.t.Emit(protocol.AgentEvent{Type: protocol.EvCommands, Commands: cs, Extra: asSent(n.Update)})
	case "usage_update":
		// Passed on as it comes, so that a budget is kept during the turn:
		// the context's tokens, and the turn's part of the session's cost.
		ts.mu.Lock()
		us := protocol.Usage{InputTokens: u.Used}
		if u.Cost != nil && (u.Cost.Currency == "" || strings.EqualFold(u.Cost.Currency, "USD")) {
			c := u.Cost.Amount
			ts.cost = &c
		}
		if ts.cost != nil {
			us.CostUSD = max(*ts.cost-ts.base, 0)
		}
		ts.usage = &us
		ts.mu.Unlock()
		ts.t.Emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: &us})
	}
}

// textOf is a content block's text.
func textOf(raw json.RawMessage) string {
	var c struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Type != "text" {
		return ""
	}
	return c.Text
}

// outputOf is a finished call's output: its content's text, else its raw
// output.
func outputOf(tc toolCall) string {
	var parts []string
	for _, raw := range tc.Content {
		var c struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &c) == nil && c.Type == "content" {
			if s := textOf(c.Content); s != "" {
				parts = append(parts, s)
			}
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "\n")
	}
	var s string
	if json.Unmarshal(tc.RawOutput, &s) == nil {
		return s
	}
	return string(tc.RawOutput)
}

// promptOf is a turn's prompt as ACP content blocks: its text (unless it
// has none), then its attachments: images, resources, links.
func promptOf(p protocol.ChatRunParams) []any {
	var blocks []any
	if p.Prompt != "" || len(p.Attachments) == 0 {
		blocks = append(blocks, map[string]string{"type": "text", "text": p.Prompt})
	}
	for _, at := range p.Attachments {
		switch at.Type {
		case protocol.AttachmentResource:
			r := map[string]any{"uri": at.URI}
			if at.MimeType != "" {
				r["mimeType"] = at.MimeType
			}
			if at.Text != nil {
				r["text"] = *at.Text
			} else {
				r["blob"] = at.Data
			}
			blocks = append(blocks, map[string]any{"type": "resource", "resource": r})
		case protocol.AttachmentResourceLink:
			l := map[string]any{"type": "resource_link", "uri": at.URI, "name": at.Name}
			if at.Title != "" {
				l["title"] = at.Title
			}
			if at.MimeType != "" {
				l["mimeType"] = at.MimeType
			}
			blocks = append(blocks, l)
		default:
			blocks = append(blocks, map[string]string{"type": "image", "mimeType": at.MimeType, "data": at.Data})
		}
	}
	return blocks
}

// turn runs one session/prompt and translates until its response.
func (c *chat) turn(ctx context.Context, t *host.Turn, pol Policy) error {
	ag := c.ag
	if err := ag.setMode(ctx, pol); err != nil {
		return err
	}
	t.Log("debug", fmt.Sprintf("acp: level %d, ask %v, the agent's mode %q of %v", pol.Level, pol.Ask, ag.mode, ag.modes))
	tctx, done := context.WithCancel(ctx)
	defer done()
	ts := newTurn(tctx, t, pol)
	ts.base = c.cost
	defer func() {
		ts.mu.Lock()
		if ts.cost != nil {
			c.cost = *ts.cost // however the turn ended
		}
		ts.mu.Unlock()
	}()
	ag.mu.Lock()
	ag.turn, ag.sink = ts, ts.update
	ag.mu.Unlock()
	defer func() {
		ag.mu.Lock()
		ag.turn, ag.sink = nil, nil
		ag.mu.Unlock()
		ag.terms.killAll() // a turn's commands end with it
	}()
	prompt := promptOf(t.Params)
	if sp := t.Params.SystemPrompt; sp != "" && c.told != c.session {
		// ACP has no system prompt: the session's first prompt opens
		// with it, a text block of its own.
		prompt = append([]any{map[string]string{"type": "text", "text": sp}}, prompt...)
		c.told = c.session
	}
	ch, _, err := ag.conn.send("session/prompt", map[string]any{"sessionId": c.session, "prompt": prompt})
	if err != nil {
		c.endAgent(0)
		return host.Failed(protocol.CodeBackendFailed, "acp: the agent is gone: "+ag.conn.stderr.LastLine(), true)
	}
	interrupted := t.Interrupted
	for {
		select {
		case r := <-ch:
			select {
			case <-ts.tripped:
				// The wire tripped before the answer came (both are
				// read on one goroutine, in order): the violation wins.
				return c.tripped(ts)
			default:
			}
			return c.ended(ts, r)
		case <-ts.tripped:
			return c.tripped(ts)
		case <-interrupted:
			interrupted = nil
			ts.mu.Lock()
			ts.interrupted = true
			ts.mu.Unlock()
			_ = ag.conn.notify("session/cancel", map[string]string{"sessionId": c.session})
			ag.terms.killAll()
		case <-ctx.Done():
			// The host gave up waiting: the agent goes, with what it
			// started; the next turn starts another.
			c.endAgent(0)
			return host.ErrInterrupted
		}
	}
}

// tripped ends a turn whose agent ran a call the level forbids: the agent
// goes, with everything it started.
func (c *chat) tripped(ts *turnState) error {
	_ = c.ag.conn.notify("session/cancel", map[string]string{"sessionId": c.session})
	c.endAgent(0)
	ts.mu.Lock()
	msg, code := ts.violation, ts.violated
	ts.mu.Unlock()
	ts.t.Log("warn", "acp: "+msg)
	return host.Failed(code, msg, false)
}

// ended ends a turn with the agent's response to its prompt.
func (c *chat) ended(ts *turnState, r reply) error {
	if r.err != nil {
		if errors.Is(r.err, errGone) {
			last := c.ag.conn.stderr.LastLine()
			c.endAgent(0)
			return host.Failed(protocol.CodeBackendFailed, "acp: the agent died mid-turn: "+last, true)
		}
		if ts.isInterrupted() {
			return host.ErrInterrupted
		}
		return host.Failed(protocol.CodeBackendFailed, "acp: session/prompt: "+r.err.Error(), false)
	}
	var res struct {
		StopReason string `json:"stopReason"`
		Usage      *struct {
			InputTokens       int64 `json:"inputTokens"`
			OutputTokens      int64 `json:"outputTokens"`
			CachedReadTokens  int64 `json:"cachedReadTokens"`
			CachedWriteTokens int64 `json:"cachedWriteTokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(r.result, &res)
	c.infoMu.Lock()
	c.turns++
	c.infoMu.Unlock()
	ts.mu.Lock()
	text := ts.text.String()
	usage := ts.usage
	if res.Usage != nil {
		usage = &protocol.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
			CacheReadTokens: res.Usage.CachedReadTokens, CacheWriteTokens: res.Usage.CachedWriteTokens}
	}
	if ts.cost != nil {
		if usage == nil {
			usage = &protocol.Usage{}
		}
		u := *usage
		u.CostUSD = max(*ts.cost-ts.base, 0)
		usage = &u
	}
	ts.mu.Unlock()
	switch res.StopReason {
	case "cancelled":
		return host.ErrInterrupted
	case "refusal":
		return host.Failed(protocol.CodeBackendFailed, "the agent refused to go on", false)
	}
	if ts.isInterrupted() {
		return host.ErrInterrupted
	}
	if text != "" {
		ts.t.Emit(protocol.AgentEvent{Type: protocol.EvText, Text: text})
	}
	ts.t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Usage: usage})
	return nil
}

// replay gathers what session/load replays, as a session's history.
type replay struct {
	mu   sync.Mutex
	said []host.Said
}

func (r *replay) take(n sessionNote) {
	var u struct {
		SessionUpdate string          `json:"sessionUpdate"`
		Content       json.RawMessage `json:"content"`
	}
	if json.Unmarshal(n.Update, &u) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	last := func() *host.Said {
		if len(r.said) == 0 {
			return nil
		}
		return &r.said[len(r.said)-1]
	}
	switch u.SessionUpdate {
	case "user_message_chunk":
		if l := last(); l != nil && l.User != "" {
			l.User += textOf(u.Content)
			return
		}
		r.said = append(r.said, host.Said{User: textOf(u.Content)})
	case "agent_message_chunk":
		if l := last(); l != nil && l.User == "" && l.Event.Type == protocol.EvText {
			l.Event.Text += textOf(u.Content)
			return
		}
		r.said = append(r.said, host.Said{Event: protocol.AgentEvent{Type: protocol.EvText, Text: textOf(u.Content)}})
	case "agent_thought_chunk":
		r.said = append(r.said, host.Said{Event: protocol.AgentEvent{Type: protocol.EvThinking, Text: textOf(u.Content)}})
	case "tool_call", "tool_call_update":
		var tc toolCall
		_ = json.Unmarshal(n.Update, &tc)
		if u.SessionUpdate == "tool_call" {
			input, _ := json.Marshal(tc)
			r.said = append(r.said, host.Said{Event: protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: tc.ToolCallID, Name: tc.name(), Input: input}})
		}
		if tc.Status == "completed" || tc.Status == "failed" {
			r.said = append(r.said, host.Said{Event: protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: tc.ToolCallID,
				Output: outputOf(tc), IsError: tc.Status == "failed"}})
		}
	}
}
