package claude

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

const askInput = `{"questions":[
 {"question":"Which database?","header":"Database","options":[{"label":"Postgres","description":"one server"},{"label":"SQLite","description":"a file"}],"multiSelect":false},
 {"question":"Which features?","header":"Database","options":[{"label":"A","description":"a"},{"label":"B, with comma","description":"b"}],"multiSelect":true},
 {"question":"Anything else?","options":[{"label":"No","description":"n"},{"label":"Yes","description":"y"}]}]}`

// A question's id is its header; one without a header, or whose header
// another has, is q and its place.
func TestQuestionsOf(t *testing.T) {
	qs := questionsOf(gjson.Parse(askInput))
	var ids []string
	for _, q := range qs {
		ids = append(ids, q.ID)
	}
	if strings.Join(ids, ",") != "Database,q2,q3" {
		t.Errorf("ids %v", ids)
	}
	if qs[0].Question != "Which database?" || len(qs[0].Options) != 2 || qs[0].Options[1].Description != "a file" || qs[0].MultiSelect || !qs[1].MultiSelect {
		t.Errorf("questions %+v", qs)
	}
}

// An answer goes back as the input with answers keyed by question text,
// a multi-select's labels joined as Claude Code's own dialog joins them.
func TestQuestionAnswered(t *testing.T) {
	in := gjson.Parse(askInput)
	qs := questionsOf(in)
	res := questionResult(in, qs, host.QuestionAnswer{Answered: true, Answers: map[string][]string{"Database": {"SQLite"}, "q2": {"A", "B, with comma"}}})
	b, _ := json.Marshal(res)
	got := gjson.ParseBytes(b)
	if got.Get("behavior").Str != "allow" || got.Get("updatedInput.questions.#").Int() != 3 ||
		got.Get(`updatedInput.answers.Which database\?`).Str != "SQLite" || got.Get(`updatedInput.answers.Which features\?`).Str != `A, "B, with comma"` ||
		got.Get(`updatedInput.answers.Anything else\?`).Exists() {
		t.Errorf("result %s", b)
	}
}

// No answer is a denial that says so, never an empty or made-up choice;
// an interrupt also stops the turn.
func TestQuestionUnanswered(t *testing.T) {
	in := gjson.Parse(askInput)
	qs := questionsOf(in)
	for _, a := range []host.QuestionAnswer{
		{Answered: false, By: protocol.ResolvedByTimeout, Message: "There is no answer to the question. Do not assume one."},
		{Answered: true, Answers: map[string][]string{}},
		{Answered: false, By: protocol.ResolvedByInterrupt},
	} {
		res := questionResult(in, qs, a)
		msg, _ := res["message"].(string)
		if res["behavior"] != "deny" || !strings.Contains(msg, "no answer") && !strings.Contains(msg, "not answered") || !strings.Contains(msg, "Do not assume one") || res["updatedInput"] != nil {
			t.Errorf("%+v: %v", a, res)
		}
		if (a.By == protocol.ResolvedByInterrupt) != (res["interrupt"] == true) {
			t.Errorf("%+v: interrupt %v", a, res["interrupt"])
		}
		if a.Message != "" && msg != a.Message {
			t.Errorf("the host's message is lost: %s", msg)
		}
	}
}

// A run that takes no questions tells the agent nobody is there; one
// that does puts them to Turn.Question.
func TestQuestionControl(t *testing.T) {
	req := `{"type":"control_request","request_id":"R1","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":` + askInput + `,"tool_use_id":"toolu_1"}}`
	run := func(tr *host.Turn) gjson.Result {
		out := make(stdinLines, 4)
		p := &cli{out: newWriter(out)}
		x := &translator{t: tr, p: p}
		x.control(req)
		// The answer is sent from a goroutine of its own.
		return gjson.Parse(waitLine(t, out))
	}
	got := run(&host.Turn{})
	if got.Get("response.request_id").Str != "R1" || got.Get("response.response.behavior").Str != "deny" ||
		got.Get("response.response.message").Str != host.NoAnswerMessage {
		t.Errorf("no questions: %s", got.Raw)
	}
	var asked host.QuestionAsk
	got = run(&host.Turn{Question: func(q host.QuestionAsk) host.QuestionAnswer {
		asked = q
		return host.QuestionAnswer{Answered: true, Answers: map[string][]string{"Database": {"Postgres"}}}
	}})
	if asked.ToolCallID != "toolu_1" || len(asked.Questions) != 3 || got.Get("response.response.behavior").Str != "allow" ||
		got.Get(`response.response.updatedInput.answers.Which database\?`).Str != "Postgres" {
		t.Errorf("asked %+v, answered %s", asked, got.Raw)
	}
}
