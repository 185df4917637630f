package protocol

import (
	"encoding/json"
	"reflect"
	"sync"
)

// ChatRunParams are the parameters of one chat turn.
type ChatRunParams struct {
	ChatID string `json:"chatId"`
	Prompt string `json:"prompt"`
	// Workspace is the directory the agent works in.
	Workspace    string `json:"workspace,omitempty"`
	Model        string `json:"model,omitempty"`
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// Level is the permission level (1, 2 or 3) for backends that grant
	// tools; 0 means the backend's default.
	Level int `json:"level,omitempty"`
	// ReasoningEffort is "low", "medium" or "high", where supported.
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// Options are backend-specific, passed through untouched.
	Options json.RawMessage `json:"options,omitempty"`
	// Permissions "ask" has the host send a permission_request for every
	// tool call the level's grant does not already allow; "grant" (or
	// absent) lets the grant decide alone.
	Permissions string `json:"permissions,omitempty"`
	// PermissionTimeoutMs is how long a permission request waits for the
	// daemon's answer before it is denied, and a question request before
	// the agent is told there is no answer (default 60000).
	PermissionTimeoutMs int64 `json:"permissionTimeoutMs,omitempty"`
	// Attachments go to the model with the prompt; only backends that
	// take them accept a run with any (the host refuses it otherwise).
	Attachments []Attachment `json:"attachments,omitempty"`
	// Questions "ask" has the host put the agent's questions to a person
	// (AskUserQuestion, codex's request for user input, an ACP agent's
	// elicitation) as question messages, answered with answer_question;
	// absent, the agent is told nobody is there to answer (never a made-up
	// choice).
	Questions string `json:"questions,omitempty"`
	// Policy is a policy document (agentry-policy(5)) that narrows this
	// run's level; it applies beside the host's own --policy, never
	// instead of it.
	Policy string `json:"policy,omitempty"`
}

// Attachment is something given to the model beside the prompt's text:
// an image, its bytes base64-encoded; or, for a backend that takes them
// (host.ResourceTaker: the acp backend), a resource (its URI and its text
// or its bytes) or a link to one (its URI and name), as ACP's content
// blocks of those types.
type Attachment struct {
	// Type is AttachmentImage, AttachmentResource or AttachmentResourceLink.
	Type     string `json:"type"`
	MimeType string `json:"mimeType,omitempty"`
	// Data is the content, base64 (standard encoding, padded): an
	// image's, or a resource's that is not text.
	Data string `json:"data,omitempty"`
	// URI is a resource's, or a link's.
	URI string `json:"uri,omitempty"`
	// Name is a link's name (required), Title its title.
	Name  string `json:"name,omitempty"`
	Title string `json:"title,omitempty"`
	// Text is a text resource's content.
	Text *string `json:"text,omitempty"`
}

// Attachment types.
const (
	AttachmentImage        = "image"
	AttachmentResource     = "resource"
	AttachmentResourceLink = "resource_link"
)

// Values of ChatRunParams.Permissions.
const (
	PermissionsGrant = "grant"
	PermissionsAsk   = "ask"
)

// QuestionsAsk is the value of ChatRunParams.Questions that has the
// agent's questions put to the daemon.
const QuestionsAsk = "ask"

// OneShotParams are the parameters of one background run.
type OneShotParams struct {
	Prompt          string `json:"prompt"`
	SystemPrompt    string `json:"systemPrompt,omitempty"`
	Workspace       string `json:"workspace,omitempty"`
	Model           string `json:"model,omitempty"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// ContextLabel names the run in logs, such as "heartbeat".
	ContextLabel string `json:"contextLabel,omitempty"`
}

// Usage is what a run cost.
type Usage struct {
	InputTokens      int64   `json:"inputTokens"`
	OutputTokens     int64   `json:"outputTokens"`
	CacheReadTokens  int64   `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64   `json:"cacheWriteTokens,omitempty"`
	CostUSD          float64 `json:"costUsd,omitempty"`
	DurationMs       int64   `json:"durationMs,omitempty"`
	Extra            Extra   `json:"-"` // counters this version does not know
}

// The field names of the payloads that keep unknown fields; read-only.
var (
	usageFields      = sync.OnceValue(func() map[string]bool { return known(reflect.TypeFor[Usage]()) })
	agentEventFields = sync.OnceValue(func() map[string]bool { return known(reflect.TypeFor[AgentEvent]()) })
)

func (u Usage) MarshalJSON() ([]byte, error) {
	type plain Usage
	return marshalExtra(plain(u), u.Extra)
}

func (u *Usage) UnmarshalJSON(b []byte) (err error) {
	type plain Usage
	u.Extra, err = unmarshalExtra(b, (*plain)(u), usageFields())
	return err
}

// PlanUsage is the subscription's rate-limit windows.
type PlanUsage struct {
	Windows []UsageWindow `json:"windows"`
}

// UsageWindow is one rate-limit window.
type UsageWindow struct {
	Name        string  `json:"name"`
	UsedPercent float64 `json:"usedPercent"`
	ResetsAt    string  `json:"resetsAt,omitempty"`
}

// ModelInfo describes one model of the catalog.
type ModelInfo struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	ContextWindow int    `json:"contextWindow,omitempty"`
	Free          bool   `json:"free,omitempty"`
}

// SessionInfo is what the host knows of a chat's session.
type SessionInfo struct {
	ChatID        string `json:"chatId"`
	SessionID     string `json:"sessionId,omitempty"`
	Turns         int    `json:"turns"`
	ContextTokens int    `json:"contextTokens"`
	ContextWindow int    `json:"contextWindow"`
}

// AgentEvent is one event of a run. Type says which fields are set:
//
//	run_started  model, sessionId (when known)
//	text_delta   text: a piece of the answer as it streams
//	text         text: a whole text block
//	thinking     text
//	tool_call    toolCallId, name, input
//	tool_result  toolCallId, output, isError
//	usage        usage
//	plan         plan: the agent's plan, whole; text: why it changed
//	commands     commands: the slash commands the agent's CLI offers
//	completed    text (the answer), usage, sessionId
//	error        error
//
// A run's events are run_started first, then deltas and tool events, then
// exactly one of completed or error.
type AgentEvent struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Name       string          `json:"name,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     string          `json:"output,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	Usage      *Usage          `json:"usage,omitempty"`
	Error      *ErrorInfo      `json:"error,omitempty"`
	Model      string          `json:"model,omitempty"`
	SessionID  string          `json:"sessionId,omitempty"`
	Plan       []PlanStep      `json:"plan,omitempty"`
	Commands   []Command       `json:"commands,omitempty"`
	// Denial is what a denied event says: the policy rule that stopped a
	// tool call.
	Denial *Denial `json:"denial,omitempty"`
	// Extra keeps the fields this version does not know — of a new event
	// type, or new on a known one — so a daemon that forwards an event
	// forwards all of it.
	Extra Extra `json:"-"`
}

func (e AgentEvent) MarshalJSON() ([]byte, error) {
	type plain AgentEvent
	return marshalExtra(plain(e), e.Extra)
}

func (e *AgentEvent) UnmarshalJSON(b []byte) (err error) {
	type plain AgentEvent
	e.Extra, err = unmarshalExtra(b, (*plain)(e), agentEventFields())
	return err
}

// Agent event types.
const (
	EvRunStarted = "run_started"
	EvTextDelta  = "text_delta"
	EvText       = "text"
	EvThinking   = "thinking"
	EvToolCall   = "tool_call"
	EvToolResult = "tool_result"
	EvUsage      = "usage"
	EvPlan       = "plan"
	EvCommands   = "commands"
	EvDenied     = "denied"
	EvCompleted  = "completed"
	EvError      = "error"
)

// EventTypes lists the agent event types.
func EventTypes() []string {
	return []string{EvRunStarted, EvTextDelta, EvText, EvThinking, EvToolCall, EvToolResult, EvUsage, EvPlan, EvCommands, EvDenied, EvCompleted, EvError}
}

// Denial is a tool call a policy stopped (event denied, with the call's
// toolCallId and tool name beside it).
type Denial struct {
	// Rule is the rule that matched, as the policy file wrote it, with
	// where: "commands.deny \"git push*\" (policy.toml:3)".
	Rule string `json:"rule"`
	// Match is what the rule matched: one command of the line (as argv,
	// joined), or a path relative to the working copy, or a host.
	Match string `json:"match"`
	// Verdict is "deny", or "ask" when the rule asked and nobody could
	// answer.
	Verdict string `json:"verdict"`
}

// Question is one question an agent puts to a person.
type Question struct {
	// ID names the question within its request: the agent's own id
	// where it gives one, else its header, else "q1", "q2" ….
	ID       string `json:"id"`
	Header   string `json:"header,omitempty"`
	Question string `json:"question"`
	// Options are the choices; none means a free answer.
	Options     []QuestionOption `json:"options,omitempty"`
	MultiSelect bool             `json:"multiSelect,omitempty"`
}

// QuestionOption is one choice of a question.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// PlanStep is one step of an agent's plan.
type PlanStep struct {
	Step   string `json:"step"`
	Status string `json:"status"` // PlanPending, PlanInProgress, PlanCompleted
}

// Command is a slash command an agent's CLI offers: a prompt of
// "/name args" runs it.
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Hint says what arguments it takes, if any.
	Hint string `json:"hint,omitempty"`
}

// Statuses of a plan step.
const (
	PlanPending    = "pending"
	PlanInProgress = "in_progress"
	PlanCompleted  = "completed"
)

// Terminal reports whether an event ends its run.
func (e *AgentEvent) Terminal() bool { return e.Type == EvCompleted || e.Type == EvError }
