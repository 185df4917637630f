package acp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// prompt admits a session/prompt in input order (so a cancel read after
// it cancels it), and runs its turn on a goroutine of its own.
func (a *agent) prompt(id json.RawMessage, params json.RawMessage) {
	var p promptParams
	if err := decode(params, &p); err != nil {
		a.w.reply(id, nil, err)
		return
	}
	s, err := a.open(p.SessionID)
	if err != nil {
		a.w.reply(id, nil, err)
		return
	}
	in, err := a.promptInput(p.Prompt)
	if err != nil {
		a.w.reply(id, nil, err)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		a.w.reply(id, nil, &rpcError{Code: codeNotFound, Message: "no session " + s.id})
		return
	}
	s.seq++
	seq := s.seq
	// The turn runs with the mode, model and effort as they are when its
	// prompt is read: a change read later is for the prompts after it.
	set := settings{mode: s.mode, model: s.model, effort: s.effort}
	s.prompts.Add(1)
	before, mine := s.last, make(chan struct{})
	s.last = mine
	s.mu.Unlock()
	key := string(id)
	a.mu.Lock()
	a.prompts[key] = promptRef{s, seq}
	a.mu.Unlock()
	a.work.Add(1)
	go func() {
		defer a.work.Done()
		defer s.prompts.Done()
		if before != nil {
			<-before
		}
		res, err := a.runPrompt(s, seq, set, in)
		a.mu.Lock()
		delete(a.prompts, key)
		a.mu.Unlock()
		a.w.reply(id, res, err)
		close(mine)
		a.armIdle(s)
		// The record for session/load is written after the answer, not
		// before it (two fsyncs: 2-9 ms an answer), and before the
		// session can be closed or deleted, or agent-host end: those
		// wait for the session's prompts.
		a.remember(s)
	}()
}

// settings are what a turn runs with, as the session had them when its
// prompt was read.
type settings struct {
	mode          mode
	model, effort string
}

// promptRef is a prompt in flight: its session, and which of its prompts.
type promptRef struct {
	s   *session
	seq int64
}

// promptIn is a prompt as the backend takes it: its text, and its images
// (and, for a peer backend, its resources and links).
type promptIn struct {
	text   string
	images []protocol.Attachment
}

// promptInput is the prompt as the backend takes it: text, with embedded
// resources as context and resource links as references, and images
// (image blocks, and embedded image blobs) where the backend takes them.
func (a *agent) promptInput(blocks []contentBlock) (promptIn, error) {
	var parts []string
	var in promptIn
	pc, err := a.peerCaps()
	if err != nil {
		return promptIn{}, err
	}
	for _, b := range blocks {
		if pc != nil && b.Type != "text" {
			// An agent behind takes them as they are, where it says so.
			at, err := a.peerBlock(pc, b)
			if err != nil {
				return promptIn{}, err
			}
			in.images = append(in.images, at)
			continue
		}
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "resource_link":
			name := b.Name
			if b.Title != "" {
				name = b.Title
			}
			parts = append(parts, fmt.Sprintf("[@%s](%s)", name, b.URI))
		case "resource":
			r := b.Resource
			switch {
			case r != nil && r.Text != nil:
				parts = append(parts, fmt.Sprintf("<context ref=%q>\n%s\n</context>", r.URI, *r.Text))
			case r != nil && r.Blob != nil && slices.Contains(a.caps.images, r.MimeType):
				at, err := a.image(r.MimeType, *r.Blob)
				if err != nil {
					return promptIn{}, err
				}
				in.images = append(in.images, at)
			default:
				return promptIn{}, errorf(codeInvalidParams, "invalid params: the %s backend takes text resources, and blobs only of the image types %s", a.caps.name, a.imageTypes())
			}
		case "image":
			at, err := a.image(b.MimeType, b.Data)
			if err != nil {
				return promptIn{}, err
			}
			in.images = append(in.images, at)
		case "audio":
			return promptIn{}, errorf(codeInvalidParams, "invalid params: the %s backend takes no audio content (promptCapabilities.audio is false)", a.caps.name)
		default:
			return promptIn{}, errorf(codeInvalidParams, "invalid params: unknown content block type %q", b.Type)
		}
	}
	in.text = strings.Join(parts, "\n")
	if strings.TrimSpace(in.text) == "" && len(in.images) == 0 {
		return promptIn{}, errorf(codeInvalidParams, "invalid params: the prompt is empty")
	}
	return in, nil
}

// peerBlock is a content block for the agent behind a peer backend, as
// an attachment that is passed to it unchanged, or the error naming the
// prompt capability its initialize lacked.
func (a *agent) peerBlock(pc *peerCaps, b contentBlock) (protocol.Attachment, error) {
	lacks := func(what, capability string) error {
		return &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("invalid params: the agent behind agent-host takes no %s: its initialize said %s false", what, capability),
			Data: map[string]string{"capability": capability}}
	}
	switch b.Type {
	case "image":
		if !pc.PromptCapabilities.Image {
			return protocol.Attachment{}, lacks("image content", "promptCapabilities.image")
		}
		return a.image(b.MimeType, b.Data)
	case "audio":
		return protocol.Attachment{}, lacks("audio content", "promptCapabilities.audio")
	case "resource":
		r := b.Resource
		switch {
		case !pc.PromptCapabilities.EmbeddedContext:
			return protocol.Attachment{}, lacks("embedded resources", "promptCapabilities.embeddedContext")
		case r == nil || r.URI == "" || (r.Text == nil) == (r.Blob == nil):
			return protocol.Attachment{}, errorf(codeInvalidParams, "invalid params: a resource has a uri, and text or a blob")
		}
		at := protocol.Attachment{Type: protocol.AttachmentResource, URI: r.URI, MimeType: r.MimeType, Text: r.Text}
		if r.Blob != nil {
			at.Data = *r.Blob
		}
		return at, nil
	case "resource_link":
		if b.URI == "" || b.Name == "" {
			return protocol.Attachment{}, errorf(codeInvalidParams, "invalid params: a resource link has a uri and a name")
		}
		return protocol.Attachment{Type: protocol.AttachmentResourceLink, URI: b.URI, Name: b.Name, Title: b.Title, MimeType: b.MimeType}, nil
	}
	return protocol.Attachment{}, errorf(codeInvalidParams, "invalid params: unknown content block type %q", b.Type)
}

// image is an image of the prompt as the backend takes it, or the error
// saying why it cannot.
func (a *agent) image(mimeType, data string) (protocol.Attachment, error) {
	switch {
	case len(a.caps.images) == 0:
		return protocol.Attachment{}, errorf(codeInvalidParams, "invalid params: the %s backend takes no image content (promptCapabilities.image is false)", a.caps.name)
	case !slices.Contains(a.caps.images, mimeType):
		return protocol.Attachment{}, errorf(codeInvalidParams, "invalid params: the %s backend takes images of type %s, not %q", a.caps.name, a.imageTypes(), mimeType)
	case data == "":
		return protocol.Attachment{}, errorf(codeInvalidParams, "invalid params: an image without data (an image by uri alone is not fetched)")
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil {
		return protocol.Attachment{}, errorf(codeInvalidParams, "invalid params: an image's data is not base64: %v", err)
	}
	return protocol.Attachment{Type: protocol.AttachmentImage, MimeType: mimeType, Data: data}, nil
}

// imageTypes are the image types the backend takes, for messages.
func (a *agent) imageTypes() string {
	if len(a.caps.images) == 0 {
		return "(none)"
	}
	return strings.Join(a.caps.images, ", ")
}

// runPrompt runs one turn, once the session's turn before it has ended:
// its updates, then its stop reason.
func (a *agent) runPrompt(s *session, seq int64, set settings, in promptIn) (any, error) {
	s.mu.Lock()
	if s.isCancelled(seq) {
		delete(s.dropped, seq)
		s.mu.Unlock()
		return promptResult{StopReason: stopCancelled}, nil
	}
	m, model, effort := set.mode, set.model, set.effort
	s.updated = time.Now()
	titled := ""
	if s.title == "" {
		s.title = titleOf(a.caps.said(in.text))
		titled = s.title
	}
	updated := s.updated.UTC().Format(time.RFC3339)
	s.mu.Unlock()
	if titled != "" {
		// The editor's list of sessions shows it at once.
		a.update(s, infoUpdate{SessionUpdate: "session_info_update", Title: titled, UpdatedAt: updated})
	}
	params := protocol.ChatRunParams{ChatID: s.id, Prompt: in.text, Attachments: in.images, Workspace: s.cwd, Level: m.level, Model: model,
		ReasoningEffort: effort, Permissions: protocol.PermissionsGrant, PermissionTimeoutMs: a.opts.PermissionTimeout.Milliseconds(),
		// The person is at the editor: the agent's questions are put to
		// them (a form, or a permission request a question).
		Questions: protocol.QuestionsAsk}
	if m.ask {
		params.Permissions = protocol.PermissionsAsk
	}
	runID := s.id + "." + strconv.FormatInt(seq, 10)
	r, err := a.hc.RunTurn(a.ctx, runID, params)
	if err != nil {
		return nil, hostError(err)
	}
	s.mu.Lock()
	s.run, s.runSeq = r, seq
	cancelled := s.isCancelled(seq)
	s.mu.Unlock()
	if cancelled {
		a.interrupt(s, r)
	}
	t := &turn{a: a, s: s, run: r, ask: m.ask, calls: map[string]*call{}, ended: make(chan struct{})}
	var asks sync.WaitGroup
	asks.Add(1)
	go func() {
		defer asks.Done()
		for q := range r.Asks() {
			asks.Add(1)
			go func() { defer asks.Done(); t.permission(q) }()
		}
	}()
	asks.Add(1)
	go func() {
		defer asks.Done()
		for q := range r.Questions() {
			asks.Add(1)
			go func() { defer asks.Done(); t.question(q) }()
		}
	}()
	for ev := range r.Events() {
		t.event(ev)
	}
	done, werr := r.Wait(a.ctx)
	close(t.ended)
	asks.Wait()
	s.mu.Lock()
	s.run = nil
	cancelled = s.isCancelled(seq)
	delete(s.dropped, seq)
	s.mu.Unlock()
	if cancelled || (done != nil && done.StopReason == protocol.StopInterrupted) {
		a.afterTurn(s, nil)
		return promptResult{StopReason: stopCancelled}, nil
	}
	if werr != nil {
		return nil, hostError(werr)
	}
	a.afterTurn(s, done.Usage)
	if done.StopReason != protocol.StopCompleted {
		return nil, t.failed()
	}
	return promptResult{StopReason: stopEndTurn}, nil
}

// failed is a failed turn's answer: a JSON-RPC error whose data carries
// the host's error code (level_violated: the acp backend's tripwire) and
// its reason, after the calls it left unfinished are shown failed with
// that reason. ACP's stop reasons have none for a turn agentry ended.
func (t *turn) failed() error {
	f := protocol.ErrorInfo{Code: protocol.CodeBackendFailed, Message: "the turn failed"}
	if t.failure != nil {
		f = *t.failure
	}
	t.mu.Lock()
	for _, id := range t.order {
		if c := t.calls[id]; c.reported && !c.final {
			c.final = true
			t.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: statusFailed, RawOutput: f.Message,
				Content: []any{toolContent{Type: "content", Content: text(f.Message)}}})
		}
	}
	t.mu.Unlock()
	return &rpcError{Code: codeInternal, Message: f.Message, Data: map[string]string{"code": f.Code, "message": f.Message}}
}

// afterTurn notes the backend's session for the record kept for
// session/load (written once the turn is answered: remember), and sends
// the session's context use when the backend knows its context window.
func (a *agent) afterTurn(s *session, u *protocol.Usage) {
	ctx, cancel := a.callCtx()
	defer cancel()
	info, err := a.hc.SessionInfo(ctx, s.id)
	if err != nil || info == nil {
		return
	}
	if info.SessionID != "" && a.caps.loads {
		s.mu.Lock()
		s.cli, s.unsaved = info.SessionID, true
		s.mu.Unlock()
	}
	if u == nil || info.ContextWindow <= 0 {
		return
	}
	up := usageUpdate{SessionUpdate: "usage_update", Used: int64(info.ContextTokens), Size: int64(info.ContextWindow)}
	if u != nil && u.CostUSD > 0 {
		up.Cost = &cost{Amount: u.CostUSD, Currency: "USD"}
	}
	a.update(s, up)
}

// turn is one prompt's turn: what has been reported of it.
type turn struct {
	a   *agent
	s   *session
	run *hostclient.Run
	ask bool

	mu       sync.Mutex
	streamed bool // text deltas since the last whole text block
	said     bool // any answer text was sent
	calls    map[string]*call
	order    []string // the calls' ids, as they were made
	failure  *protocol.ErrorInfo
	ended    chan struct{} // closed once the run has ended
}

// call is a tool call as the client has been told of it.
type call struct {
	title    string
	reported bool
	final    bool // completed or failed was sent
	// decided, while the client is asked about the call, is closed when
	// the call has its result first (the host's deadline denied it): the
	// question is withdrawn then, not at the end of the turn.
	decided chan struct{}
}

func (t *turn) call(id string) *call {
	c := t.calls[id]
	if c == nil {
		c = &call{}
		t.calls[id] = c
		t.order = append(t.order, id)
	}
	return c
}

func (t *turn) update(u any) { t.a.update(t.s, u) }

// event turns one agent event into session updates.
func (t *turn) event(ev protocol.AgentEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev.Type {
	case protocol.EvTextDelta:
		if ev.Text != "" {
			t.update(contentChunk{SessionUpdate: "agent_message_chunk", Content: text(ev.Text)})
			t.streamed, t.said = true, true
		}
	case protocol.EvText:
		// A whole block whose deltas were streamed is not sent again.
		if !t.streamed && ev.Text != "" {
			t.update(contentChunk{SessionUpdate: "agent_message_chunk", Content: text(ev.Text)})
			t.said = true
		}
		t.streamed = false
	case protocol.EvThinking:
		if ev.Text != "" {
			t.update(contentChunk{SessionUpdate: "agent_thought_chunk", Content: text(ev.Text)})
		}
	case protocol.EvToolCall:
		v := t.a.describe(ev.Name, ev.Input)
		if raw := sent(ev); raw != nil && !t.call(ev.ToolCallID).reported {
			c := t.call(ev.ToolCallID)
			c.reported, c.title = true, v.Title
			t.update(raw)
			return
		}
		t.toolCall(ev.ToolCallID, ev.Input, v)
		if p, ok := planOf(v); ok {
			t.update(p)
		}
	case protocol.EvToolResult:
		c := t.call(ev.ToolCallID)
		if c.decided != nil {
			close(c.decided)
			c.decided = nil
		}
		if c.final {
			return
		}
		c.final = true
		if raw := sent(ev); raw != nil {
			t.update(raw)
			return
		}
		status := statusCompleted
		if ev.IsError {
			status = statusFailed
		}
		u := toolCall{SessionUpdate: "tool_call_update", ToolCallID: ev.ToolCallID, Status: status, RawOutput: ev.Output}
		if ev.Output != "" {
			u.Content = []any{toolContent{Type: "content", Content: text(ev.Output)}}
		}
		t.update(u)
	case protocol.EvDenied:
		t.denied(ev)
	case protocol.EvPlan:
		if raw := sent(ev); raw != nil {
			t.update(raw)
			return
		}
		t.update(planUpdateOf(ev.Plan))
	case protocol.EvCommands:
		if raw := sent(ev); raw != nil {
			t.sendCommands(raw)
			return
		}
		t.commands(ev.Commands)
	case protocol.EvCompleted:
		if !t.said && ev.Text != "" {
			t.update(contentChunk{SessionUpdate: "agent_message_chunk", Content: text(ev.Text)})
			t.said = true
		}
	case protocol.EvError:
		t.failure = ev.Error
	}
}

// denied shows a call agentry's policy stopped as failed, with the rule
// that stopped it, so that the editor shows why; t.mu is held.
func (t *turn) denied(ev protocol.AgentEvent) {
	id := ev.ToolCallID
	if id == "" {
		id = fmt.Sprintf("denied-%d", len(t.order)+1)
	}
	msg := "Denied by agentry's policy."
	if d := ev.Denial; d != nil {
		msg = fmt.Sprintf("Denied by agentry's policy: rule %s matched `%s`.", d.Rule, d.Match)
		if d.Verdict == "ask" {
			msg = fmt.Sprintf("Denied: agentry's policy rule %s (matched `%s`) has a person decide this, and nobody could be asked.", d.Rule, d.Match)
		}
	}
	c := t.call(id)
	if c.decided != nil {
		close(c.decided)
		c.decided = nil
	}
	if c.final {
		return
	}
	c.final = true
	u := toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: statusFailed, RawOutput: msg,
		Content: []any{toolContent{Type: "content", Content: text(msg)}}}
	if !c.reported {
		c.reported, c.title = true, ev.Name
		u.SessionUpdate, u.Title, u.Kind = "tool_call", ev.Name, "other"
	}
	t.update(u)
}

// sent is the session/update an ACP agent behind the backend sent, which
// the event translates (the acp backend's), or nil: passed on as it is,
// beyond the notification's sessionId, so that what the agent said of a
// plan, its commands and its tool calls (diffs, _meta and all) reaches
// the editor unchanged.
func sent(ev protocol.AgentEvent) json.RawMessage {
	if raw := ev.Extra["acpUpdate"]; len(raw) > 0 && json.Valid(raw) {
		return raw
	}
	return nil
}

// askedWith is the tool call an ACP agent behind the backend asked about,
// as it sent it in its session/request_permission (the acp backend's), or
// nil.
func askedWith(q *protocol.PermissionRequest) json.RawMessage {
	raw := q.Extra["acpToolCall"]
	if len(raw) > 0 && json.Valid(raw) && raw[0] == '{' && q.ToolCallID != "" && gjson.GetBytes(raw, "toolCallId").Str == q.ToolCallID {
		return raw // and its id is the one the editor knows the call by
	}
	return nil
}

// commands sends the backend's slash commands, unless the client has
// them already (a CLI started again for another mode offers the same).
func (t *turn) commands(cs []protocol.Command) {
	u := commandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: []availableCommand{}}
	for _, c := range cs {
		ac := availableCommand{Name: c.Name, Description: c.Description}
		if c.Hint != "" {
			ac.Input = &commandInput{Hint: c.Hint}
		}
		u.AvailableCommands = append(u.AvailableCommands, ac)
	}
	b, _ := json.Marshal(u)
	t.sendCommands(b)
}

// sendCommands sends an available_commands_update, unless it is the one
// the client has.
func (t *turn) sendCommands(b json.RawMessage) {
	t.s.mu.Lock()
	same := string(b) == t.s.commands
	t.s.commands = string(b)
	t.s.mu.Unlock()
	if !same {
		t.update(b)
	}
}

// toolCall reports a call, or, when a permission request reported it
// first, what the agent's own event adds; t.mu is held.
func (t *turn) toolCall(id string, input json.RawMessage, v host.ToolView) {
	c := t.call(id)
	title, kind, locs := v.Title, kindOf(v), locationsOf(v)
	if c.reported {
		if title != c.title { // the agent's input says more than the request's
			c.title = title
			t.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Title: title, Kind: kind, Locations: locs, RawInput: input})
		}
		return
	}
	c.reported, c.title = true, title
	status := statusInProgress
	if t.ask {
		status = statusPending // it may yet be put to the client
	}
	t.update(toolCall{SessionUpdate: "tool_call", ToolCallID: id, Title: title, Kind: kind, Status: status, Locations: locs, RawInput: input,
		Content: diffsOf(v)})
}

// permission puts one permission request to the client, after the call it
// is about has been reported, and answers the host with the client's
// choice. A request the host resolved first (an interrupt, the deadline,
// the run's end) is answered by the host; the client's late answer then
// changes nothing.
func (t *turn) permission(q *protocol.PermissionRequest) {
	id := q.ToolCallID
	if id == "" {
		id = "permission-" + q.RequestID
	}
	v := t.a.describe(q.Tool, q.Input)
	title, kind, locs := v.Title, kindOf(v), locationsOf(v)
	t.mu.Lock()
	c := t.call(id)
	decided := make(chan struct{})
	c.decided = decided
	if !c.reported {
		c.reported, c.title = true, title
		t.update(toolCall{SessionUpdate: "tool_call", ToolCallID: id, Title: title, Kind: kind, Status: statusPending, Locations: locs, RawInput: q.Input,
			Content: diffsOf(v)})
	}
	t.mu.Unlock()
	key := grantKey(q.Tool, v)
	if decision, ok := t.s.granted(key, q.Choices); ok {
		// The person allowed this call for the session already, in an
		// earlier process of its CLI (a mode change started it again):
		// not asked again, and the backend is given the grant anew.
		t.answer(q, c, decided, decision)
		return
	}
	params := permissionParams{SessionID: t.s.id, ToolCall: toolCall{ToolCallID: id, Title: title, Kind: kind, Status: statusPending, Locations: locs,
		RawInput: q.Input, Content: diffsOf(v)}}
	for _, ch := range q.Choices {
		switch ch {
		case protocol.DecisionAllow:
			params.Options = append(params.Options, permissionOption{OptionID: optAllow, Name: "Allow", Kind: "allow_once"})
		case protocol.DecisionAllowSession:
			params.Options = append(params.Options, permissionOption{OptionID: optAllowSession, Name: "Allow for this session", Kind: "allow_always"})
		case protocol.DecisionDeny:
			params.Options = append(params.Options, permissionOption{OptionID: optReject, Name: "Reject", Kind: "reject_once"})
		}
	}
	var req any = params // with its options
	if raw := askedWith(q); raw != nil {
		// An ACP agent's own request: the editor is asked with its tool
		// call as the agent sent it, every field kept.
		req = permissionAsSent{SessionID: t.s.id, ToolCall: raw, Options: params.Options}
	}
	answer, giveUp := t.a.w.request("session/request_permission", req)
	var decision string
	message := "The user rejected this tool call."
	select {
	case m, ok := <-answer:
		// No answer (the client is gone, or the input ended): rejected,
		// so that the turn goes on rather than waiting for the deadline,
		// and the agent told why.
		decision = protocol.DecisionDeny
		if ok {
			decision = decisionOf(m)
		} else {
			message = "Nobody can answer: the editor's input has ended."
		}
	case <-t.ended:
		giveUp() // the client is told to drop its question
		return
	case <-decided:
		giveUp()
		return
	}
	if decision == protocol.DecisionAllowSession {
		t.s.grant(key)
	}
	t.answerWith(q, c, decided, decision, message)
}

// answer tells the client the call's fate and answers the host with the
// decision.
func (t *turn) answer(q *protocol.PermissionRequest, c *call, decided chan struct{}, decision string) {
	t.answerWith(q, c, decided, decision, "The user rejected this tool call.")
}

// answerWith is answer, with what the agent is told of a denial.
func (t *turn) answerWith(q *protocol.PermissionRequest, c *call, decided chan struct{}, decision, denied string) {
	id := q.ToolCallID
	if id == "" {
		id = "permission-" + q.RequestID
	}
	a := hostclient.Answer{Decision: decision}
	if decision == protocol.DecisionDeny {
		a.Message = denied
	}
	// The client hears of its choice before the backend acts on it, so
	// in_progress never follows the call's result. A denial is failed
	// however the request ends (the host only ever denies by itself); an
	// allowed call the host had denied first gets its failed result from
	// the backend.
	t.mu.Lock()
	if c.decided == decided {
		c.decided = nil
	}
	if !c.final {
		if decision == protocol.DecisionDeny {
			c.final = true
			t.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: statusFailed, RawOutput: a.Message,
				Content: []any{toolContent{Type: "content", Content: text(a.Message)}}})
		} else {
			t.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: statusInProgress})
		}
	}
	t.mu.Unlock()
	ctx, cancel := t.a.callCtx()
	defer cancel()
	_ = t.a.hc.AnswerPermission(ctx, t.run.ID, q.RequestID, a) // an error: resolved already, the host's word stands
}

// grantKey is what an allow-for-session grant of the call is kept under:
// the tool, and what the call does as its backend describes it (the
// command it runs, the file it edits), never more than the person saw.
func grantKey(tool string, v host.ToolView) string {
	return strings.Join(append([]string{tool, v.Kind, v.Title}, v.Paths...), "\x00")
}

// granted is the decision for a call allowed for the session before, if it
// was and the backend offers allowing it: allow_session, so that the
// backend keeps the grant from now on too, else allow.
func (s *session) granted(key string, choices []string) (string, bool) {
	s.mu.Lock()
	ok := s.grants[key]
	s.mu.Unlock()
	switch {
	case !ok:
		return "", false
	case slices.Contains(choices, protocol.DecisionAllowSession):
		return protocol.DecisionAllowSession, true
	case slices.Contains(choices, protocol.DecisionAllow):
		return protocol.DecisionAllow, true
	}
	return "", false
}

// grant keeps a call the person allowed for the session, for as long as
// the session lives, whatever becomes of the backend's process.
func (s *session) grant(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grants == nil {
		s.grants = map[string]bool{}
	}
	s.grants[key] = true
}

// The permission options this face offers.
const (
	optAllow        = "allow"
	optAllowSession = "allow_session"
	optReject       = "reject"
)

// decisionOf is the host's decision for the client's answer: a cancelled
// outcome, an error or anything unknown is a denial.
func decisionOf(m *incoming) string {
	if m.Error != nil || m.Result == nil {
		return protocol.DecisionDeny
	}
	var r permissionResult
	if json.Unmarshal(m.Result, &r) != nil || r.Outcome.Outcome != "selected" {
		return protocol.DecisionDeny
	}
	switch r.Outcome.OptionID {
	case optAllow:
		return protocol.DecisionAllow
	case optAllowSession:
		return protocol.DecisionAllowSession
	}
	return protocol.DecisionDeny
}
