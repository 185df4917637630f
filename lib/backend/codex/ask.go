package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/confine"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// What a turn asks of codex beyond its text: the questions of its
// request_user_input tool, and the approvals of an ask level, each put to
// the host (Turn.Question, Turn.Ask) with the call in a policy's terms.

// threadMode is what a thread is loaded with that a turn may need: a
// thread without what the turn needs is loaded again (unsubscribed, then
// resumed with the turn's configuration).
type threadMode struct {
	// questions: codex's default_mode_request_user_input feature is on,
	// so its request_user_input tool asks (item/tool/requestUserInput);
	// off, the tool tells the model it is unavailable, which is the truth
	// when nobody is there to answer. On for a turn without questions,
	// the turn answers each "nobody is here" (host.NoAnswerMessage).
	questions bool
}

// modeOf is the mode of a run's turn: questions when it takes them (the
// host then gives the turn its Question).
func modeOf(p protocol.ChatRunParams) threadMode {
	return threadMode{questions: p.Questions == protocol.QuestionsAsk}
}

// featureQuestions is the thread configuration key of codex's feature.
const featureQuestions = "features.default_mode_request_user_input"

// unanswered is what the model is told of a question an answer left out.
const unanswered = "There is no answer to this question. Do not assume one."

// question answers item/tool/requestUserInput: the questions go to the
// host when the run takes them (in a goroutine: the turn reads on
// meanwhile), and the model is told nobody answered when it does not.
func (x *translator) question(m rpcMsg) {
	raw := m.Params.Get("questions")
	qs := questionsOf(raw)
	id := x.callID(m.Params, m.Params.Get("itemId").Str)
	x.t.Emit(protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: id, Name: "request_user_input",
		Input: rawJSON(map[string]json.RawMessage{"questions": json.RawMessage(raw.Raw)})})
	ask, srv, emit := x.t.Question, x.srv, x.t.Emit
	answer := func(a host.QuestionAnswer) {
		// The result first: what codex does with the answer comes after.
		res, text := questionReply(qs, a)
		emit(protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: text, IsError: !a.Answered})
		_ = srv.reply(m.ID, res)
	}
	if ask == nil {
		answer(host.QuestionAnswer{Message: host.NoAnswerMessage})
		return
	}
	go func() { answer(ask(host.QuestionAsk{ToolCallID: id, Questions: qs})) }()
}

// questionsOf is codex's questions in the protocol's terms: its ids kept.
func questionsOf(raw gjson.Result) []protocol.Question {
	var qs []protocol.Question
	raw.ForEach(func(_, q gjson.Result) bool {
		pq := protocol.Question{ID: q.Get("id").Str, Header: q.Get("header").Str, Question: q.Get("question").Str}
		if pq.ID == "" {
			pq.ID = pq.Header
		}
		if pq.ID == "" {
			pq.ID = fmt.Sprintf("q%d", len(qs)+1)
		}
		q.Get("options").ForEach(func(_, o gjson.Result) bool {
			pq.Options = append(pq.Options, protocol.QuestionOption{Label: o.Get("label").Str, Description: o.Get("description").Str})
			return true
		})
		qs = append(qs, pq)
		return true
	})
	return qs
}

// questionReply is codex's ToolRequestUserInputResponse for an answer,
// and the answer as the tool's result: each question's labels (or free
// text); a question left unanswered, or every one when no answer came, is
// given the no-answer sentence (the host's message) as its answer, never
// a made-up choice: codex passes nothing else on to the model, and an
// error reply reaches it as empty answers, which reads as a choice.
func questionReply(qs []protocol.Question, a host.QuestionAnswer) (questionResponse, string) {
	res := questionResponse{Answers: map[string]questionAnswer{}}
	var lines []string
	for _, q := range qs {
		got := a.Answers[q.ID]
		if !a.Answered || len(got) == 0 {
			why := unanswered
			if !a.Answered && a.Message != "" {
				why = a.Message
			}
			got = []string{why}
		}
		res.Answers[q.ID] = questionAnswer{Answers: got}
		lines = append(lines, q.ID+": "+strings.Join(got, ", "))
	}
	return res, strings.Join(lines, "\n")
}

// approval answers an approval request: put to the host with the call in
// a policy's terms when the run asks (in a goroutine: the turn reads on
// meanwhile), declined when it does not. A denial's message is put in the
// thread before codex is answered, so that the model reads why beside
// codex's own "rejected by user".
func (x *translator) approval(m rpcMsg, tool string) {
	if x.t.Ask == nil {
		_ = x.srv.reply(m.ID, approvalResponse{Decision: decisionDecline})
		return
	}
	input := x.inputs[m.Params.Get("itemId").Str]
	q := host.Ask{Tool: tool, Input: approvalInput(m.Params, input), Description: m.Params.Get("reason").Str,
		ToolCallID: x.callID(m.Params, m.Params.Get("itemId").Str), Choices: []string{protocol.DecisionAllow, protocol.DecisionAllowSession, protocol.DecisionDeny},
		Call: callOf(tool, m.Params, input)}
	if x.t.AskAll {
		q.Granted = x.granted(q.Call, m.Params)
	}
	ask, srv, logf, thread, askAll := x.t.Ask, x.srv, x.t.Log, x.thread, x.t.AskAll
	go func() {
		a := ask(q)
		if len(a.Input) > 0 && a.Allowed() {
			logf("warn", "codex cannot run a changed command: the input of the answer was ignored")
		}
		d := decision(a)
		if d == decisionAcceptForSession && askAll {
			// Under a policy every call is checked: codex is not to
			// run the next identical one unasked.
			d = decisionAccept
		}
		if d == decisionDecline && a.Message != "" {
			tell(srv, thread, fmt.Sprintf("agentry did not let the %s %s run: %s", tool, callText(q.Call), a.Message), logf)
		}
		_ = srv.reply(m.ID, approvalResponse{Decision: d})
	}()
}

// tell puts a developer message in the thread, which codex gives the
// model at its next request: after the output of the call being answered.
func tell(srv replier, thread, text string, logf func(level, msg string)) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	item := map[string]any{"type": "message", "role": "developer", "content": []any{map[string]string{"type": "input_text", "text": text}}}
	if _, err := srv.call(ctx, "thread/inject_items", threadInjectItemsParams{ThreadID: thread, Items: []any{item}}); err != nil {
		logf("warn", "codex: could not tell the model why a call was denied: "+err.Error())
	}
}

// callText is a call as the model's message names it.
func callText(c policy.Call) string {
	switch {
	case c.Command != "":
		return "`" + c.Command + "`"
	case len(c.Argv) > 0:
		if body, ok := shellBody(c.Argv); ok {
			return "`" + body + "`"
		}
		return "`" + strings.Join(c.Argv, " ") + "`"
	case len(c.Writes) > 0:
		return "of " + strings.Join(c.Writes, ", ")
	}
	return "call"
}

// callOf is an approval's call in a policy's terms: a command's argv and
// directory (codex runs `/bin/bash -c LINE`), or the paths a file change
// writes (from its item, which came before the request).
func callOf(tool string, p gjson.Result, itemInput json.RawMessage) policy.Call {
	c := policy.Call{Tool: tool, Dir: p.Get("cwd").Str}
	if tool == "command" {
		cmd := p.Get("command").Str
		if argv, ok := splitWords(cmd); ok {
			c.Argv = argv // the policy reads a shell's -c body as a line
		} else {
			c.Command = cmd
		}
		return c
	}
	gjson.GetBytes(itemInput, "changes").ForEach(func(_, ch gjson.Result) bool {
		c.Writes = append(c.Writes, ch.Get("path").Str)
		if mv := ch.Get("kind.move_path").Str; mv != "" {
			c.Writes = append(c.Writes, mv)
		}
		return true
	})
	return c
}

// shellBody is the command line of argv when argv is a shell's -c (codex
// runs a command as `/bin/bash -c LINE`, or -lc with a login shell).
func shellBody(argv []string) (string, bool) {
	if len(argv) != 3 {
		return "", false
	}
	switch filepath.Base(argv[0]) {
	case "sh", "bash", "zsh", "dash":
	default:
		return "", false
	}
	switch argv[1] {
	case "-c", "-lc", "-cl":
		return argv[2], true
	}
	return "", false
}

// granted says whether the turn's level runs the call with nobody asked:
// at levels 2 and 3, when the daemon does not decide (params.permissions
// "ask" asks it of every call), a command in the sandbox (not one the
// model asked to run outside it, which comes with its justification as
// the reason), and a file change inside the workspace or the chat's
// writable directories. Level 1 has no shell and no edits.
func (x *translator) granted(c policy.Call, p gjson.Result) bool {
	if x.level < 2 || x.t.Params.Permissions == protocol.PermissionsAsk {
		return false
	}
	if c.Tool == "command" {
		return p.Get("reason").Str == "" && !p.Get("additionalPermissions").IsObject()
	}
	if len(c.Writes) == 0 {
		return false
	}
	for _, w := range c.Writes {
		if !x.writable(w) {
			return false
		}
	}
	return true
}

// writable: path is inside one of the turn's writable roots (resolved,
// confine.Roots), and in no .git of theirs (confine.Writable), once
// symlinks are resolved.
func (x *translator) writable(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	for _, r := range x.roots {
		if _, err := confine.Writable(r, path); err == nil {
			return true
		}
	}
	return false
}

// splitWords splits a command line codex wrote (its argv joined, each
// word quoted as a POSIX shell reads it) into its words; ok is false when
// the line holds anything but words (an operator, an expansion), which
// codex's own never does.
func splitWords(s string) (words []string, ok bool) {
	var w strings.Builder
	in := false // a word is started (even an empty quoted one)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '$' || s[i] == '`' {
					return nil, false
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			in = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			w.WriteByte(s[i])
			in = true
		case strings.IndexByte("|&;<>()$`*?[#~{}", c) >= 0 && !(in && (c == '#' || c == '~')):
			return nil, false
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words, len(words) > 0
}
