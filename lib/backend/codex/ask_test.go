package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agentry/agentry/lib/confine"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// The request codex 0.171.0 sent for a request_user_input call (its
// default_mode_request_user_input feature on), as recorded.
const userInputRequest = `{"threadId":"th","turnId":"tu","itemId":"call_1","questions":[{"id":"color","header":"Color","question":"Which color?","isOther":true,"isSecret":false,"options":[{"label":"A","description":"red"},{"label":"B","description":"blue"}]}],"isBlocking":false,"autoResolutionMs":null}`

func questionTurn(q func(host.QuestionAsk) host.QuestionAnswer) (*host.Turn, *[]protocol.AgentEvent) {
	var mu sync.Mutex
	var evs []protocol.AgentEvent
	return &host.Turn{Question: q, Log: func(string, string) {}, Emit: func(e protocol.AgentEvent) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	}}, &evs
}

// A question goes to the host with codex's ids, options and the call's
// id; the answer goes back in codex's shape; a run without questions, or
// one nobody answered, tells the model so in each answer and claims no
// choice.
func TestQuestions(t *testing.T) {
	var asked host.QuestionAsk
	for _, c := range []struct {
		name  string
		q     func(host.QuestionAsk) host.QuestionAnswer
		reply string
	}{
		{"answered", func(a host.QuestionAsk) host.QuestionAnswer {
			asked = a
			return host.QuestionAnswer{Answered: true, Answers: map[string][]string{"color": {"B"}}, By: "daemon"}
		}, `7 {"answers":{"color":{"answers":["B"]}}}`},
		{"unanswered", func(host.QuestionAsk) host.QuestionAnswer {
			return host.QuestionAnswer{Message: "Nobody answered the question within 1m0s: there is no answer. Do not assume one.", By: "timeout"}
		}, `7 {"answers":{"color":{"answers":["Nobody answered the question within 1m0s: there is no answer. Do not assume one."]}}}`},
		{"nobody", nil, `7 {"answers":{"color":{"answers":["` + host.NoAnswerMessage + `"]}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newReplies()
			turn, evs := questionTurn(c.q)
			x := &translator{t: turn, srv: r, thread: "th", turn: "tu", inputs: map[string]json.RawMessage{}}
			x.handle(rpcMsg{Method: "item/tool/requestUserInput", ID: json.RawMessage("7"), Params: gjson.Parse(userInputRequest)})
			if got := r.wait(t, 1); got[0] != c.reply {
				t.Errorf("reply %s\nwant  %s", got[0], c.reply)
			}
			for _, a := range r.got {
				if c.name != "answered" && (strings.Contains(a, `["A"]`) || strings.Contains(a, `["B"]`)) {
					t.Errorf("a made-up choice: %s", a)
				}
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(*evs) != 2 || (*evs)[0].Type != protocol.EvToolCall || (*evs)[0].Name != "request_user_input" ||
				(*evs)[1].ToolCallID != "tu/call_1" || (*evs)[1].IsError == (c.name == "answered") {
				t.Errorf("events %+v", *evs)
			}
		})
	}
	want := host.QuestionAsk{ToolCallID: "tu/call_1", Questions: []protocol.Question{{ID: "color", Header: "Color", Question: "Which color?",
		Options: []protocol.QuestionOption{{Label: "A", Description: "red"}, {Label: "B", Description: "blue"}}}}}
	if !reflect.DeepEqual(asked, want) {
		t.Errorf("asked %+v\nwant  %+v", asked, want)
	}
}

// A thread is loaded with the feature only for a turn that takes
// questions; a turn of the other kind loads it again.
func TestThreadMode(t *testing.T) {
	if modeOf(protocol.ChatRunParams{}).questions || !modeOf(protocol.ChatRunParams{Questions: protocol.QuestionsAsk}).questions {
		t.Error("modeOf")
	}
}

// Approvals carry the call in a policy's terms, and, under a policy,
// whether the level runs it unasked; a denial's message is put in the
// thread before codex hears the decline.
func TestApprovalCall(t *testing.T) {
	type want struct {
		call    policy.Call
		granted bool
	}
	changes := json.RawMessage(`{"changes":[{"path":"/w/a.txt","kind":{"type":"add"}},{"path":"/w/b.txt","kind":{"type":"update","move_path":"/elsewhere/b.txt"}}]}`)
	for _, c := range []struct {
		name, method, params string
		level                int
		item                 json.RawMessage
		want                 want
	}{
		{"command", "item/commandExecution/requestApproval", `{"threadId":"th","itemId":"call_1","command":"/bin/bash -c 'git -C . push origin x'","cwd":"/w"}`, 2, nil,
			want{policy.Call{Tool: "command", Argv: []string{"/bin/bash", "-c", "git -C . push origin x"}, Dir: "/w"}, true}},
		{"escalated", "item/commandExecution/requestApproval", `{"threadId":"th","itemId":"call_1","command":"/bin/bash -c 'echo hi > /x'","cwd":"/w","reason":"need it"}`, 2, nil,
			want{policy.Call{Tool: "command", Argv: []string{"/bin/bash", "-c", "echo hi > /x"}, Dir: "/w"}, false}},
		{"level 1", "item/commandExecution/requestApproval", `{"threadId":"th","itemId":"call_1","command":"ls","cwd":"/w"}`, 1, nil,
			want{policy.Call{Tool: "command", Argv: []string{"ls"}, Dir: "/w"}, false}},
		{"not words", "item/commandExecution/requestApproval", `{"threadId":"th","itemId":"call_1","command":"git push && rm -rf x","cwd":"/w"}`, 2, nil,
			want{policy.Call{Tool: "command", Command: "git push && rm -rf x", Dir: "/w"}, true}},
		{"patch outside", "item/fileChange/requestApproval", `{"threadId":"th","itemId":"call_1"}`, 2, changes,
			want{policy.Call{Tool: "file_change", Writes: []string{"/w/a.txt", "/w/b.txt", "/elsewhere/b.txt"}}, false}},
		{"patch inside", "item/fileChange/requestApproval", `{"threadId":"th","itemId":"call_1"}`, 2, json.RawMessage(`{"changes":[{"path":"/w/sub/a.txt","kind":{"type":"add"}}]}`),
			want{policy.Call{Tool: "file_change", Writes: []string{"/w/sub/a.txt"}}, true}},
		{"daemon decides", "item/commandExecution/requestApproval", `{"threadId":"th","itemId":"call_1","command":"ls","cwd":"/w"}`, 2, nil,
			want{policy.Call{Tool: "command", Argv: []string{"ls"}, Dir: "/w"}, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newReplies()
			var got host.Ask
			turn := &host.Turn{AskAll: true, Log: func(string, string) {}, Emit: func(protocol.AgentEvent) {}, Ask: func(a host.Ask) host.Answer {
				got = a
				return host.Answer{Decision: protocol.DecisionDeny, Message: `denied by commands.deny "git push*" (policy.toml:2)`}
			}}
			if c.name == "daemon decides" {
				turn.Params.Permissions = protocol.PermissionsAsk
			}
			x := &translator{t: turn, srv: r, thread: "th", turn: "tu", inputs: map[string]json.RawMessage{"call_1": c.item}, level: c.level, roots: []string{"/w", "/extra"}}
			x.handle(rpcMsg{Method: c.method, ID: json.RawMessage("3"), Params: gjson.Parse(c.params)})
			replies := r.wait(t, 2)
			if !reflect.DeepEqual(got.Call, c.want.call) || got.Granted != c.want.granted {
				t.Errorf("call %+v granted %v\nwant %+v %v", got.Call, got.Granted, c.want.call, c.want.granted)
			}
			if !strings.HasPrefix(replies[0], "call thread/inject_items ") || !strings.Contains(replies[0], `policy.toml:2`) || replies[1] != `3 {"decision":"decline"}` ||
				c.name == "command" && !strings.Contains(replies[0], "did not let the command `git -C . push origin x` run") {
				t.Errorf("replies %v", replies)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		`/bin/bash -c 'git -C . push origin x'`: {"/bin/bash", "-c", "git -C . push origin x"},
		`/bin/bash -lc 'echo '"'"'hi'"'"''`:     {"/bin/bash", "-lc", "echo 'hi'"},
		`ls`:                                    {"ls"},
		`a "b c" d\ e ''`:                       {"a", "b c", "d e", ""},
		`git push && rm x`:                      nil,
		`echo $HOME`:                            nil,
		`echo "$HOME"`:                          nil,
		`echo 'open`:                            nil,
		`a#b ~`:                                 nil,
	} {
		got, ok := splitWords(in)
		if ok != (want != nil) || !reflect.DeepEqual(got, want) && want != nil {
			t.Errorf("%s: %q %v, want %q", in, got, ok, want)
		}
	}
}

// Under a policy an allow for the session is an allow of this call:
// codex is not to run the next identical one unasked, past the policy.
func TestApprovalSessionUnderPolicy(t *testing.T) {
	for _, askAll := range []bool{false, true} {
		r := newReplies()
		turn := &host.Turn{AskAll: askAll, Log: func(string, string) {}, Emit: func(protocol.AgentEvent) {},
			Ask: func(host.Ask) host.Answer { return host.Answer{Decision: protocol.DecisionAllowSession} }}
		x := &translator{t: turn, srv: r, thread: "th", turn: "tu", inputs: map[string]json.RawMessage{}, level: 2}
		x.handle(rpcMsg{Method: "item/commandExecution/requestApproval", ID: json.RawMessage("3"), Params: gjson.Parse(`{"threadId":"th","itemId":"c","command":"ls"}`)})
		want := `3 {"decision":"acceptForSession"}`
		if askAll {
			want = `3 {"decision":"accept"}`
		}
		if got := r.wait(t, 1); got[0] != want {
			t.Errorf("AskAll %v: %s, want %s", askAll, got[0], want)
		}
	}
}

// A file change is granted by the level only inside a writable root, its
// symlinks resolved, and never in its .git: its config and hooks name
// programs git runs (codex's own sandbox is not asked once agentry's host
// allows the change).
func TestWritableRoots(t *testing.T) {
	work, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(work, ".git", "hooks"), 0o755)
	os.Symlink(outside, filepath.Join(work, "out"))
	os.Symlink(".git/hooks", filepath.Join(work, "hooks"))
	x := &translator{roots: confine.Roots([]string{work})}
	for path, want := range map[string]bool{
		filepath.Join(work, "main.go"):                   true,
		filepath.Join(work, "sub", "new.go"):             true,
		filepath.Join(work, ".gitignore"):                true,
		filepath.Join(work, ".git", "hooks", "pre-push"): false,
		filepath.Join(work, ".git", "config"):            false,
		filepath.Join(work, "hooks", "post-checkout"):    false,
		filepath.Join(work, "out", "x"):                  false,
		filepath.Join(outside, "x"):                      false,
		"relative.go":                                    false,
	} {
		if got := x.writable(path); got != want {
			t.Errorf("writable(%s) = %v, want %v", path, got, want)
		}
	}
}
