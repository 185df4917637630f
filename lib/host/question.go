package host

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/agentry/agentry/lib/protocol"
)

// pendingQuestion is a question request awaiting its resolution; answer
// gets exactly one value, from whichever resolve came first.
type pendingQuestion struct {
	ids    map[string]bool // the ids of the questions asked
	multi  map[string]bool // the ids of the multi-select ones
	answer chan QuestionAnswer
}

// question sends a question request of the run and waits for it to be
// resolved: by the daemon, by its deadline, by an interrupt of the run,
// or by the host stopping. Whatever resolves it, question_resolved says
// so once, and the answer is final. The questions' ids are filled where
// the backend left them empty (q1, q2 …), and the answer's keys are those
// ids.
func (r *run) question(ctx context.Context, timeout time.Duration, q QuestionAsk) QuestionAnswer {
	qs := questionIDs(q.Questions)
	reqID := r.h.newQuestionID()
	p := &pendingQuestion{ids: map[string]bool{}, multi: map[string]bool{}, answer: make(chan QuestionAnswer, 1)}
	for _, x := range qs {
		p.ids[x.ID] = true
		p.multi[x.ID] = x.MultiSelect
	}
	r.mu.Lock()
	if r.done || r.asksEnded {
		r.mu.Unlock()
		return noAnswer(protocol.ResolvedByRunEnded)
	}
	if max := r.h.opts.MaxPendingPermissions; len(r.questions) >= max {
		r.asksEnded = true
		r.mu.Unlock()
		r.tooMany(max, "question requests")
		return noAnswer(protocol.ResolvedByRunEnded)
	}
	if r.questions == nil {
		r.questions = map[string]*pendingQuestion{}
	}
	r.questions[reqID] = p
	r.h.send(&protocol.QuestionRequest{RunID: r.id, RequestID: reqID, ToolCallID: q.ToolCallID,
		Questions: qs, TimeoutMs: timeout.Milliseconds()})
	r.mu.Unlock()

	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case a := <-p.answer:
		return a
	case <-t.C:
		r.h.Log("warn", "run "+r.id, fmt.Sprintf("question request %s had no answer within %v", reqID, timeout))
		a := noAnswer(protocol.ResolvedByTimeout)
		a.Message = fmt.Sprintf("Nobody answered the question within %v: there is no answer. Do not assume one.", timeout)
		r.resolveQuestion(reqID, a)
	case <-r.interrupt:
		r.resolveQuestion(reqID, noAnswer(protocol.ResolvedByInterrupt))
	case <-ctx.Done():
		r.resolveQuestion(reqID, noAnswer(protocol.ResolvedByShutdown))
	}
	return <-p.answer
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
// reports whether it was pending: only the first resolve of a request
// does anything.
func (r *run) resolveQuestion(reqID string, a QuestionAnswer) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.questions[reqID]
	if p == nil {
		return false
	}
	delete(r.questions, reqID)
	r.h.send(&protocol.QuestionResolved{RunID: r.id, RequestID: reqID, Answered: a.Answered, By: a.By})
	p.answer <- a
	return true
}

// pendingQuestionOf is the pending question request reqID of the run.
func (r *run) pendingQuestionOf(reqID string) *pendingQuestion {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.questions[reqID]
}

func (h *Host) newQuestionID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.questions++
	return "q" + strconv.FormatInt(h.questions, 10)
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
	h.mu.Lock()
	r := h.runs[m.RunID]
	h.mu.Unlock()
	if r == nil {
		h.reply(m.ID, errReply(m.ID, protocol.CodeUnknownRequest, "no run "+m.RunID+" is in flight", false))
		return
	}
	p := r.pendingQuestionOf(m.RequestID)
	if p == nil {
		h.reply(m.ID, errReply(m.ID, protocol.CodeUnknownRequest,
			fmt.Sprintf("run %s has no pending question request %s", m.RunID, m.RequestID), false))
		return
	}
	if msg := p.check(m.Answers); msg != "" {
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
func (p *pendingQuestion) check(answers map[string][]string) string {
	ids := make([]string, 0, len(answers))
	for id := range answers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		switch {
		case !p.ids[id]:
			return fmt.Sprintf("it asked no question %q", id)
		case len(answers[id]) == 0:
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
