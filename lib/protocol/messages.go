package protocol

import (
	"encoding/json"
	"errors"
)

// Msg is one parsed line of protocol v1: a request, a reply, an event, a
// notice, or an *Unknown or *BadMessage for a line that is none of those.
type Msg interface {
	MsgType() string
}

// Extra holds the fields of a message that its type does not define. They
// are kept on parse and written back out, so a peer that knows a newer,
// additive revision of v1 loses nothing passing through an older one.
type Extra map[string]json.RawMessage

// ── Daemon → host requests ──────────────────────────────────────────────

// Hello is the handshake; it must come first.
type Hello struct {
	ID       string          `json:"id"`
	Protocol int             `json:"protocol"`
	Daemon   string          `json:"daemon,omitempty"`
	Config   json.RawMessage `json:"config,omitempty"`
	Extra    Extra           `json:"-"`
}

// RunTurn starts one chat turn as run RunID.
type RunTurn struct {
	ID     string        `json:"id"`
	RunID  string        `json:"runId"`
	Params ChatRunParams `json:"params"`
	Extra  Extra         `json:"-"`
}

// Interrupt stops the chat's running turn — only run RunID's when given.
type Interrupt struct {
	ID     string `json:"id"`
	ChatID string `json:"chatId"`
	RunID  string `json:"runId,omitempty"`
	Extra  Extra  `json:"-"`
}

// OneShot starts one background run, outside any chat.
type OneShot struct {
	ID     string        `json:"id"`
	RunID  string        `json:"runId"`
	Params OneShotParams `json:"params"`
	Extra  Extra         `json:"-"`
}

// WarmSession primes a chat's backend before its first turn.
type WarmSession struct {
	ID     string `json:"id"`
	ChatID string `json:"chatId"`
	Extra  Extra  `json:"-"`
}

// SetMCPServers installs a chat's MCP server set, by name.
type SetMCPServers struct {
	ID      string                     `json:"id"`
	ChatID  string                     `json:"chatId"`
	Servers map[string]json.RawMessage `json:"servers"`
	Extra   Extra                      `json:"-"`
}

// RefreshTools re-derives a chat's tools from its MCP servers.
type RefreshTools struct {
	ID     string `json:"id"`
	ChatID string `json:"chatId"`
	Extra  Extra  `json:"-"`
}

// ListModels asks for the model catalog; Filter is "free" or "all".
type ListModels struct {
	ID     string `json:"id"`
	Filter string `json:"filter,omitempty"`
	Extra  Extra  `json:"-"`
}

// PlanUsageReq asks for the subscription's rate-limit windows.
type PlanUsageReq struct {
	ID    string `json:"id"`
	Extra Extra  `json:"-"`
}

// SessionInfoReq asks what the host knows of a chat's session.
type SessionInfoReq struct {
	ID     string `json:"id"`
	ChatID string `json:"chatId"`
	Extra  Extra  `json:"-"`
}

// ResetSession drops the host's state for a chat.
type ResetSession struct {
	ID     string `json:"id"`
	ChatID string `json:"chatId"`
	Extra  Extra  `json:"-"`
}

// Shutdown drains the host: no new runs, in-flight runs finish, then bye.
type Shutdown struct {
	ID string `json:"id"`
	// DrainMs, when given, replaces the host's drain timeout for this
	// shutdown: 0 interrupts the runs in flight at once.
	DrainMs *int64 `json:"drainMs,omitempty"`
	Extra   Extra  `json:"-"`
}

// AnswerPermission answers the permission_request RequestID of run RunID:
// allow (once), allow_session (this and the same call again, for the rest
// of the chat's session, where the backend can), or deny. Input, with
// allow, replaces the tool's input; Message, with deny, is what the model
// is told.
type AnswerPermission struct {
	ID        string          `json:"id"`
	RunID     string          `json:"runId"`
	RequestID string          `json:"requestId"`
	Decision  string          `json:"decision"`
	Input     json.RawMessage `json:"input,omitempty"`
	Message   string          `json:"message,omitempty"`
	Extra     Extra           `json:"-"`
}

// Permission decisions.
const (
	DecisionAllow        = "allow"
	DecisionAllowSession = "allow_session"
	DecisionDeny         = "deny"
)

// AnswerQuestion answers the question request RequestID of run RunID:
// Answers maps each question's id to the labels chosen (one for a
// single-choice question; a free answer is its text); Decline says the
// person will not answer, which the agent is told as such.
type AnswerQuestion struct {
	ID        string              `json:"id"`
	RunID     string              `json:"runId"`
	RequestID string              `json:"requestId"`
	Answers   map[string][]string `json:"answers,omitempty"`
	Decline   bool                `json:"decline,omitempty"`
	Extra     Extra               `json:"-"`
}

// ErrAnswersShape is why an answer_question's answers do not parse.
const ErrAnswersShape = "answers: each question's answer is a label or a list of labels"

// UnmarshalJSON takes a question's answer as a list of labels or as one
// bare label (a list of one once parsed, so it encodes as a list).
func (a *AnswerQuestion) UnmarshalJSON(b []byte) error {
	type plain AnswerQuestion
	var v struct {
		*plain
		Answers json.RawMessage `json:"answers,omitempty"`
	}
	v.plain = (*plain)(a)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	a.Answers = nil
	if len(v.Answers) == 0 || string(v.Answers) == "null" {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v.Answers, &raw); err != nil {
		return errors.New(ErrAnswersShape)
	}
	a.Answers = make(map[string][]string, len(raw))
	for id, r := range raw {
		var one string
		if json.Unmarshal(r, &one) == nil && r[0] == '"' {
			a.Answers[id] = []string{one}
			continue
		}
		var list []string
		if r[0] != '[' || json.Unmarshal(r, &list) != nil {
			return errors.New(ErrAnswersShape)
		}
		a.Answers[id] = list
	}
	return nil
}

// Ping asks for an ok, to tell that the host is alive.
type Ping struct {
	ID    string `json:"id"`
	Extra Extra  `json:"-"`
}

// ── Host → daemon replies ───────────────────────────────────────────────

// Ready answers hello.
type Ready struct {
	ID       string `json:"id"`
	Protocol int    `json:"protocol"`
	Host     string `json:"host"`
	// Backend names the backend; SDK is its version, when it has one.
	Backend string `json:"backend,omitempty"`
	SDK     string `json:"sdk,omitempty"`
	// Instance is new on every start of the host.
	Instance string `json:"instance"`
	Limits   Limits `json:"limits"`
	Extra    Extra  `json:"-"`
}

// Limits are what the host accepts.
type Limits struct {
	MaxLineBytes      int `json:"maxLineBytes"`
	MaxConcurrentRuns int `json:"maxConcurrentRuns"`
}

// OK answers interrupt, warm_session, set_mcp_servers, refresh_tools,
// reset_session and ping.
type OK struct {
	ID          string       `json:"id"`
	Interrupted *bool        `json:"interrupted,omitempty"`
	Tools       *ToolRefresh `json:"tools,omitempty"`
	Cleared     *bool        `json:"cleared,omitempty"`
	Extra       Extra        `json:"-"`
}

// ToolRefresh is what changed in a chat's tools.
type ToolRefresh struct {
	Added   []string          `json:"added"`
	Removed []string          `json:"removed"`
	Errors  map[string]string `json:"errors"`
}

// RunDone ends every run that started, whatever its outcome.
type RunDone struct {
	ID         string `json:"id"`
	RunID      string `json:"runId"`
	StopReason string `json:"stopReason,omitempty"`
	Events     int    `json:"events"`
	Usage      *Usage `json:"usage,omitempty"`
	Extra      Extra  `json:"-"`
}

// Stop reasons of run_done.
const (
	StopCompleted   = "completed"
	StopInterrupted = "interrupted"
	StopError       = "error"
	StopLost        = "lost" // the host died; only a client says this
)

// Error answers a request that failed; for run_turn and one_shot it means
// no run started.
type Error struct {
	ID    string    `json:"id"`
	Error ErrorInfo `json:"error"`
	Extra Extra     `json:"-"`
}

// ErrorInfo is an error's code, text and whether trying again may work.
type ErrorInfo struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

func (e *ErrorInfo) Error() string { return e.Code + ": " + e.Message }

// Error codes.
const (
	CodeBadRequest         = "bad_request"
	CodeNotReady           = "not_ready"
	CodeProtocolMismatch   = "protocol_mismatch"
	CodeBusy               = "busy"
	CodeDuplicateID        = "duplicate_id"
	CodeUnknownType        = "unknown_type"
	CodeUnknownChat        = "unknown_chat"
	CodeUnsupported        = "unsupported"
	CodeBackendUnavailable = "backend_unavailable"
	CodeBackendFailed      = "backend_failed"
	CodeInterrupted        = "interrupted"
	CodeShuttingDown       = "shutting_down"
	CodeTooLong            = "too_long"
	CodeInternal           = "internal"
	CodeUnknownRequest     = "unknown_request"
)

// ErrorCodes lists every error code, in documentation order.
func ErrorCodes() []string {
	return []string{CodeBadRequest, CodeNotReady, CodeProtocolMismatch, CodeBusy, CodeDuplicateID,
		CodeUnknownType, CodeUnknownChat, CodeUnsupported, CodeBackendUnavailable, CodeBackendFailed,
		CodeInterrupted, CodeShuttingDown, CodeTooLong, CodeInternal, CodeUnknownRequest}
}

// Models answers list_models.
type Models struct {
	ID     string      `json:"id"`
	Models []ModelInfo `json:"models"`
	Total  int         `json:"total"`
	Extra  Extra       `json:"-"`
}

// UsageReply answers plan_usage; Usage is absent when the backend cannot
// know it.
type UsageReply struct {
	ID    string     `json:"id"`
	Usage *PlanUsage `json:"usage,omitempty"`
	Extra Extra      `json:"-"`
}

// Session answers session_info; Session is absent for a chat the host does
// not know.
type Session struct {
	ID      string       `json:"id"`
	Session *SessionInfo `json:"session,omitempty"`
	Extra   Extra        `json:"-"`
}

// Bye answers shutdown, as the host's last line; after the end of input
// or a signal it has no id.
type Bye struct {
	ID    string `json:"id,omitempty"`
	Extra Extra  `json:"-"`
}

// ── Streamed and unsolicited ────────────────────────────────────────────

// Event is one event of a run; Seq counts 1, 2, 3 … within the run.
type Event struct {
	RunID string     `json:"runId"`
	Seq   int        `json:"seq"`
	Event AgentEvent `json:"event"`
	Extra Extra      `json:"-"`
}

// PermissionRequest asks the daemon whether the agent of run RunID may
// make a tool call the grant does not already allow (a run that opted in
// with params.permissions "ask"). The daemon answers with
// answer_permission within TimeoutMs, or the call is denied.
type PermissionRequest struct {
	RunID     string `json:"runId"`
	RequestID string `json:"requestId"`
	Tool      string `json:"tool"`
	// Input is the tool's input as the agent gave it: any JSON.
	Input json.RawMessage `json:"input"`
	// Description is the backend's own words for the call, when it has any.
	Description string `json:"description,omitempty"`
	// ToolCallID is the tool_call event's id for the same call, when the
	// backend knows it.
	ToolCallID string `json:"toolCallId,omitempty"`
	// Choices are the decisions the backend can carry out.
	Choices   []string `json:"choices"`
	TimeoutMs int64    `json:"timeoutMs"`
	Extra     Extra    `json:"-"`
}

// PermissionResolved says how a permission request ended, exactly once
// for each: By is "daemon" (its answer_permission), "timeout", "interrupt"
// (the run was interrupted), "shutdown" (the host is stopping),
// "run_ended" (the run ended while it was pending) or "input_ended" (the
// host's input ended: no answer can come).
type PermissionResolved struct {
	RunID     string `json:"runId"`
	RequestID string `json:"requestId"`
	Decision  string `json:"decision"`
	By        string `json:"by"`
	Extra     Extra  `json:"-"`
}

// Who resolved a permission request.
const (
	ResolvedByDaemon    = "daemon"
	ResolvedByTimeout   = "timeout"
	ResolvedByInterrupt = "interrupt"
	ResolvedByShutdown  = "shutdown"
	ResolvedByRunEnded  = "run_ended"
	ResolvedByInputEnd  = "input_ended"
)

// QuestionRequest puts questions of run RunID's agent to the daemon (a
// run with params.questions "ask"): answer_question within TimeoutMs, or
// the agent is told there was no answer.
type QuestionRequest struct {
	RunID      string     `json:"runId"`
	RequestID  string     `json:"requestId"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Questions  []Question `json:"questions"`
	TimeoutMs  int64      `json:"timeoutMs"`
	Extra      Extra      `json:"-"`
}

// QuestionResolved says how a question request ended, exactly once for
// each: Answered, By as for permission_resolved.
type QuestionResolved struct {
	RunID     string `json:"runId"`
	RequestID string `json:"requestId"`
	Answered  bool   `json:"answered"`
	By        string `json:"by"`
	Extra     Extra  `json:"-"`
}

// Log is the host's own logging.
type Log struct {
	Level     string `json:"level"`
	Component string `json:"component"`
	Msg       string `json:"msg"`
	Extra     Extra  `json:"-"`
}

// Metric is one measurement.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Extra Extra   `json:"-"`
}

// ── Lines that are not messages ─────────────────────────────────────────

// Unknown is a line that is not a v1 message, with the reason (one of the
// Reason constants) and the line itself. ID is the line's "id" when it is
// an object with a string one, so that it can still be answered.
type Unknown struct {
	Reason string
	Type   string
	ID     string
	// Raw is the line, or its first MaxRaw bytes: Cut says how many more
	// it had.
	Raw []byte
	Cut int
}

// BadMessage is a known type whose fields are missing or of the wrong type.
type BadMessage struct {
	Type string
	ID   string
	Err  string
	Raw  []byte // as Unknown's
	Cut  int
}

// MaxRaw is the most of a line that is not a message Parse keeps: enough
// to report it, not a copy of a line as long as the line cap.
const MaxRaw = 64 << 10

func (*Hello) MsgType() string              { return "hello" }
func (*RunTurn) MsgType() string            { return "run_turn" }
func (*Interrupt) MsgType() string          { return "interrupt" }
func (*OneShot) MsgType() string            { return "one_shot" }
func (*WarmSession) MsgType() string        { return "warm_session" }
func (*SetMCPServers) MsgType() string      { return "set_mcp_servers" }
func (*RefreshTools) MsgType() string       { return "refresh_tools" }
func (*ListModels) MsgType() string         { return "list_models" }
func (*PlanUsageReq) MsgType() string       { return "plan_usage" }
func (*SessionInfoReq) MsgType() string     { return "session_info" }
func (*ResetSession) MsgType() string       { return "reset_session" }
func (*Shutdown) MsgType() string           { return "shutdown" }
func (*Ping) MsgType() string               { return "ping" }
func (*AnswerPermission) MsgType() string   { return "answer_permission" }
func (*PermissionRequest) MsgType() string  { return "permission_request" }
func (*PermissionResolved) MsgType() string { return "permission_resolved" }
func (*AnswerQuestion) MsgType() string     { return "answer_question" }
func (*QuestionRequest) MsgType() string    { return "question" }
func (*QuestionResolved) MsgType() string   { return "question_resolved" }
func (*Ready) MsgType() string              { return "ready" }
func (*OK) MsgType() string                 { return "ok" }
func (*RunDone) MsgType() string            { return "run_done" }
func (*Error) MsgType() string              { return "error" }
func (*Models) MsgType() string             { return "models" }
func (*UsageReply) MsgType() string         { return "usage" }
func (*Session) MsgType() string            { return "session" }
func (*Bye) MsgType() string                { return "bye" }
func (*Event) MsgType() string              { return "event" }
func (*Log) MsgType() string                { return "log" }
func (*Metric) MsgType() string             { return "metric" }
func (*Unknown) MsgType() string            { return "unknown" }
func (*BadMessage) MsgType() string         { return "bad" }

// newMsg returns a zero message of a v1 type.
func newMsg(typ string) Msg {
	switch typ {
	case "hello":
		return &Hello{}
	case "run_turn":
		return &RunTurn{}
	case "interrupt":
		return &Interrupt{}
	case "one_shot":
		return &OneShot{}
	case "warm_session":
		return &WarmSession{}
	case "set_mcp_servers":
		return &SetMCPServers{}
	case "refresh_tools":
		return &RefreshTools{}
	case "list_models":
		return &ListModels{}
	case "plan_usage":
		return &PlanUsageReq{}
	case "session_info":
		return &SessionInfoReq{}
	case "reset_session":
		return &ResetSession{}
	case "shutdown":
		return &Shutdown{}
	case "ping":
		return &Ping{}
	case "answer_permission":
		return &AnswerPermission{}
	case "permission_request":
		return &PermissionRequest{}
	case "permission_resolved":
		return &PermissionResolved{}
	case "answer_question":
		return &AnswerQuestion{}
	case "question":
		return &QuestionRequest{}
	case "question_resolved":
		return &QuestionResolved{}
	case "ready":
		return &Ready{}
	case "ok":
		return &OK{}
	case "run_done":
		return &RunDone{}
	case "error":
		return &Error{}
	case "models":
		return &Models{}
	case "usage":
		return &UsageReply{}
	case "session":
		return &Session{}
	case "bye":
		return &Bye{}
	case "event":
		return &Event{}
	case "log":
		return &Log{}
	case "metric":
		return &Metric{}
	}
	return nil
}
