package codex

// The app-server messages this backend sends: the subset of codex's own
// schema (`codex app-server generate-json-schema`) that it uses. The
// schema files in testdata/schema are the pinned CLI's; wire_test.go checks
// these types against them.

import "encoding/json"

type initializeParams struct {
	ClientInfo clientInfo `json:"clientInfo"`
}

type clientInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type threadStartParams struct {
	Cwd                   string         `json:"cwd,omitempty"`
	ApprovalPolicy        string         `json:"approvalPolicy,omitempty"`
	Sandbox               string         `json:"sandbox,omitempty"`
	Model                 string         `json:"model,omitempty"`
	DeveloperInstructions string         `json:"developerInstructions,omitempty"`
	Config                map[string]any `json:"config,omitempty"`
	Ephemeral             bool           `json:"ephemeral,omitempty"` // not kept: no rollout
}

// threadResumeParams: ExcludeTurns, because the host needs none of the
// thread's history back (and full hydration is deprecated).
type threadResumeParams struct {
	ThreadID              string         `json:"threadId"`
	ExcludeTurns          bool           `json:"excludeTurns,omitempty"`
	Cwd                   string         `json:"cwd,omitempty"`
	ApprovalPolicy        string         `json:"approvalPolicy,omitempty"`
	Sandbox               string         `json:"sandbox,omitempty"`
	Model                 string         `json:"model,omitempty"`
	DeveloperInstructions string         `json:"developerInstructions,omitempty"`
	Config                map[string]any `json:"config,omitempty"`
}

type turnStartParams struct {
	ThreadID       string      `json:"threadId"`
	Input          []userInput `json:"input"`
	ApprovalPolicy string      `json:"approvalPolicy,omitempty"`
	Model          string      `json:"model,omitempty"`
	Effort         string      `json:"effort,omitempty"`
}

// userInput is a text input, or an image given as a data: URL.
type userInput struct {
	Type string
	Text string
	URL  string
}

// MarshalJSON writes a text input's text, even empty, and an image's url.
func (u userInput) MarshalJSON() ([]byte, error) {
	if u.Type == "image" {
		return json.Marshal(struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		}{u.Type, u.URL})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{u.Type, u.Text})
}

// threadForkParams: a new thread with the history of ThreadID.
type threadForkParams struct {
	ThreadID              string         `json:"threadId"`
	Cwd                   string         `json:"cwd,omitempty"`
	ApprovalPolicy        string         `json:"approvalPolicy,omitempty"`
	Sandbox               string         `json:"sandbox,omitempty"`
	Model                 string         `json:"model,omitempty"`
	DeveloperInstructions string         `json:"developerInstructions,omitempty"`
	Config                map[string]any `json:"config,omitempty"`
}

type threadUnsubscribeParams struct {
	ThreadID string `json:"threadId"`
}

// threadSetNameParams names a thread; codex writes a thread's rollout
// file then if it has none yet (else at its first turn).
type threadSetNameParams struct {
	ThreadID string `json:"threadId"`
	Name     string `json:"name"`
}

type turnInterruptParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
}

// approvalResponse answers item/commandExecution/requestApproval and
// item/fileChange/requestApproval.
type approvalResponse struct {
	Decision string `json:"decision"`
}

// threadInjectItemsParams appends Responses API items to a thread's
// history: the model reads them at its next request.
type threadInjectItemsParams struct {
	ThreadID string `json:"threadId"`
	Items    []any  `json:"items"`
}

// questionResponse answers item/tool/requestUserInput: each question's
// id → its answers (labels chosen, or free text). codex gives the model
// this object as the tool's output.
type questionResponse struct {
	Answers map[string]questionAnswer `json:"answers"`
}

type questionAnswer struct {
	Answers []string `json:"answers"`
}

// Approval policies and decisions.
const (
	policyNever     = "never"     // nothing is asked: the sandbox decides
	policyUntrusted = "untrusted" // every command outside codex's trusted set is asked

	decisionAccept           = "accept"
	decisionAcceptForSession = "acceptForSession"
	decisionDecline          = "decline" // the turn goes on
	decisionCancel           = "cancel"  // the turn ends, interrupted
)
