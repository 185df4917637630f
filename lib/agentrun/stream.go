package agentrun

import (
	"io"
	"sync"

	"github.com/agentry/agentry/lib/agentstream"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// Usage is what a run cost, from the agent's own reports; a figure the
// agent did not report is absent, never zero.
type Usage struct {
	InputTokens      *int64   `json:"inputTokens,omitempty"`
	OutputTokens     *int64   `json:"outputTokens,omitempty"`
	CacheReadTokens  *int64   `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens *int64   `json:"cacheWriteTokens,omitempty"`
	CostUSD          *float64 `json:"costUsd,omitempty"`
	Turns            *int     `json:"turns,omitempty"`
	ToolCalls        int      `json:"toolCalls"`
	DurationMs       float64  `json:"durationMs"`

	done  int // tool calls completed
	turns int // runagent's count: claude's responses, codex's completed tool calls
}

// addUp adds an attempt's figures to a run's: a figure is present when
// any attempt reported it.
func (u *Usage) addUp(a Usage) {
	addInt := func(to **int64, v *int64) {
		if v != nil {
			if *to == nil {
				*to = new(int64)
			}
			**to += *v
		}
	}
	addInt(&u.InputTokens, a.InputTokens)
	addInt(&u.OutputTokens, a.OutputTokens)
	addInt(&u.CacheReadTokens, a.CacheReadTokens)
	addInt(&u.CacheWriteTokens, a.CacheWriteTokens)
	if a.CostUSD != nil {
		if u.CostUSD == nil {
			u.CostUSD = new(float64)
		}
		*u.CostUSD += *a.CostUSD
	}
	u.ToolCalls += a.ToolCalls
}

// Price is what a million tokens cost, in US dollars: input, output, and
// cached input (input tokens read from the cache, which the input count
// includes).
type Price struct{ In, Out, Cached float64 }

// Cost is what the tokens cost at p.
func (p *Price) Cost(in, out, cached int64) float64 {
	return (float64(in-cached)*p.In + float64(cached)*p.Cached + float64(out)*p.Out) / 1e6
}

// caps are an attempt's limits, each 0 when there is none.
type caps struct {
	// turns: claude is stopped as a response beyond it starts (it keeps
	// --max-turns itself, and this is the check that it did), codex as
	// its turns-th tool call completes.
	turns int
	// toolCalls: stopped as the toolCalls-th tool call completes.
	toolCalls int
	// noTools: stopped at its first tool call (a wrap-up turn).
	noTools bool
	// budget: a host agent is stopped as its usage reaches what is left
	// of the run's budget (0: none).
	budget float64
	// What the resumed session had reported before the attempt (claude's
	// running cost, codex's running tokens), taken from its usage events
	// so that each is the attempt's own.
	costBefore   float64
	tokensBefore [3]int64
}

// structuredTool is the tool claude answers a --json-schema through: an
// answer, not a tool call the caps count.
const structuredTool = "StructuredOutput"

// stream reads the agent's stdout: the transcript that decides the
// outcome, the usage, the tool calls, and the events for --events; and it
// says when something came (for the idle timeout) and when a cap is
// reached (codex's turns-th tool call, say).
type stream struct {
	harness string
	tr      *grant.Transcript
	events  *eventLog
	caps    caps

	mu         sync.Mutex
	usage      Usage
	work       work            // the commands it ran, what was denied
	message    string          // claude: the id of the response being read
	structured map[string]bool // claude: the ids of StructuredOutput calls

	activity chan struct{} // a line came (buffered: a nudge, not a count)
	limit    chan struct{} // closed when a cap is reached
	hit      Limit         // which
	capped   bool          // a cap was reached: what follows is not counted
}

func newStream(harness string, tr *grant.Transcript, events *eventLog, c caps) *stream {
	return &stream{harness: harness, tr: tr, events: events, caps: c, structured: map[string]bool{},
		activity: make(chan struct{}, 1), limit: make(chan struct{})}
}

// read feeds every line of stdout to the stream, keeping its tail; the
// channel closes when stdout is done.
func (st *stream) read(stdout io.Reader, tail *proc.Tail) <-chan struct{} {
	read := make(chan struct{})
	go func() {
		defer close(read)
		_ = ndjson.Lines(io.TeeReader(stdout, tail), 0, nil, func(line []byte) bool { st.line(line); return true })
	}()
	return read
}

func (st *stream) line(line []byte) {
	select {
	case st.activity <- struct{}{}:
	default:
	}
	st.tr.Feed(line)
	if ndjson.Check(line) != ndjson.Valid {
		return
	}
	s := string(line)
	var evs []protocol.AgentEvent
	if st.harness == grant.Codex {
		evs = agentstream.Codex(s)
	} else {
		evs = agentstream.Claude(s)
	}
	st.mu.Lock()
	hit := st.count(s, evs)
	st.work.take(st.harness, s, evs)
	st.takeUsage(s)
	st.mu.Unlock()
	for _, e := range evs {
		st.events.emit(e)
	}
	if hit != NoLimit && st.hit == NoLimit {
		st.hit = hit
		close(st.limit)
	}
}

// count counts the line's turns and tool calls, and names the cap it
// reaches, if any. Once a cap is reached the agent is being stopped: a
// call it asks for after that never runs and is not counted.
func (st *stream) count(s string, evs []protocol.AgentEvent) (hit Limit) {
	if st.capped {
		return NoLimit
	}
	defer func() { st.capped = hit != NoLimit }()
	u, c := &st.usage, st.caps
	if id := claudeMessage(st.harness, s); id != "" && id != st.message {
		st.message = id
		u.turns++
		if c.turns > 0 && u.turns > c.turns {
			hit = LimitTurns // claude did not keep its own
		}
	}
	for _, e := range evs {
		switch {
		case e.Type == protocol.EvToolCall && e.Name == structuredTool && st.harness == grant.Claude:
			st.structured[e.ToolCallID] = true
		case e.Type == protocol.EvToolCall:
			u.ToolCalls++
			if c.noTools {
				hit = LimitNoTools
			}
		case e.Type == protocol.EvToolResult && !st.structured[e.ToolCallID]:
			u.done++
			if st.harness == grant.Codex {
				u.turns = u.done
				if c.turns > 0 && u.done >= c.turns {
					hit = LimitTurns
				}
			}
			if c.toolCalls > 0 && u.done >= c.toolCalls {
				hit = LimitToolCalls
			}
		}
	}
	return hit
}

// claudeMessage is the id of the response a claude line is part of.
func claudeMessage(harness, s string) string {
	if harness != grant.Claude {
		return ""
	}
	switch gjson.Get(s, "type").Str {
	case "assistant":
		if gjson.Get(s, "message.model").Str == "<synthetic>" {
			return "" // claude's own words for an API error: no response
		}
		return gjson.Get(s, "message.id").Str
	case "stream_event":
		if gjson.Get(s, "event.type").Str == "message_start" {
			return gjson.Get(s, "event.message.id").Str
		}
	}
	return ""
}

// takeUsage reads the figures of a claude result or a codex turn.
func (st *stream) takeUsage(s string) {
	u := &st.usage
	switch typ := gjson.Get(s, "type").Str; {
	case st.harness == grant.Claude && typ == "result":
		cu := agentstream.ClaudeUsage(s)
		u.InputTokens, u.OutputTokens = &cu.InputTokens, &cu.OutputTokens
		u.CacheReadTokens, u.CacheWriteTokens = &cu.CacheReadTokens, &cu.CacheWriteTokens
		if c := gjson.Get(s, "total_cost_usd"); c.Exists() {
			u.CostUSD = &cu.CostUSD
		}
		// Not num_turns, which counts one more than claude's requests.
		own := *cu
		own.CostUSD = max(cu.CostUSD-st.caps.costBefore, 0)
		st.events.emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: &own})
	case st.harness == grant.Codex && typ == "turn.completed":
		// codex's counts are the thread's so far (a resumed thread
		// includes its earlier turns); it reports no cache writes, no
		// cost and no turn count.
		in, out, cached := gjson.Get(s, "usage.input_tokens").Int(), gjson.Get(s, "usage.output_tokens").Int(), gjson.Get(s, "usage.cached_input_tokens").Int()
		u.InputTokens, u.OutputTokens, u.CacheReadTokens = &in, &out, &cached
		b := st.caps.tokensBefore
		st.events.emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: &protocol.Usage{InputTokens: max(in-b[0], 0), OutputTokens: max(out-b[1], 0), CacheReadTokens: max(cached-b[2], 0)}})
	}
}

func (st *stream) result() Usage {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.usage
}

// eventLog writes a run's progress as agent-host protocol messages: the
// run's events (run_started first, completed or error last), then
// run_done. A nil log writes nothing.
//
// Each line is redacted as it is written (w does that), but a secret the
// model streams can be split across text deltas, no one of which holds
// it: with secrets, the end of the deltas that could be the start of one
// is held back until the next delta completes it (and it is redacted) or
// shows it was not one, or another event comes.
type eventLog struct {
	mu      sync.Mutex
	w       io.Writer
	runID   string
	seq     int
	secrets *secrets
	held    string // the deltas' text not written yet
}

func newEventLog(w io.Writer, runID string, s *secrets) *eventLog {
	if w == nil {
		return nil
	}
	return &eventLog{w: w, runID: runID, secrets: s}
}

func (l *eventLog) emit(e protocol.AgentEvent) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.secrets.none() {
		l.event(e)
		return
	}
	if e.Type == protocol.EvTextDelta {
		text := l.secrets.apply(l.held + e.Text)
		n := len(text) - l.secrets.started(text)
		l.held = text[n:]
		if n > 0 {
			e.Text = text[:n]
			l.event(e)
		}
		return
	}
	l.flush()
	l.event(e)
}

// flush writes the deltas' text held back, if any.
func (l *eventLog) flush() {
	if l.held != "" {
		l.event(protocol.AgentEvent{Type: protocol.EvTextDelta, Text: l.held})
		l.held = ""
	}
}

func (l *eventLog) event(e protocol.AgentEvent) {
	l.seq++
	l.write(&protocol.Event{RunID: l.runID, Seq: l.seq, Event: e})
}

// done ends the log: the terminal event and run_done.
func (l *eventLog) done(res *Result) {
	if l == nil {
		return
	}
	stop := protocol.StopCompleted
	switch {
	case res.OK:
		l.emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: res.Text, SessionID: res.Session})
	case res.StoppedBy != "":
		stop = protocol.StopInterrupted
		l.emit(protocol.AgentEvent{Type: protocol.EvError, Error: &protocol.ErrorInfo{Code: protocol.CodeInterrupted, Message: res.Reason}})
	default:
		stop = protocol.StopError
		code := protocol.CodeBackendFailed
		if res.code != "" {
			code = res.code // a host agent's own: its level violated
		}
		l.emit(protocol.AgentEvent{Type: protocol.EvError, Error: &protocol.ErrorInfo{Code: code, Message: res.Reason}})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flush()
	l.write(&protocol.RunDone{ID: l.runID, RunID: l.runID, StopReason: stop, Events: l.seq})
}

// message writes a message that is not one of the run's events (a
// host's log notice), in its place among them.
func (l *eventLog) message(m protocol.Msg) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flush()
	l.write(m)
}

func (l *eventLog) write(m protocol.Msg) {
	b, err := protocol.Encode(m)
	if err == nil {
		l.w.Write(append(b, '\n'))
	}
}
