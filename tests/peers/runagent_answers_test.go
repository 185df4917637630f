package peers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// raAnswersResult is runagent --json of a run that may end at a question.
type raAnswersResult struct {
	OK        bool   `json:"ok"`
	Text      string `json:"text"`
	Reason    string `json:"reason"`
	Session   string `json:"session"`
	SessionID string `json:"sessionId"`
	Questions []struct {
		ID       string `json:"id"`
		Header   string `json:"header"`
		Question string `json:"question"`
		Options  []struct {
			Label string `json:"label"`
		} `json:"options"`
	} `json:"questions"`
	UnusedAnswers []string `json:"unusedAnswers"`
}

func raParse(t *testing.T, r result) raAnswersResult {
	t.Helper()
	var res raAnswersResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("--json: %v\nstdout %s\nstderr %s", err, r.stdout, r.stderr)
	}
	if os.Getenv("PEERS_DUMP") != "" {
		t.Logf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return res
}

// raToolResults are the texts of the tool results the fake Anthropic API
// received, each once.
func raToolResults(api *server) []string {
	api.mu.Lock()
	defer api.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, b := range api.bodies {
		gjson.Get(b, "messages").ForEach(func(_, m gjson.Result) bool {
			m.Get("content").ForEach(func(_, c gjson.Result) bool {
				if c.Get("type").Str != "tool_result" || seen[c.Get("tool_use_id").Str] {
					return true
				}
				seen[c.Get("tool_use_id").Str] = true
				if c.Get("content").Type == gjson.String {
					out = append(out, c.Get("content").Str)
					return true
				}
				s := ""
				c.Get("content").ForEach(func(_, x gjson.Result) bool { s += x.Get("text").Str; return true })
				out = append(out, s)
				return true
			})
			return true
		})
	}
	return out
}

// raToolOutputs are the outputs of the tool calls the fake Responses API
// received, each once.
func raToolOutputs(api *server) []string {
	api.mu.Lock()
	defer api.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, b := range api.bodies {
		gjson.Get(b, "input").ForEach(func(_, it gjson.Result) bool {
			if it.Get("type").Str == "function_call_output" && !seen[it.Get("call_id").Str] {
				seen[it.Get("call_id").Str] = true
				out = append(out, it.Get("output").String())
			}
			return true
		})
	}
	return out
}

// raLastBody is the last request the fake API received.
func raLastBody(api *server) string {
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.bodies) == 0 {
		return ""
	}
	return api.bodies[len(api.bodies)-1]
}

// raQuestionAgent is how an agent's question is scripted and read back.
type raQuestionAgent struct {
	loopAgent
	pick    string                     // the prompt whose model asks "Which one should I use?" (header Choice)
	id      string                     // the question's id in runagent's --json
	results func(api *server) []string // the tool results the model was given
	chose   func(result string) bool   // whether a tool result gives the model the answer B
}

var raQuestionAgents = []raQuestionAgent{
	{loopAgent: loopAgents[0], id: "Choice",
		pick:    `CALL AskUserQuestion {"questions":[{"question":"Which one should I use?","header":"Choice","options":[{"label":"A","description":"the first"},{"label":"B","description":"the second"}],"multiSelect":false}]}`,
		results: raToolResults,
		chose:   func(r string) bool { return strings.Contains(r, `="B"`) }},
	{loopAgent: loopAgents[1], id: "pick",
		pick:    `CALL request_user_input {"questions":[{"id":"pick","header":"Choice","question":"Which one should I use?","options":[{"label":"A","description":"the first"},{"label":"B","description":"the second"}]}]}`,
		results: raToolOutputs,
		chose:   func(r string) bool { return strings.Contains(r, `"B"`) }},
}

func writeJSON(t *testing.T, name, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runagent --answers with claude (AskUserQuestion) and codex
// (request_user_input): an answer in the file, by the question's header,
// is the tool result the model reads; a question the file does not answer
// ends the run with exit 5, the questions and the session in --json and
// --summary, and the model is never told it was answered; --resume ID
// --answers then gives the model the answer as its next input; an answer
// no question asked for is a usage error (exit 2) once the run ends.
func TestRunagentAnswers(t *testing.T) {
	need(t)
	for _, a := range raQuestionAgents {
		t.Run(a.name, func(t *testing.T) {
			api := a.fake(t)
			env := a.env(t, api)
			work := t.TempDir()
			args := func(more ...string) []string { return append(append([]string{}, a.args...), more...) }

			r := runagent(t, env, work, args("-l", "2", "--answers", writeJSON(t, "a.json", `{"Choice":"B"}`), "--json", a.pick)...)
			res := raParse(t, r)
			rs := a.results(api)
			if r.code != 0 || !res.OK || len(rs) != 1 || !a.chose(rs[0]) {
				t.Fatalf("answered: exit %d %+v, tool results %q\nstderr %s", r.code, res, rs, r.stderr)
			}

			api = a.fake(t)
			env = a.env(t, api)
			summary := filepath.Join(t.TempDir(), "summary.md")
			r = runagent(t, env, work, args("-l", "2", "--answers", writeJSON(t, "none.json", `{"Other":"x"}`), "--json", "--summary", summary, a.pick)...)
			res = raParse(t, r)
			if r.code != 5 || res.OK || res.Reason != "question" || res.SessionID == "" || len(res.Questions) != 1 ||
				res.Questions[0].ID != a.id || res.Questions[0].Question != "Which one should I use?" || len(res.Questions[0].Options) != 2 {
				t.Fatalf("unanswered: exit %d %+v\nstderr %s", r.code, res, r.stderr)
			}
			for _, tr := range a.results(api) {
				if a.chose(tr) || strings.Contains(tr, `"A"`) || strings.Contains(tr, "have been answered") {
					t.Errorf("the model was told the question was answered: %q", tr)
				}
			}
			if b, _ := os.ReadFile(summary); !strings.Contains(string(b), "Which one should I use?") || !strings.Contains(string(b), res.SessionID) {
				t.Errorf("--summary does not list the question and the session:\n%s", b)
			}

			r = runagent(t, env, work, args("-l", "2", "--resume", res.SessionID, "--answers", writeJSON(t, "b.json", `{"Choice":"B"}`), "--json")...)
			res2 := raParse(t, r)
			if body := raLastBody(api); r.code != 0 || !res2.OK || !strings.Contains(body, "Choice: B") {
				t.Fatalf("resumed: exit %d %+v\nlast request %s\nstderr %s", r.code, res2, body, r.stderr)
			}

			r = runagent(t, env, work, args("-l", "2", "--answers", writeJSON(t, "c.json", `{"Choice":"A","Colour":"red"}`), a.pick)...)
			if r.code != 2 || !strings.Contains(r.stderr, `"Colour" names no question the agent asked`) {
				t.Fatalf("unused answer: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
