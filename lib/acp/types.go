package acp

import "encoding/json"

// The ACP v1 types this face reads and writes: its own, checked against
// the official schema (testdata/schema.json, from @agentclientprotocol/sdk
// 2.4.0) in types_test.go. Only what the face uses is here.

// ProtocolVersion is the ACP version spoken.
const ProtocolVersion = 1

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type initializeParams struct {
	ProtocolVersion    *int            `json:"protocolVersion"`
	ClientInfo         *implementation `json:"clientInfo"`
	ClientCapabilities struct {
		// Elicitation.Form set: the client takes elicitation/create forms.
		Elicitation *struct {
			Form *struct{} `json:"form"`
		} `json:"elicitation"`
	} `json:"clientCapabilities"`
}

type initializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AuthMethods       []authMethod      `json:"authMethods"`
	AgentInfo         *implementation   `json:"agentInfo,omitempty"`
}

type authMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type agentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	PromptCapabilities  promptCapabilities  `json:"promptCapabilities"`
	MCPCapabilities     mcpCapabilities     `json:"mcpCapabilities"`
	SessionCapabilities sessionCapabilities `json:"sessionCapabilities"`
}

type promptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

type empty struct{}

type sessionCapabilities struct {
	List                  *empty `json:"list,omitempty"`
	Delete                *empty `json:"delete,omitempty"`
	AdditionalDirectories *empty `json:"additionalDirectories,omitempty"`
	Resume                *empty `json:"resume,omitempty"`
	Close                 *empty `json:"close,omitempty"`
	// Fork is session/fork: unstable in the spec (the SDK's
	// schema.unstable.json), offered where the backend can fork.
	Fork *empty `json:"fork,omitempty"`
}

// mcpServer is any of ACP's three transports: stdio (no type), http, sse.
type mcpServer struct {
	Type    string    `json:"type,omitempty"`
	Name    string    `json:"name"`
	Command string    `json:"command,omitempty"`
	Args    []string  `json:"args,omitempty"`
	Env     []nameVal `json:"env,omitempty"`
	URL     string    `json:"url,omitempty"`
	Headers []nameVal `json:"headers,omitempty"`
}

type nameVal struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type newSessionParams struct {
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories"`
	MCPServers            []mcpServer `json:"mcpServers"`
}

type newSessionResult struct {
	SessionID     string         `json:"sessionId"`
	Modes         *modeState     `json:"modes,omitempty"`
	ConfigOptions []configOption `json:"configOptions,omitempty"`
}

type modeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []sessionMode `json:"availableModes"`
}

type sessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type configOption struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Category     string         `json:"category,omitempty"`
	Type         string         `json:"type"`
	CurrentValue string         `json:"currentValue"`
	Options      []selectOption `json:"options"`
}

type selectOption struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type sessionRef struct {
	SessionID string `json:"sessionId"`
}

type listSessionsResult struct {
	Sessions []sessionInfo `json:"sessions"`
}

type sessionInfo struct {
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	Title                 string   `json:"title,omitempty"`
	UpdatedAt             string   `json:"updatedAt,omitempty"`
}

type setModeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

type setConfigParams struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Value     json.RawMessage `json:"value"`
}

type setConfigResult struct {
	ConfigOptions []configOption `json:"configOptions"`
}

type promptParams struct {
	SessionID string         `json:"sessionId"`
	Prompt    []contentBlock `json:"prompt"`
}

// contentBlock is any of ACP's content blocks, read.
type contentBlock struct {
	Type     string            `json:"type"`
	Text     string            `json:"text"`
	Data     string            `json:"data"`
	MimeType string            `json:"mimeType"`
	URI      string            `json:"uri"`
	Name     string            `json:"name"`
	Title    string            `json:"title"`
	Resource *embeddedResource `json:"resource"`
}

type embeddedResource struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
}

type promptResult struct {
	StopReason string `json:"stopReason"`
}

// Stop reasons.
const (
	stopEndTurn   = "end_turn"
	stopCancelled = "cancelled"
)

type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func text(s string) textContent { return textContent{Type: "text", Text: s} }

type contentChunk struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Content       textContent `json:"content"`
}

// toolCall is both the tool_call update and, without SessionUpdate and
// with only what changed, tool_call_update and a permission request's
// toolCall.
type toolCall struct {
	SessionUpdate string          `json:"sessionUpdate,omitempty"`
	ToolCallID    string          `json:"toolCallId"`
	Title         string          `json:"title,omitempty"`
	Kind          string          `json:"kind,omitempty"`
	Status        string          `json:"status,omitempty"`
	Content       []any           `json:"content,omitempty"` // toolContent, diffContent
	Locations     []toolLocation  `json:"locations,omitempty"`
	RawInput      json.RawMessage `json:"rawInput,omitempty"`
	RawOutput     any             `json:"rawOutput,omitempty"`
}

type toolContent struct {
	Type    string      `json:"type"`
	Content textContent `json:"content"`
}

// diffContent is an edit a call makes: OldText nil for a new file.
type diffContent struct {
	Type    string  `json:"type"`
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

type toolLocation struct {
	Path string `json:"path"`
}

// Tool call statuses.
const (
	statusPending    = "pending"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
)

type usageUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Used          int64  `json:"used"`
	Size          int64  `json:"size"`
	Cost          *cost  `json:"cost,omitempty"`
}

type cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

type planUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []planEntry `json:"entries"`
}

type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

type commandsUpdate struct {
	SessionUpdate     string             `json:"sessionUpdate"`
	AvailableCommands []availableCommand `json:"availableCommands"`
}

type availableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
}

// commandInput is ACP's unstructured command input: all that is typed
// after the name.
type commandInput struct {
	Hint string `json:"hint"`
}

type modeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CurrentModeID string `json:"currentModeId"`
}

// infoUpdate is session_info_update: the session's title, as
// session/list gives it, when it gets one.
type infoUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Title         string `json:"title,omitempty"`
	UpdatedAt     string `json:"updatedAt,omitempty"`
}

type configUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	ConfigOptions []configOption `json:"configOptions"`
}

type permissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  toolCall           `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

// permissionAsSent is permissionParams with the tool call an ACP agent
// behind the backend sent, unchanged.
type permissionAsSent struct {
	SessionID string             `json:"sessionId"`
	ToolCall  json.RawMessage    `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type permissionResult struct {
	Outcome struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}
