package grant

import (
	"fmt"
	"strings"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/tidwall/gjson"
)

// Transcript reads a harness's --json stdout one line at a time and keeps
// only what decides the outcome, so memory stays flat however much the
// agent streams.
type Transcript struct {
	Harness string
	Session string // claude's session id, codex's thread id

	// claude
	result      string
	resultSeen  bool
	isError     bool
	apiStatus   int64
	termination string
	subtype     string
	structured  string // structured_output, raw JSON
	lastText    string // the last text block, for a partial answer

	// codex
	lastMessage   string
	turnCompleted bool
	turnFailed    string
	lastError     string
}

// Feed takes one line of the child's stdout. Lines that are not JSON, or
// of kinds this does not know, are ignored.
func (t *Transcript) Feed(line []byte) {
	if ndjson.Check(line) != ndjson.Valid {
		return
	}
	s := string(line)
	typ := gjson.Get(s, "type").Str
	if t.Harness == Codex {
		t.feedCodex(typ, s)
		return
	}
	switch typ {
	case "system":
		if id := gjson.Get(s, "session_id").Str; id != "" && t.Session == "" {
			t.Session = id
		}
	case "assistant":
		gjson.Get(s, "message.content").ForEach(func(_, blk gjson.Result) bool {
			if blk.Get("type").Str == "text" {
				t.lastText = blk.Get("text").Str
			}
			return true
		})
	case "result":
		t.resultSeen = true
		t.result = gjson.Get(s, "result").Str
		t.subtype = gjson.Get(s, "subtype").Str
		if so := gjson.Get(s, "structured_output"); so.Exists() && so.Type != gjson.Null {
			t.structured = so.Raw
		}
		// is_error decides, not subtype: an API error says "success".
		t.isError = gjson.Get(s, "is_error").Bool()
		t.apiStatus = gjson.Get(s, "api_error_status").Int()
		t.termination = gjson.Get(s, "terminal_reason").Str
		if id := gjson.Get(s, "session_id").Str; id != "" {
			t.Session = id
		}
		if t.isError && t.result == "" {
			if errs := gjson.Get(s, "errors"); errs.IsArray() && len(errs.Array()) > 0 {
				t.result = errs.Array()[0].String()
			} else {
				t.result = gjson.Get(s, "subtype").Str
			}
		}
	}
}

func (t *Transcript) feedCodex(typ, s string) {
	switch typ {
	case "thread.started":
		t.Session = gjson.Get(s, "thread_id").Str
	case "item.completed":
		if gjson.Get(s, "item.type").Str == "agent_message" {
			t.lastMessage = gjson.Get(s, "item.text").Str
		}
	case "turn.completed":
		t.turnCompleted = true
	case "turn.failed":
		t.turnFailed = gjson.Get(s, "error.message").Str
		if t.turnFailed == "" {
			t.turnFailed = "the turn failed"
		}
	case "error":
		// "Reconnecting... 1/5" and the like precede retries: kept only
		// to explain a failure, never one by themselves.
		t.lastError = gjson.Get(s, "message").Str
	}
}

// Answer decides a run that exited 0: the answer, or why there is none.
// (A non-zero exit or a signal is a failure before this is asked.)
func (t *Transcript) Answer() (text string, reason string) {
	if t.Harness == Codex {
		switch {
		case t.turnFailed != "":
			// turn.failed beats any message, even on exit 0.
			return "", "codex: the turn failed: " + t.turnFailed
		case !t.turnCompleted:
			return "", "codex ended without finishing its turn"
		case strings.TrimSpace(t.lastMessage) == "":
			return "", "codex exited 0 but said nothing"
		}
		return t.lastMessage, ""
	}
	switch {
	case !t.resultSeen:
		return "", "claude exited 0 without a result"
	case t.isError:
		return "", "claude: " + t.describeError()
	case strings.TrimSpace(t.result) == "":
		return "", "claude exited 0 but said nothing"
	}
	return t.result, ""
}

// Limit is a limit the agent itself stopped at.
type Limit int

const (
	NoLimit     Limit = iota
	TurnLimit         // Options.MaxTurns
	BudgetLimit       // Options.MaxBudgetUSD
)

// Limit is the limit the agent itself stopped at, if any.
func (t *Transcript) Limit() Limit {
	switch t.subtype {
	case "error_max_turns":
		return TurnLimit
	case "error_max_budget_usd":
		return BudgetLimit
	}
	return NoLimit
}

// Partial is the last thing the agent said, for a run stopped before its
// answer.
func (t *Transcript) Partial() string {
	if t.Harness == Codex {
		return t.lastMessage
	}
	return t.lastText
}

// Structured is the answer as JSON text, for --schema: claude's
// structured_output, codex's last message; ok is false when claude gave
// none.
func (t *Transcript) Structured() (raw string, ok bool) {
	if t.Harness == Codex {
		return t.lastMessage, strings.TrimSpace(t.lastMessage) != ""
	}
	return t.structured, t.structured != ""
}

// Failure explains a run that exited non-zero, from the stream, when the
// stream says more than the exit code.
func (t *Transcript) Failure() string {
	switch {
	case t.Harness == Codex && t.turnFailed != "":
		return "the turn failed: " + t.turnFailed
	case t.Harness == Codex && t.lastError != "":
		return t.lastError
	case t.Harness == Claude && t.isError:
		return t.describeError()
	}
	return ""
}

func (t *Transcript) describeError() string {
	msg := t.result
	if t.apiStatus != 0 && !strings.Contains(msg, fmt.Sprint(t.apiStatus)) {
		msg = fmt.Sprintf("API error %d: %s", t.apiStatus, msg)
	}
	if msg == "" {
		msg = "the run failed (" + t.termination + ")"
	}
	return msg
}
