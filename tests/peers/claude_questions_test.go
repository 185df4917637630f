package peers

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// claudeWire is agent-host --backend claude spoken to line by line, as a
// daemon speaks protocol v1: the question messages and the denied events
// are read as they come, whatever a client library knows of them.
type claudeWire struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	mu  sync.Mutex
	// seen is every message the host sent, in order; more is poked at
	// each one.
	seen []protocol.Msg
	more chan struct{}
	done chan struct{}
}

// startClaudeWire starts agent-host with the claude backend at level 2
// against the fake API, with env added to the environment, and says hello.
func startClaudeWire(t *testing.T, api *server, env ...string) *claudeWire {
	t.Helper()
	return startClaudeWireArgs(t, api, nil, env...)
}

// startClaudeWireArgs is startClaudeWire with agent-host's args added.
func startClaudeWireArgs(t *testing.T, api *server, args []string, env ...string) *claudeWire {
	t.Helper()
	cmd := exec.Command(filepath.Join(filepath.Dir(runagentBin), "agent-host"), append([]string{"--backend", "claude", "--interrupt-grace", "5s"}, args...)...)
	cmd.Env = append(append(claudeEnv(t, api), "AGENT_HOST_CLAUDE_BIN="+claudeBin), env...)
	cmd.Dir = t.TempDir()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &claudeWire{t: t, cmd: cmd, in: in, more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			m := protocol.Parse(append([]byte(nil), sc.Bytes()...))
			w.mu.Lock()
			w.seen = append(w.seen, m)
			w.mu.Unlock()
			select {
			case w.more <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(w.close)
	w.send(&protocol.Hello{ID: "h1", Protocol: 1, Daemon: "peers", Config: json.RawMessage(`{"claude":{"level":2}}`)})
	w.wait("ready", func(m protocol.Msg) bool { return m.MsgType() == "ready" })
	return w
}

// close ends the host (end of input) and waits for it.
func (w *claudeWire) close() {
	w.in.Close()
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		w.cmd.Process.Kill()
	}
	w.cmd.Wait()
}

func (w *claudeWire) send(m protocol.Msg) {
	w.t.Helper()
	b, err := protocol.Encode(m)
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.in.Write(append(b, '\n')); err != nil {
		w.t.Fatal(err)
	}
}

// wait returns the first message that ok accepts, waiting up to 90 s.
func (w *claudeWire) wait(what string, ok func(protocol.Msg) bool) protocol.Msg {
	w.t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		w.mu.Lock()
		for _, m := range w.seen {
			if ok(m) {
				w.mu.Unlock()
				return m
			}
		}
		w.mu.Unlock()
		select {
		case <-w.more:
		case <-w.done:
			w.t.Fatalf("agent-host ended before %s", what)
		case <-deadline:
			w.t.Fatalf("no %s within 90s", what)
		}
	}
}

// events are run runID's agent events so far.
func (w *claudeWire) events(runID string) []protocol.AgentEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	var evs []protocol.AgentEvent
	for _, m := range w.seen {
		if e, ok := m.(*protocol.Event); ok && e.RunID == runID {
			evs = append(evs, e.Event)
		}
	}
	return evs
}

// runDone waits for run runID's run_done and returns its events.
func (w *claudeWire) runDone(runID string) []protocol.AgentEvent {
	w.t.Helper()
	w.wait("run_done of "+runID, func(m protocol.Msg) bool {
		d, ok := m.(*protocol.RunDone)
		return ok && d.RunID == runID
	})
	return w.events(runID)
}

// question waits for run runID's question message.
func (w *claudeWire) question(runID string) *protocol.QuestionRequest {
	w.t.Helper()
	return w.wait("a question of "+runID, func(m protocol.Msg) bool {
		q, ok := m.(*protocol.QuestionRequest)
		return ok && q.RunID == runID
	}).(*protocol.QuestionRequest)
}

// toolResults are the tool results the fake API received, in order of
// its requests (each request repeats the conversation: the last one of
// each is new).
func toolResults(api *server) []gjson.Result {
	api.mu.Lock()
	defer api.mu.Unlock()
	var out []gjson.Result
	seen := map[string]bool{}
	for _, b := range api.bodies {
		gjson.Get(b, "messages").ForEach(func(_, m gjson.Result) bool {
			m.Get("content").ForEach(func(_, c gjson.Result) bool {
				if c.Get("type").Str == "tool_result" && !seen[c.Get("tool_use_id").Str] {
					seen[c.Get("tool_use_id").Str] = true
					out = append(out, c)
				}
				return true
			})
			return true
		})
	}
	return out
}

// resultText is a tool result's content as text.
func resultText(r gjson.Result) string {
	c := r.Get("content")
	if c.Type == gjson.String {
		return c.Str
	}
	var s string
	c.ForEach(func(_, b gjson.Result) bool { s += b.Get("text").Str; return true })
	return s
}

const pickCall = `CALL AskUserQuestion {"questions":[{"question":"Which one should I use?","header":"Choice","options":[{"label":"A","description":"the first"},{"label":"B","description":"the second"}],"multiSelect":false}]}`

// AskUserQuestion through protocol v1: with questions "ask" the daemon
// gets a question message with the choices, and its answer is the tool
// result the model reads; declined, the model is told nobody chose.
func TestClaudeQuestionsAsk(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	w := startClaudeWire(t, api)
	work := t.TempDir()

	if !t.Run("answered", func(t *testing.T) {
		w.t = t
		w.send(&protocol.RunTurn{ID: "t1", RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: pickCall, Workspace: work, Questions: "ask"}})
		q := w.question("r1")
		if len(q.Questions) != 1 || q.Questions[0].ID != "Choice" || q.Questions[0].Question != "Which one should I use?" ||
			len(q.Questions[0].Options) != 2 || q.Questions[0].Options[1].Label != "B" || q.Questions[0].Options[1].Description != "the second" || q.ToolCallID == "" {
			t.Fatalf("question %+v", q)
		}
		w.send(&protocol.AnswerQuestion{ID: "a1", RunID: "r1", RequestID: q.RequestID, Answers: map[string][]string{"Choice": {"B"}}})
		w.wait("ok to a1", func(m protocol.Msg) bool { o, ok := m.(*protocol.OK); return ok && o.ID == "a1" })
		evs := w.runDone("r1")
		rs := toolResults(api)
		if len(rs) == 0 || rs[len(rs)-1].Get("is_error").Bool() || !strings.Contains(resultText(rs[len(rs)-1]), `"Which one should I use?"="B"`) {
			t.Fatalf("the model's tool result: %v", rs)
		}
		if l := last(evs); l.Type != protocol.EvCompleted || !strings.Contains(l.Text, `="B"`) {
			t.Errorf("ended with %+v", l)
		}
		w.wait("question_resolved", func(m protocol.Msg) bool {
			r, ok := m.(*protocol.QuestionResolved)
			return ok && r.RequestID == q.RequestID && r.Answered && r.By == protocol.ResolvedByDaemon
		})
	}) {
		return // each case below waits for a question too
	}

	t.Run("multi-select", func(t *testing.T) {
		w.t = t
		call := `CALL AskUserQuestion {"questions":[{"question":"Which checks should run?","header":"Checks","options":[{"label":"lint","description":"l"},{"label":"unit, fast","description":"u"},{"label":"e2e","description":"e"}],"multiSelect":true}]}`
		w.send(&protocol.RunTurn{ID: "t2", RunID: "r2", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: call, Workspace: work, Questions: "ask"}})
		q := w.question("r2")
		if !q.Questions[0].MultiSelect {
			t.Errorf("not multi-select: %+v", q.Questions[0])
		}
		w.send(&protocol.AnswerQuestion{ID: "a2", RunID: "r2", RequestID: q.RequestID, Answers: map[string][]string{"Checks": {"lint", "unit, fast"}}})
		w.runDone("r2")
		rs := toolResults(api)
		// Claude Code's own form: the labels joined, one holding ", " quoted;
		// it says "have been answered" only for labels it recognises.
		if got := resultText(rs[len(rs)-1]); !strings.Contains(got, `"Which checks should run?"="lint, "unit, fast""`) || !strings.Contains(got, "have been answered") {
			t.Fatalf("the model's tool result: %s", got)
		}
	})

	t.Run("declined", func(t *testing.T) {
		w.t = t
		w.send(&protocol.RunTurn{ID: "t3", RunID: "r3", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: pickCall, Workspace: work, Questions: "ask"}})
		q := w.question("r3")
		w.send(&protocol.AnswerQuestion{ID: "a3", RunID: "r3", RequestID: q.RequestID, Decline: true})
		w.runDone("r3")
		rs := toolResults(api)
		got := rs[len(rs)-1]
		if !got.Get("is_error").Bool() || !strings.Contains(resultText(got), "declined to answer") || !strings.Contains(resultText(got), "Do not assume one") {
			t.Fatalf("the model's tool result: %s", got.Raw)
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		w.t = t
		before := len(toolResults(api))
		w.send(&protocol.RunTurn{ID: "t4", RunID: "r4", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: pickCall, Workspace: work, Questions: "ask"}})
		q := w.question("r4")
		w.send(&protocol.Interrupt{ID: "i4", ChatID: "c1", RunID: "r4"})
		w.wait("run_done of r4", func(m protocol.Msg) bool {
			d, ok := m.(*protocol.RunDone)
			return ok && d.RunID == "r4" && d.StopReason == protocol.StopInterrupted
		})
		w.wait("question_resolved", func(m protocol.Msg) bool {
			r, ok := m.(*protocol.QuestionResolved)
			return ok && r.RequestID == q.RequestID && !r.Answered && r.By == protocol.ResolvedByInterrupt
		})
		// The model was not asked again with an answer: an interrupted
		// question ends the turn.
		for _, r := range toolResults(api)[before:] {
			if got := resultText(r); strings.Contains(got, `="`) {
				t.Errorf("the model was told of an answer: %s", got)
			}
		}
	})
}

// Without questions "ask", no question reaches anyone and the model is
// never told it was answered: claude is not offered AskUserQuestion,
// and a call of it is an error.
func TestClaudeQuestionsNobody(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	w := startClaudeWire(t, api)
	w.send(&protocol.RunTurn{ID: "t1", RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: pickCall, Workspace: t.TempDir()}})
	evs := w.runDone("r1")
	if l := last(evs); l.Type != protocol.EvCompleted {
		t.Fatalf("ended with %+v", l)
	}
	rs := toolResults(api)
	if len(rs) != 1 || !rs[0].Get("is_error").Bool() {
		t.Fatalf("the model's tool results: %v", rs)
	}
	if got := resultText(rs[0]); strings.Contains(got, "answered:") || strings.Contains(got, `="`) {
		t.Errorf("the model was told of an answer: %s", got)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.seen {
		if m.MsgType() == "question" {
			t.Errorf("a question was sent: %+v", m)
		}
	}
	if gjson.Get(api.bodies[0], `tools.#(name=="AskUserQuestion")`).Exists() {
		t.Error("claude offered AskUserQuestion to a run nobody answers")
	}
}
