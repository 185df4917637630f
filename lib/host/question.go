package host

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/agentry/agentry/lib/protocol"
)

// asked is what a question request keeps to check an answer: the ids of
// the questions asked, and which of them are multi-select.
type asked struct {
	ids   map[string]bool
	multi map[string]bool
}

// questionKind is the question request's kind: an answer nobody gave is
// no answer, which the agent is told to assume nothing from.
func questionKind() requestKind[QuestionAnswer] {
	return requestKind[QuestionAnswer]{
		what: "question requests",
		resolved: func(runID, reqID string, a QuestionAnswer) protocol.Msg {
			return &protocol.QuestionResolved{RunID: runID, RequestID: reqID, Answered: a.Answered, By: a.By}
		},
		nobody: noAnswer,
	}
}

// question sends a question request of the run and waits for it to be
// resolved (await). The questions' ids are filled where the backend left
// them empty (q1, q2 …), and the answer's keys are those ids.
func (r *run) question(ctx context.Context, timeout time.Duration, q QuestionAsk) QuestionAnswer {
	qs := questionIDs(q.Questions)
	reqID := r.h.newID("q", &r.h.questions)
	m := asked{ids: map[string]bool{}, multi: map[string]bool{}}
	for _, x := range qs {
		m.ids[x.ID] = true
		m.multi[x.ID] = x.MultiSelect
	}
	req := &protocol.QuestionRequest{RunID: r.id, RequestID: reqID, ToolCallID: q.ToolCallID,
		Questions: qs, TimeoutMs: timeout.Milliseconds()}
	return await(ctx, r, &r.questions, questionKind(), reqID, m, req, timeout, func() QuestionAnswer {
		r.h.Log("warn", "run "+r.id, fmt.Sprintf("question request %s had no answer within %v", reqID, timeout))
		a := noAnswer(protocol.ResolvedByTimeout)
		a.Message = fmt.Sprintf("Nobody answered the question within %v: there is no answer. Do not assume one.", timeout)
		return a
	})
}

// NoAnswerMessage is what an agent is told when nobody is there to
// answer its questions (a run without params.questions "ask"): the
// backend's tool result, never a made-up choice.
const NoAnswerMessage = "Nobody is here to answer questions in this run: there is no answer. Do not assume one; go on without it if you can, or stop and say what you need to know."

// noAnswer is the answer of a question request nobody answered, resolved
// by by.
func noAnswer(by string) QuestionAnswer {
	msg := "There is no answer to the question"
	switch by {
	case protocol.ResolvedByDaemon:
		msg = "The person declined to answer the question"
	case protocol.ResolvedByInterrupt:
		msg += ": the run was interrupted"
	case protocol.ResolvedByShutdown:
		msg += ": the host is stopping"
	case protocol.ResolvedByRunEnded:
		msg += ": the run ended"
	case protocol.ResolvedByInputEnd:
		msg += ": nobody can answer, the host's input has ended"
	}
	return QuestionAnswer{By: by, Message: msg + ". Do not assume one."}
}

// questionIDs returns the questions with every id filled: an empty one
// becomes its header when no other question has that id, else qN (N its
// place, from 1).
func questionIDs(qs []protocol.Question) []protocol.Question {
	out := slices.Clone(qs)
	seen := map[string]bool{}
	for _, q := range out {
		seen[q.ID] = true
	}
	for i := range out {
		if out[i].ID != "" {
			continue
		}
		id := out[i].Header
		if id == "" || seen[id] {
			id = "q" + strconv.Itoa(i+1)
		}
		out[i].ID = id
		seen[id] = true
	}
	return out
}

// resolveQuestion ends the pending question request reqID with a, and
// reports whether it was pending.
func (r *run) resolveQuestion(reqID string, a QuestionAnswer) bool {
	return settle(r, &r.questions, questionKind(), reqID, a)
}

// answerQuestion serves answer_question: an answer to a request that is
// not pending (an unknown run or request, or one already resolved) is an
// unknown_request error and changes nothing; one that names a question
// the request did not ask, or gives a single-choice question more than
// one answer, is a bad_request, and the request stays pending.
func (h *Host) answerQuestion(m *protocol.AnswerQuestion) {
	if m.Decline && len(m.Answers) > 0 {
		h.reply(m.ID, errReply(m.ID, protocol.CodeBadRequest, "answer_question has answers or decline, not both", false))
		return
	}
	if !m.Decline && len(m.Answers) == 0 {
		h.reply(m.ID, errReply(m.ID, protocol.CodeBadRequest, "answer_question needs answers, or decline", false))
		return
	}
	r := h.answered(m.ID, m.RunID)
	if r == nil {
		return
	}
	p := pendingOf(r, &r.questions, m.RequestID)
	if p == nil {
		h.reply(m.ID, errReply(m.ID, protocol.CodeUnknownRequest,
			fmt.Sprintf("run %s has no pending question request %s", m.RunID, m.RequestID), false))
		return
	}
	if msg := p.meta.check(m.Answers); msg != "" {
		h.reply(m.ID, errReply(m.ID, protocol.CodeBadRequest, fmt.Sprintf("question request %s: %s", m.RequestID, msg), false))
		return
	}
	a := noAnswer(protocol.ResolvedByDaemon)
	if !m.Decline {
		a = QuestionAnswer{Answered: true, Answers: m.Answers, By: protocol.ResolvedByDaemon}
	}
	if !r.resolveQuestion(m.RequestID, a) {
		h.reply(m.ID, errReply(m.ID, protocol.CodeUnknownRequest,
			fmt.Sprintf("run %s has no pending question request %s", m.RunID, m.RequestID), false))
		return
	}
	h.reply(m.ID, &protocol.OK{ID: m.ID})
}

// check says what is wrong with answers to the request, or "".
func (p asked) check(answers map[string][]string) string {
	ids := make([]string, 0, len(answers))
	for id := range answers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		switch {
		case !p.ids[id]:
			return fmt.Sprintf("it asked no question %q", id)
		case len(answers[id]) == 0 || slices.Contains(answers[id], ""):
			return fmt.Sprintf("the answer to %q is empty", id)
		case len(answers[id]) > 1 && !p.multi[id]:
			return fmt.Sprintf("question %q takes one answer, not %d", id, len(answers[id]))
		}
	}
	return ""
}

// checkQuestions refuses a run whose params.questions is not a value the
// protocol has.
func checkQuestions(id string, p protocol.ChatRunParams) *protocol.Error {
	switch p.Questions {
	case "", protocol.QuestionsAsk:
		return nil
	}
	return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("questions %q: it is ask, or absent", p.Questions), false)
}
