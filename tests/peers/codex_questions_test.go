package peers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/backend/codex"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/protocol"
)

// colorQuestion has the fake model call codex's request_user_input.
const colorQuestion = `CALL request_user_input {"questions":[{"id":"color","header":"Color","question":"Which color?","options":[{"label":"A","description":"red"},{"label":"B","description":"blue"}]}]}`

// codexBackendOn is agent-host's codex backend, in this process, on the
// pinned codex behind api.
func codexBackendOn(t *testing.T, api *server, env ...string) *codex.Backend {
	t.Helper()
	env = append(append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin, "XDG_STATE_HOME="+t.TempDir()), env...)
	b, err := codex.New(json.RawMessage(`{"codex":{"level":2}}`), host.Env{Environ: env, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// runCodexTurn runs turn (its Emit and Log filled in) and returns its
// events.
func runCodexTurn(t *testing.T, b *codex.Backend, turn *host.Turn) []protocol.AgentEvent {
	t.Helper()
	var mu sync.Mutex
	var evs []protocol.AgentEvent
	turn.Emit = func(ev protocol.AgentEvent) {
		mu.Lock()
		evs = append(evs, ev)
		mu.Unlock()
	}
	turn.Log = func(level, msg string) { t.Logf("%s: %s", level, msg) }
	if turn.Interrupted == nil {
		turn.Interrupted = make(chan struct{})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := b.RunTurn(ctx, turn); err != nil {
		t.Fatalf("%s: %v", turn.Params.Prompt, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]protocol.AgentEvent(nil), evs...)
}

// toolOutputs are the outputs of the tool calls the fake API was given,
// in order (function_call_output items, each once).
func toolOutputs(api *server) []string {
	api.mu.Lock()
	defer api.mu.Unlock()
	seen := map[string]bool{}
	var outs []string
	for _, b := range api.bodies {
		var req struct {
			Input []map[string]any `json:"input"`
		}
		_ = json.Unmarshal([]byte(b), &req)
		for _, it := range req.Input {
			if it["type"] != "function_call_output" && it["type"] != "custom_tool_call_output" {
				continue
			}
			key, _ := it["call_id"].(string)
			out, _ := it["output"].(string)
			if !seen[key+out] {
				seen[key+out] = true
				outs = append(outs, out)
			}
		}
	}
	return outs
}

// codex's request_user_input, in agent-host's codex backend: with a
// question channel the question (codex's id, header, options) reaches it
// and the answer "B" reaches the model as the tool's output; the same
// chat's next turn without one tells the model nobody is here to answer;
// a chat whose thread never took questions has the tool off (codex tells
// the model it is unavailable); nothing claims an answer.
func TestCodexBackendQuestions(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	b := codexBackendOn(t, api)
	work := t.TempDir()
	var asked []host.QuestionAsk
	turn := &host.Turn{RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: colorQuestion, Workspace: work, Questions: "ask"},
		Question: func(q host.QuestionAsk) host.QuestionAnswer {
			asked = append(asked, q)
			return host.QuestionAnswer{Answered: true, Answers: map[string][]string{"color": {"B"}}, By: "daemon"}
		}}
	evs := runCodexTurn(t, b, turn)
	if len(asked) != 1 || len(asked[0].Questions) != 1 {
		t.Fatalf("asked %+v", asked)
	}
	q := asked[0].Questions[0]
	if q.ID != "color" || q.Header != "Color" || q.Question != "Which color?" || len(q.Options) != 2 || q.Options[1].Label != "B" || asked[0].ToolCallID == "" {
		t.Errorf("question %+v", asked[0])
	}
	outs := toolOutputs(api)
	if len(outs) != 1 || outs[0] != `{"answers":{"color":{"answers":["B"]}}}` {
		t.Errorf("the model was given %q", outs)
	}
	if text := last(evs).Text; !strings.Contains(text, `"B"`) {
		t.Errorf("the turn ended with %q", text)
	}

	turn = &host.Turn{RunID: "r2", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: colorQuestion, Workspace: work}}
	runCodexTurn(t, b, turn)
	outs = toolOutputs(api)
	if len(outs) != 2 || !strings.Contains(outs[1], "Nobody is here to answer") || strings.Contains(outs[1], `"A"`) || strings.Contains(outs[1], `"B"`) {
		t.Errorf("a turn without questions: the model was given %q", outs)
	}

	turn = &host.Turn{RunID: "r3", Params: protocol.ChatRunParams{ChatID: "c2", Prompt: colorQuestion, Workspace: work}}
	runCodexTurn(t, b, turn)
	outs = toolOutputs(api)
	if len(outs) != 3 || !strings.Contains(outs[2], "unavailable") || strings.Contains(outs[2], `"A"`) || strings.Contains(outs[2], `"B"`) {
		t.Errorf("a thread without questions: the model was given %q", outs)
	}

	// And the other way round, the thread is loaded again with them.
	turn = &host.Turn{RunID: "r4", Params: protocol.ChatRunParams{ChatID: "c2", Prompt: colorQuestion, Workspace: work, Questions: "ask"},
		Question: func(q host.QuestionAsk) host.QuestionAnswer {
			return host.QuestionAnswer{Answered: true, Answers: map[string][]string{"color": {"A"}}, By: "daemon"}
		}}
	runCodexTurn(t, b, turn)
	if outs = toolOutputs(api); len(outs) != 4 || outs[3] != `{"answers":{"color":{"answers":["A"]}}}` {
		t.Errorf("questions after a thread without: the model was given %q", outs)
	}
}

// A question nobody answers (the deadline, a decline): the model is told
// there was no answer, in codex's shape, and given no choice.
func TestCodexBackendQuestionUnanswered(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	b := codexBackendOn(t, api)
	turn := &host.Turn{RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: colorQuestion, Workspace: t.TempDir(), Questions: "ask"},
		Question: func(q host.QuestionAsk) host.QuestionAnswer {
			return host.QuestionAnswer{Message: "no answer within 1.5s", By: protocol.ResolvedByTimeout}
		}}
	runCodexTurn(t, b, turn)
	outs := toolOutputs(api)
	if len(outs) != 1 || !strings.Contains(outs[0], "no answer within 1.5s") || strings.Contains(outs[0], `"A"`) || strings.Contains(outs[0], `"B"`) {
		t.Errorf("the model was given %q", outs)
	}
}

// codexHostAt starts agent-host --backend codex at level against api,
// with env added to its environment.
func codexHostAt(t *testing.T, api *server, level int, env ...string) hostclient.Client {
	t.Helper()
	env = append(append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin), env...)
	c, err := hostclient.Subprocess(hostclient.SubprocessOptions{Path: filepath.Join(filepath.Dir(runagentBin), "agent-host"),
		Args: []string{"--backend", "codex"}, Env: env, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Hello(ctx, "peers", json.RawMessage(`{"codex":{"level":`+strconv.Itoa(level)+`}}`)); err != nil {
		t.Fatal(err)
	}
	return c
}

// codex's request_user_input through agent-host protocol v1: a run with
// params.questions "ask" sends the daemon a question message (codex's id,
// header and options), answer_question "B" reaches the model as the
// tool's output; a run without it gets no question message, and the
// model is told nobody is here to answer, no answer claimed.
func TestHostCodexQuestions(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	c := codexHostAt(t, api, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, err := c.RunTurn(ctx, "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: colorQuestion, Questions: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	var q *protocol.QuestionRequest
	select {
	case q = <-r.Questions():
	case <-ctx.Done():
		t.Fatal("no question within 90s")
	}
	if q == nil || len(q.Questions) != 1 || q.Questions[0].ID != "color" || q.Questions[0].Header != "Color" || len(q.Questions[0].Options) != 2 || q.ToolCallID == "" {
		t.Fatalf("question %+v", q)
	}
	if err := c.AnswerQuestion(ctx, "r1", q.RequestID, hostclient.QuestionAnswer{Answers: map[string][]string{"color": {"B"}}}); err != nil {
		t.Fatal(err)
	}
	evs, done := collect(t, r)
	if done.StopReason != protocol.StopCompleted {
		t.Fatalf("ended %s: %+v", done.StopReason, last(evs))
	}
	if res, ok := r.QuestionResolution(q.RequestID); !ok || !res.Answered || res.By != protocol.ResolvedByDaemon {
		t.Errorf("resolved %+v", res)
	}
	outs := toolOutputs(api)
	if len(outs) != 1 || outs[0] != `{"answers":{"color":{"answers":["B"]}}}` {
		t.Errorf("the model was given %q", outs)
	}

	r, err = c.RunTurn(ctx, "r2", protocol.ChatRunParams{ChatID: "c1", Prompt: colorQuestion})
	if err != nil {
		t.Fatal(err)
	}
	_, done = collect(t, r)
	if q, ok := <-r.Questions(); ok || done.StopReason != protocol.StopCompleted {
		t.Errorf("without questions: asked %+v, ended %s", q, done.StopReason)
	}
	outs = toolOutputs(api)
	if len(outs) != 2 || !strings.Contains(outs[1], "Nobody is here to answer") || strings.Contains(outs[1], `"B"`) || strings.Contains(outs[1], `"A"`) {
		t.Errorf("without questions the model was given %q", outs)
	}
}

// A run interrupted while codex's question is pending ends interrupted,
// the question resolved by the interrupt, and the chat goes on.
func TestHostCodexQuestionInterrupted(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	c := codexHostAt(t, api, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, err := c.RunTurn(ctx, "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: colorQuestion, Questions: protocol.QuestionsAsk})
	if err != nil {
		t.Fatal(err)
	}
	var q *protocol.QuestionRequest
	select {
	case q = <-r.Questions():
	case <-ctx.Done():
		t.Fatal("no question within 90s")
	}
	if ok, err := c.Interrupt(ctx, "c1", ""); !ok || err != nil {
		t.Fatalf("interrupt: %v %v", ok, err)
	}
	_, done := collect(t, r)
	if done.StopReason != protocol.StopInterrupted {
		t.Errorf("ended %s", done.StopReason)
	}
	if res, ok := r.QuestionResolution(q.RequestID); !ok || res.Answered || res.By != protocol.ResolvedByInterrupt {
		t.Errorf("resolved %+v", res)
	}
	if outs := toolOutputs(api); len(outs) > 0 && strings.Contains(outs[0], `"B"`) {
		t.Errorf("the model was given %q", outs)
	}
	evs, done, err := runTurn(t, c, "r2", "c1", "SAY after the interrupt")
	if err != nil || done.StopReason != protocol.StopCompleted || last(evs).Text != "after the interrupt" {
		t.Fatalf("next turn: %+v %+v %v", last(evs), done, err)
	}
}
