package agentrun

import (
	"io"
	"strconv"
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
}

// stream reads the agent's stdout: the transcript that decides the
// outcome, the usage, the tool calls, and the events for --events; and it
// says when something came (for --idle-timeout) and when codex has made
// its --max-turns-th tool call.
type stream struct {
	harness  string
	tr       *grant.Transcript
	events   *eventLog
	maxTurns int // codex: stop at this many tool calls (0: no limit)

	mu    sync.Mutex
	usage Usage

	activity chan struct{} // a line came (buffered: a nudge, not a count)
	limit    chan struct{} // closed when codex reached maxTurns
	limitHit bool
}

func newStream(harness string, tr *grant.Transcript, events *eventLog, maxTurns int) *stream {
	if harness != grant.Codex {
		maxTurns = 0 // claude keeps its own
	}
	return &stream{harness: harness, tr: tr, events: events, maxTurns: maxTurns,
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
	for _, e := range evs {
		if e.Type == protocol.EvToolCall {
			st.usage.ToolCalls++
		}
	}
	st.takeUsage(s)
	hit := st.maxTurns > 0 && st.usage.ToolCalls >= st.maxTurns && !st.limitHit
	st.limitHit = st.limitHit || hit
	st.mu.Unlock()
	for _, e := range evs {
		st.events.emit(e)
	}
	if hit {
		close(st.limit)
	}
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
		if n := gjson.Get(s, "num_turns"); n.Exists() {
			turns := int(n.Int())
			u.Turns = &turns
		}
		st.events.emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: cu})
	case st.harness == grant.Codex && typ == "turn.completed":
		// codex's counts are the thread's so far (a resumed thread
		// includes its earlier turns); it reports no cache writes, no
		// cost and no turn count.
		in, out, cached := gjson.Get(s, "usage.input_tokens").Int(), gjson.Get(s, "usage.output_tokens").Int(), gjson.Get(s, "usage.cached_input_tokens").Int()
		u.InputTokens, u.OutputTokens, u.CacheReadTokens = &in, &out, &cached
		st.events.emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: &protocol.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: cached}})
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
type eventLog struct {
	mu    sync.Mutex
	w     io.Writer
	runID string
	seq   int
}

func newEventLog(w io.Writer, pid int) *eventLog {
	if w == nil {
		return nil
	}
	return &eventLog{w: w, runID: "runagent-" + strconv.Itoa(pid)}
}

func (l *eventLog) emit(e protocol.AgentEvent) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
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
		l.emit(protocol.AgentEvent{Type: protocol.EvError, Error: &protocol.ErrorInfo{Code: protocol.CodeBackendFailed, Message: res.Reason}})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.write(&protocol.RunDone{ID: l.runID, RunID: l.runID, StopReason: stop, Events: l.seq})
}

func (l *eventLog) write(m protocol.Msg) {
	b, err := protocol.Encode(m)
	if err == nil {
		l.w.Write(append(b, '\n'))
	}
}
