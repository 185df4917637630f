package echo

import (
	"context"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
)

// turn runs prompt on a fresh echo backend and returns its events.
func turn(t *testing.T, tt *host.Turn, prompt string) []protocol.AgentEvent {
	t.Helper()
	b, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []protocol.AgentEvent
	tt.RunID, tt.Params.Prompt = "r1", prompt
	tt.Emit = func(ev protocol.AgentEvent) { evs = append(evs, ev) }
	if err := b.RunTurn(context.Background(), tt); err != nil {
		t.Fatal(err)
	}
	return evs
}

func completed(evs []protocol.AgentEvent) string { return evs[len(evs)-1].Text }

// A !tool call reaches Ask with the call in a policy's terms, granted
// unless the run asks; a denial's message is the tool's result.
func TestToolCall(t *testing.T) {
	for _, c := range []struct {
		tool, asks string
		want       policy.Call
		granted    bool
	}{
		{"Bash", "", policy.Call{Tool: "Bash", Command: "git push"}, true},
		{"shell", "ask", policy.Call{Tool: "shell", Command: "git push"}, false},
		{"Write", "", policy.Call{Tool: "Write", Writes: []string{"git push"}}, true},
		{"Read", "", policy.Call{Tool: "Read", Reads: []string{"git push"}}, true},
		{"WebFetch", "", policy.Call{Tool: "WebFetch", Hosts: []string{"git push"}}, true},
	} {
		var got host.Ask
		tt := &host.Turn{AskAll: true, Params: protocol.ChatRunParams{Permissions: c.asks}, Ask: func(q host.Ask) host.Answer {
			got = q
			return host.Answer{Decision: protocol.DecisionDeny, By: host.ByPolicy, Message: "no pushing"}
		}}
		evs := turn(t, tt, "!tool="+c.tool+"\ngit push")
		if got.Granted != c.granted || got.Call.Tool != c.want.Tool || got.Call.Command != c.want.Command ||
			strings.Join(got.Call.Writes, ",") != strings.Join(c.want.Writes, ",") ||
			strings.Join(got.Call.Reads, ",") != strings.Join(c.want.Reads, ",") ||
			strings.Join(got.Call.Hosts, ",") != strings.Join(c.want.Hosts, ",") {
			t.Errorf("%s: asked %+v", c.tool, got)
		}
		if r := evs[1]; r.Type != protocol.EvToolResult || !r.IsError || r.Output != "denied: policy: no pushing" {
			t.Errorf("%s: result %+v", c.tool, r)
		}
	}
}

// !ask puts the question with its options, and the answer, or that there
// was none, is the turn's text.
func TestAsk(t *testing.T) {
	var asked host.QuestionAsk
	tt := &host.Turn{Question: func(q host.QuestionAsk) host.QuestionAnswer {
		asked = q
		return host.QuestionAnswer{Answered: true, Answers: map[string][]string{"DB": {"SQLite"}}, By: "daemon"}
	}}
	evs := turn(t, tt, "!ask=DB\nWhich database?\nPostgres\nSQLite")
	q := asked.Questions
	if len(q) != 1 || q[0].Header != "DB" || q[0].Question != "Which database?" || len(q[0].Options) != 2 || q[0].Options[1].Label != "SQLite" {
		t.Errorf("asked %+v", asked)
	}
	if got := completed(evs); got != "answered DB: SQLite" {
		t.Errorf("text %q", got)
	}
	tt = &host.Turn{Question: func(host.QuestionAsk) host.QuestionAnswer {
		return host.QuestionAnswer{By: "timeout", Message: "Nobody answered."}
	}}
	if got := completed(turn(t, tt, "!ask=DB\nWhich?")); got != "no answer: Nobody answered." {
		t.Errorf("text %q", got)
	}
	if got := completed(turn(t, &host.Turn{}, "!ask=DB\nWhich?")); got != "no answer: "+host.NoAnswerMessage {
		t.Errorf("text %q", got)
	}
}
