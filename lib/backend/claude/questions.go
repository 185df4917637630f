package claude

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// Claude Code's AskUserQuestion reaches the backend as a can_use_tool
// request (the CLI offers the tool in -p mode only with
// --permission-prompt-tool stdio). Its input is
// {questions:[{question, header, options:[{label, description}],
// multiSelect}]}; an allow whose updatedInput carries answers {question
// text: chosen label} is what the model then reads in the tool result
// ("Your questions have been answered: "Q"="B""). A deny's message is
// the tool result, as an error: how the agent learns nobody answered.

// notAnswered is what the agent is told of questions nobody answered
// when the host says nothing itself.
const notAnswered = "The questions were not answered: no choice was made. Do not assume one; go on without it if you can, or stop and say what you need to know."

// questionsOf reads AskUserQuestion's input as the daemon is asked it:
// each question's id is its header, or q1, q2 … where it has none or
// shares another's.
func questionsOf(input gjson.Result) []protocol.Question {
	var qs []protocol.Question
	seen := map[string]bool{}
	for i, q := range input.Get("questions").Array() {
		p := protocol.Question{Header: q.Get("header").Str, Question: q.Get("question").Str, MultiSelect: q.Get("multiSelect").Bool()}
		p.ID = p.Header
		if p.ID == "" || seen[p.ID] {
			p.ID = "q" + strconv.Itoa(i+1)
		}
		seen[p.ID] = true
		for _, o := range q.Get("options").Array() {
			p.Options = append(p.Options, protocol.QuestionOption{Label: o.Get("label").Str, Description: o.Get("description").Str})
		}
		qs = append(qs, p)
	}
	return qs
}

// questionResult is Claude Code's answer to an AskUserQuestion call: an
// allow whose input carries the answers, keyed by question text; or, with
// no answer (none given, declined, the deadline, an interrupt, nobody to
// ask), a deny telling the agent so. An interrupt also stops the turn.
func questionResult(input gjson.Result, qs []protocol.Question, a host.QuestionAnswer) map[string]any {
	answers := map[string]string{}
	if a.Answered {
		for _, q := range qs {
			if labels := a.Answers[q.ID]; len(labels) > 0 {
				answers[q.Question] = joinLabels(labels)
			}
		}
	}
	if len(answers) == 0 {
		msg := a.Message
		if msg == "" {
			msg = notAnswered
		}
		res := map[string]any{"behavior": "deny", "message": msg}
		if a.By == protocol.ResolvedByInterrupt || a.By == protocol.ResolvedByShutdown {
			res["interrupt"] = true
		}
		return res
	}
	var in map[string]any
	if json.Unmarshal([]byte(input.Raw), &in) != nil || in == nil {
		in = map[string]any{}
	}
	in["answers"] = answers
	return map[string]any{"behavior": "allow", "updatedInput": in}
}

// joinLabels is a multi-select answer as Claude Code reads one: the
// labels joined by ", ", a label holding ", " or a quote written as a
// JSON string (its own dialog's form, which it parses back to labels).
func joinLabels(labels []string) string {
	parts := make([]string, len(labels))
	for i, l := range labels {
		if strings.Contains(l, ", ") || strings.Contains(l, `"`) {
			b, _ := json.Marshal(l)
			l = string(b)
		}
		parts[i] = l
	}
	return strings.Join(parts, ", ")
}

// question puts an AskUserQuestion call to the run's person, or, in a run
// that takes no questions, tells the agent nobody is there; then answers
// the CLI's request reqID.
func (x *translator) question(reqID string, req gjson.Result) {
	input := req.Get("input")
	qs := questionsOf(input)
	a := host.QuestionAnswer{Message: host.NoAnswerMessage}
	if x.t.Question != nil && len(qs) > 0 {
		a = x.t.Question(host.QuestionAsk{ToolCallID: req.Get("tool_use_id").Str, Questions: qs})
	}
	res := questionResult(input, qs, a)
	_ = x.p.send(map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "success", "request_id": reqID, "response": res}})
}
