// Package host serves agent-host protocol v1 requests against a Backend.
//
// The rules it enforces, whatever the backend does: hello comes first;
// requests are served concurrently and every one gets exactly one reply; a
// run's events go run_started, then the rest, then exactly one terminal
// event (completed or error), then run_done; an interrupt is a ladder (the
// backend's soft stop, then after a grace the host ends the run itself and
// has the backend kill what it started); shutdown, end of input and SIGTERM
// drain in-flight runs, bounded by a timeout, and end with bye.
//
// A Host is driven one message at a time through Deliver, and writes its
// replies through the function it was given, so the same rules serve a
// stdio process (Serve) and an in-process client alike.
package host

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
)

// Backend runs agent turns. Only RunTurn is required; the optional
// interfaces below add the rest of the protocol, and a request a backend
// cannot serve is answered with an "unsupported" error.
type Backend interface {
	// Name and Version identify the backend in ready.
	Name() string
	Version() string
	// RunTurn runs one chat turn and returns when it has ended. It reports
	// events through t.Emit; the host adds run_started and the terminal
	// event when the backend does not, and drops anything after the
	// terminal one. A nil return with no terminal event means completed;
	// an error means a terminal error event.
	//
	// t.Interrupted is closed by an interrupt: stop soon, and return
	// ErrInterrupted or emit an error event of code "interrupted". ctx is
	// cancelled when the host gives up waiting (the interrupt grace ran
	// out, or shutdown): stop now and kill whatever the turn started.
	RunTurn(ctx context.Context, t *Turn) error
}

// Turn is one run, as a backend sees it.
type Turn struct {
	RunID  string
	Params protocol.ChatRunParams
	// OneShot is set, and Params filled from it, for a one_shot run.
	OneShot *protocol.OneShotParams
	// Emit reports an event. It is safe for concurrent use and never
	// blocks for long.
	Emit func(protocol.AgentEvent)
	// Log writes a log notice about the run.
	Log func(level, msg string)
	// Interrupted is closed when the run is asked to stop.
	Interrupted <-chan struct{}
	// Ask, set when the daemon decides the run's tool calls
	// (params.permissions "ask"), puts a call the grant does not allow to
	// the daemon and returns its resolution: the daemon's answer, or a
	// denial at the deadline, an interrupt or the host's stop. It blocks
	// until then; it is safe for concurrent use. Nil: the grant decides.
	Ask func(Ask) Answer
	// AskAll, set when a policy applies to the run, has the backend put
	// every tool call it can to Ask, the ones the level allows too (with
	// Ask.Granted set): the host answers those from the policy and the
	// level without the daemon. A backend starts its CLI at an ask level
	// for such a run, so that nothing slips by.
	AskAll bool
	// PolicyDenies, set with AskAll, tells whether the policies deny a
	// call outright, without asking anyone, and by which rule: for a
	// call the backend sees only as it runs or has run (an ACP agent's
	// own edit, reported, never asked), which the backend ends the turn
	// over, as over a call its level forbids.
	PolicyDenies func(policy.Call) (rule string, denied bool)
	// Question, set when the run takes questions (params.questions
	// "ask"), puts the agent's questions to the daemon and returns the
	// answer, or no answer at the deadline, an interrupt or the host's
	// stop. It blocks until then; it is safe for concurrent use. Nil:
	// nobody is there to answer; the backend tells the agent so, never
	// inventing a choice.
	Question func(QuestionAsk) QuestionAnswer
}

// QuestionAsk is one request of the agent's questions.
type QuestionAsk struct {
	// ToolCallID is the id of the tool_call event of the question's
	// tool call, when the backend knows it.
	ToolCallID string
	Questions  []protocol.Question
}

// QuestionAnswer is how a question request ended. Answered false means
// no answer came (declined, the deadline, an interrupt, the run's end):
// the agent is told that, with Message.
type QuestionAnswer struct {
	Answered bool
	// Answers maps a question's id to the labels chosen, or a free
	// answer's text.
	Answers map[string][]string
	Message string
	By      string
}

// ErrInterrupted is what a backend returns from a turn it stopped because
// it was asked to.
var ErrInterrupted = &protocol.ErrorInfo{Code: protocol.CodeInterrupted, Message: "interrupted"}

// Failed returns an error a backend can return from RunTurn to end the run
// with a given code.
func Failed(code, msg string, retryable bool) error {
	return &protocol.ErrorInfo{Code: code, Message: msg, Retryable: retryable}
}

// OneShotter runs one_shot requests; without it the host runs a one-shot
// as a turn of a chat of its own.
type OneShotter interface {
	OneShot(ctx context.Context, t *Turn) (*protocol.Usage, error)
}

// SessionKeeper keeps per-chat sessions.
type SessionKeeper interface {
	WarmSession(ctx context.Context, chatID string) error
	SessionInfo(ctx context.Context, chatID string) (*protocol.SessionInfo, error)
	// ResetSession reports whether there was anything to drop.
	ResetSession(ctx context.Context, chatID string) (bool, error)
}

// ToolSetter installs MCP servers on a chat.
type ToolSetter interface {
	SetMCPServers(ctx context.Context, chatID string, servers map[string]json.RawMessage) (*protocol.ToolRefresh, error)
	RefreshTools(ctx context.Context, chatID string) (*protocol.ToolRefresh, error)
}

// ModelLister knows the model catalog.
type ModelLister interface {
	ListModels(ctx context.Context, filter string) ([]protocol.ModelInfo, int, error)
}

// PlanUsager knows the subscription's usage windows; nil means unknown.
type PlanUsager interface {
	PlanUsage(ctx context.Context) (*protocol.PlanUsage, error)
}

// Closer is a backend with something to release when the host stops.
type Closer interface {
	Close() error
}

// Factory makes the backend hello asks for: name is the backend chosen by
// flag unless hello.config names another, and config is hello.config.
type Factory func(name string, config json.RawMessage) (Backend, error)

// Env is the outside world a backend's processes see: given by the host
// program, never read from the process's own, so tests can drive it.
type Env struct {
	// Environ is the environment the backend's commands run with.
	Environ []string
	// Stderr receives the backend's commands' stderr (the host's own
	// stderr, which a supervisor tails).
	Stderr io.Writer
	// Reaper starts the backend's commands when the host's process is a
	// child subreaper (agent-host, runagent): what their trees orphan is
	// handed back to that process, which ends it before it exits. Nil in
	// a process that is none (a test's in-process host).
	Reaper *proc.Reaper
}

// Start is how the backend starts its commands: through the Reaper, if
// there is one.
func (e Env) Start() proc.Options { return proc.Options{Reaper: e.Reaper} }

// Getenv is the value of key in Environ.
func (e Env) Getenv(key string) string {
	for i := len(e.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.Environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// StderrOr is Stderr, or io.Discard when there is none.
func (e Env) StderrOr() io.Writer {
	if e.Stderr == nil {
		return io.Discard
	}
	return e.Stderr
}

// SessionLoader is a backend that can take up a session of its CLI that it
// did not start in this process, from the CLI's own records, and say what
// was said in it. The ACP face's session/load and session/resume use it;
// protocol v1 has no request for it.
type SessionLoader interface {
	// LoadSession makes chat chatID continue the CLI's session sessionID
	// (the session id session_info reports), working in workspace: its
	// next turn resumes that session. It returns the session's history,
	// in order.
	LoadSession(ctx context.Context, chatID, sessionID, workspace string) ([]Said, error)
}

// Said is one thing said in a session: a user's message (User), or one of
// the agent's events (Event: text, thinking, tool_call, tool_result).
type Said struct {
	User  string
	Event protocol.AgentEvent
}

// Efforter is a backend that honours a turn's params.reasoningEffort;
// Efforts are the values it takes.
type Efforter interface {
	Efforts() []string
}

// Directed is a backend whose prompts may begin with words for the
// backend, not the user's (the echo backend's line of directives). Said
// is the prompt as the user would read it, those words left out: what
// the ACP face titles a session with.
type Directed interface {
	Said(prompt string) string
}
