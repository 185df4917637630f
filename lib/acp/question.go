package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/protocol"
)

// The agent's questions (AskUserQuestion, codex's request for user
// input) reach the editor as a form, elicitation/create, when it said it
// takes them (clientCapabilities.elicitation.form); otherwise as
// session/request_permission, one a question, asked one after another,
// with an option a choice and one to reject. Whatever the editor does not
// answer (decline, cancel, reject, an error, no answer before the
// deadline) is no answer: the agent is told so, never a made-up choice.

// elicitationParams is elicitation/create in form mode, tied to the
// session and, when known, the question's tool call.
type elicitationParams struct {
	SessionID       string            `json:"sessionId"`
	ToolCallID      string            `json:"toolCallId,omitempty"`
	Mode            string            `json:"mode"`
	Message         string            `json:"message"`
	RequestedSchema elicitationSchema `json:"requestedSchema"`
}

// elicitationSchema is the form: one property a question, all required.
type elicitationSchema struct {
	Type       string                         `json:"type"`
	Properties map[string]elicitationProperty `json:"properties"`
	Required   []string                       `json:"required"`
}

// elicitationProperty is one question: a string of an enum (its
// choices), an array of such strings (several may be chosen), or a free
// string.
type elicitationProperty struct {
	Type        string            `json:"type"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Enum        []string          `json:"enum,omitempty"`
	Items       *elicitationItems `json:"items,omitempty"`
}

type elicitationItems struct {
	Type string   `json:"type"`
	Enum []string `json:"enum"`
}

// elicitationResult is the editor's answer.
type elicitationResult struct {
	Action  string                     `json:"action"`
	Content map[string]json.RawMessage `json:"content"`
}

// formOf is the questions as a form.
func formOf(sessionID, toolCallID string, qs []protocol.Question) elicitationParams {
	p := elicitationParams{SessionID: sessionID, ToolCallID: toolCallID, Mode: "form", Message: messageOf(qs),
		RequestedSchema: elicitationSchema{Type: "object", Properties: map[string]elicitationProperty{}, Required: []string{}}}
	for _, q := range qs {
		prop := elicitationProperty{Type: "string", Title: q.Header, Description: describe(q)}
		var labels []string
		for _, o := range q.Options {
			labels = append(labels, o.Label)
		}
		switch {
		case len(labels) > 0 && q.MultiSelect:
			prop.Type, prop.Items = "array", &elicitationItems{Type: "string", Enum: labels}
		case len(labels) > 0:
			prop.Enum = labels
		}
		p.RequestedSchema.Properties[q.ID] = prop
		p.RequestedSchema.Required = append(p.RequestedSchema.Required, q.ID)
	}
	return p
}

// messageOf is what the form says above its fields: the question, when
// there is one, else how many.
func messageOf(qs []protocol.Question) string {
	if len(qs) == 1 {
		return qs[0].Question
	}
	return fmt.Sprintf("The agent asks %d questions.", len(qs))
}

// describe is a question with its choices' descriptions, for a field or
// a permission request.
func describe(q protocol.Question) string {
	var b strings.Builder
	b.WriteString(q.Question)
	for _, o := range q.Options {
		if o.Description != "" {
			fmt.Fprintf(&b, "\n- %s: %s", o.Label, o.Description)
		}
	}
	return b.String()
}

// answersOf reads an accepted form's content: each question's label, or
// labels, or free text.
func answersOf(qs []protocol.Question, content map[string]json.RawMessage) map[string][]string {
	answers := map[string][]string{}
	for _, q := range qs {
		raw, ok := content[q.ID]
		if !ok {
			continue
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			answers[q.ID] = []string{one}
		case json.Unmarshal(raw, &many) == nil:
			answers[q.ID] = many
		default: // a number or a boolean, as a free answer's text
			answers[q.ID] = []string{string(raw)}
		}
	}
	return answers
}

// question puts one question request of the host to the client and
// answers the host with what the client said; a request the host resolved
// first (its deadline, an interrupt, the run's end) is withdrawn from the
// client.
func (t *turn) question(q *protocol.QuestionRequest) {
	id := q.ToolCallID
	if id == "" {
		id = "question-" + q.RequestID
	}
	t.mu.Lock()
	c := t.call(id)
	ours := !c.reported // no tool call of the agent's shows it: the face's to end
	if ours {
		c.reported, c.title = true, titleOfQuestions(q.Questions)
		t.update(toolCall{SessionUpdate: "tool_call", ToolCallID: id, Title: c.title, Kind: "other", Status: statusPending})
	}
	t.mu.Unlock()
	answered := false
	if ours {
		defer func() { t.endQuestion(id, answered) }()
	}
	deadline := time.Duration(q.TimeoutMs) * time.Millisecond
	if deadline <= 0 {
		deadline = time.Minute
	}
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	var a hostclient.QuestionAnswer
	var ok bool
	if t.a.elicits() {
		a, ok = t.elicit(id, q, timer.C)
	} else {
		a, ok = t.askByPermission(id, q, timer.C)
	}
	if !ok {
		return // the host resolved it first; its word stands
	}
	ctx, cancel := t.a.callCtx()
	defer cancel()
	err := t.a.hc.AnswerQuestion(ctx, t.run.ID, q.RequestID, a)
	answered = err == nil && !a.Decline
	var re *hostclient.RemoteError
	if errors.As(err, &re) && re.Code == protocol.CodeBadRequest && !a.Decline {
		// The editor answered what was not asked (a label not offered):
		// no answer, rather than a run waiting for its deadline.
		_ = t.a.hc.AnswerQuestion(ctx, t.run.ID, q.RequestID, hostclient.QuestionAnswer{Decline: true})
	}
}

// endQuestion ends the tool call the face showed for a question: completed
// when it was answered, failed when not.
func (t *turn) endQuestion(id string, answered bool) {
	status := statusFailed
	if answered {
		status = statusCompleted
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.call(id)
	if c.final {
		return
	}
	c.final = true
	t.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: status})
}

// titleOfQuestions is a question's tool call's title: its header and
// question, or how many.
func titleOfQuestions(qs []protocol.Question) string {
	if len(qs) != 1 {
		return strconv.Itoa(len(qs)) + " questions"
	}
	if qs[0].Header != "" {
		return qs[0].Header + ": " + qs[0].Question
	}
	return qs[0].Question
}

// wait waits for the client's answer to a request, unless the turn ends
// or the deadline passes first (then the client's question is withdrawn,
// and ok is false).
func (t *turn) wait(answer <-chan *incoming, giveUp func(), deadline <-chan time.Time) (*incoming, bool) {
	select {
	case m := <-answer:
		return m, true // nil: the client is gone, or the input ended
	case <-t.ended:
	case <-deadline:
	}
	giveUp()
	return nil, false
}

// elicit asks the questions as one form.
func (t *turn) elicit(id string, q *protocol.QuestionRequest, deadline <-chan time.Time) (hostclient.QuestionAnswer, bool) {
	decline := hostclient.QuestionAnswer{Decline: true}
	answer, giveUp := t.a.w.request("elicitation/create", formOf(t.s.id, id, q.Questions))
	m, ok := t.wait(answer, giveUp, deadline)
	if !ok {
		return decline, false
	}
	if m == nil || m.Error != nil || m.Result == nil {
		return decline, true
	}
	var r elicitationResult
	if json.Unmarshal(m.Result, &r) != nil || r.Action != "accept" {
		return decline, true // decline, cancel, or an action not known
	}
	answers := answersOf(q.Questions, r.Content)
	if len(answers) == 0 {
		return decline, true
	}
	return hostclient.QuestionAnswer{Answers: answers}, true
}

// optDecline is the permission option that answers no question.
const optDecline = "decline"

// askByPermission asks each question that has choices as a permission
// request of its own, in turn: an option a choice (one only, even where
// several could be chosen), and one to reject, which leaves the whole
// request unanswered. A question without choices cannot be asked so, and
// stays unanswered.
func (t *turn) askByPermission(id string, q *protocol.QuestionRequest, deadline <-chan time.Time) (hostclient.QuestionAnswer, bool) {
	decline := hostclient.QuestionAnswer{Decline: true}
	answers := map[string][]string{}
	for i, qu := range q.Questions {
		if len(qu.Options) == 0 {
			continue
		}
		title := qu.Question
		if len(q.Questions) > 1 {
			title = fmt.Sprintf("Question %d of %d: %s", i+1, len(q.Questions), qu.Question)
		}
		params := permissionParams{SessionID: t.s.id, ToolCall: toolCall{ToolCallID: id, Title: title, Kind: "other", Status: statusPending,
			Content: []any{toolContent{Type: "content", Content: text(describe(qu))}}}}
		for j, o := range qu.Options {
			params.Options = append(params.Options, permissionOption{OptionID: "choice-" + strconv.Itoa(j), Name: o.Label, Kind: "allow_once"})
		}
		params.Options = append(params.Options, permissionOption{OptionID: optDecline, Name: "Don't answer", Kind: "reject_once"})
		answer, giveUp := t.a.w.request("session/request_permission", params)
		m, ok := t.wait(answer, giveUp, deadline)
		if !ok {
			return decline, false
		}
		label, chosen := choiceOf(m, qu)
		if !chosen {
			return decline, true
		}
		answers[qu.ID] = []string{label}
	}
	if len(answers) == 0 {
		return decline, true
	}
	return hostclient.QuestionAnswer{Answers: answers}, true
}

// choiceOf is the label of the option the client selected, if it
// selected a choice.
func choiceOf(m *incoming, q protocol.Question) (string, bool) {
	if m == nil || m.Error != nil || m.Result == nil {
		return "", false
	}
	var r permissionResult
	if json.Unmarshal(m.Result, &r) != nil || r.Outcome.Outcome != "selected" {
		return "", false
	}
	n, ok := strings.CutPrefix(r.Outcome.OptionID, "choice-")
	if !ok {
		return "", false
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 || i >= len(q.Options) {
		return "", false
	}
	return q.Options[i].Label, true
}
