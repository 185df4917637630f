package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
)

// fixed is a policy that says the same of every call.
type fixed policy.Decision

func (f fixed) Check(policy.Call, string) policy.Decision { return policy.Decision(f) }

func rule(v policy.Verdict, name string) fixed {
	return fixed{Verdict: v, Rule: name, Match: "git push origin x"}
}

// The strictest of the policies wins, then the level, then the daemon;
// a policy never widens what the level and the daemon allow.
func TestPolicyVerdicts(t *testing.T) {
	none, allow := rule(policy.None, ""), rule(policy.Allow, "allow")
	ask, deny := rule(policy.Ask, "ask"), rule(policy.Deny, "deny")
	forwarded := func(Ask) Answer { return Answer{Decision: protocol.DecisionAllow, By: protocol.ResolvedByDaemon} }
	for _, c := range []struct {
		name     string
		policies []checker
		granted  bool
		asks     bool
		want     string // decision/by
		denial   string // the denied event's rule/verdict, "" for none
	}{
		{"no rule, granted", []checker{none}, true, false, "allow/level", ""},
		{"no rule, not granted, nobody asked", []checker{none}, false, false, "deny/level", ""},
		{"no rule, not granted, asked", []checker{none}, false, true, "allow/daemon", ""},
		{"allow never widens", []checker{allow}, false, false, "deny/level", ""},
		{"allow, asked", []checker{allow}, false, true, "allow/daemon", ""},
		{"deny beats the level", []checker{deny}, true, true, "deny/policy", "deny/deny"},
		{"ask goes to the daemon though granted", []checker{ask}, true, true, "allow/daemon", ""},
		{"ask, nobody to ask", []checker{ask}, true, false, "deny/policy", "ask/ask"},
		{"the run's deny beats the host's allow", []checker{allow, deny}, true, true, "deny/policy", "deny/deny"},
		{"the host's ask beats the run's allow", []checker{ask, allow}, true, false, "deny/policy", "ask/ask"},
		{"first of equals", []checker{rule(policy.Deny, "host"), rule(policy.Deny, "run")}, true, true, "deny/policy", "host/deny"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{got: make(chan struct{}, 1)}
			r := &run{h: New(Options{}, rec.out), id: "r1"}
			forward := forwarded
			if !c.asks {
				forward = nil
			}
			a := r.policyAsk(c.policies, "/w", forward, Ask{Tool: "Bash", ToolCallID: "tc1", Granted: c.granted,
				Call: policy.Call{Tool: "Bash", Command: "git push origin x"}})
			if got := a.Decision + "/" + a.By; got != c.want {
				t.Errorf("answer %s, want %s", got, c.want)
			}
			var denial string
			for _, ev := range rec.events("r1") {
				if ev.Event.Type == protocol.EvDenied {
					d := ev.Event.Denial
					denial = d.Rule + "/" + d.Verdict
					if ev.Event.ToolCallID != "tc1" || ev.Event.Name != "Bash" || d.Match != "git push origin x" {
						t.Errorf("denied event %+v %+v", ev.Event, d)
					}
				}
			}
			if denial != c.denial {
				t.Errorf("denied %q, want %q", denial, c.denial)
			}
			if c.denial == "deny/deny" && a.Message != "agentry's policy denies this: rule deny matched `git push origin x`." {
				t.Errorf("message %q", a.Message)
			}
		})
	}
}

// enforcer reports what its turn was given: AskAll, an Ask, and the
// answer to a call of its prompt's command, granted.
type enforcer struct{ can bool }

func (enforcer) Name() string           { return "enforcer" }
func (enforcer) Version() string        { return "0" }
func (e enforcer) EnforcesPolicy() bool { return e.can }
func (enforcer) RunTurn(ctx context.Context, t *Turn) error {
	text := fmt.Sprintf("askAll=%v ask=%v", t.AskAll, t.Ask != nil)
	if t.Ask != nil {
		a := t.Ask(Ask{Tool: "Bash", Granted: true, Call: policy.Call{Tool: "Bash", Command: t.Params.Prompt}})
		text += " " + a.Decision + "/" + a.By
	}
	t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: text})
	return nil
}

// A run's params.policy (and the host's own) gives the backend AskAll
// and an Ask though the run does not ask; one that does not parse is a
// bad_request; a backend that cannot enforce one refuses the run.
func TestPolicyRuns(t *testing.T) {
	host, err := policy.Parse("host.toml", []byte("[commands]\ndeny = [\"rm *\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		can    bool
		host   *policy.Policy
		prompt string
		runPol string
		want   string // the completed text, or an error code
	}{
		{"no policy", true, nil, "git push", "", "askAll=false ask=false"},
		{"the run's", true, nil, "git push", "[commands]\ndeny = [\"git push*\"]\n", "askAll=true ask=true deny/policy"},
		{"the run's, not matched", true, nil, "ls", "[commands]\ndeny = [\"git push*\"]\n", "askAll=true ask=true allow/level"},
		{"the host's", true, host, "rm x", "", "askAll=true ask=true deny/policy"},
		{"both", true, host, "git push", "[commands]\ndeny = [\"git push*\"]\n", "askAll=true ask=true deny/policy"},
		{"bad", true, nil, "ls", "[commands]\nfrob = [\"x\"]\n", protocol.CodeBadRequest},
		{"cannot enforce", false, nil, "ls", "[commands]\n", protocol.CodeUnsupported},
		{"cannot enforce the host's", false, host, "ls", "", protocol.CodeUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{got: make(chan struct{}, 1)}
			h := New(Options{Backend: "enforcer", Policy: c.host,
				Factory: func(string, json.RawMessage) (Backend, error) { return enforcer{can: c.can}, nil }}, rec.out)
			defer h.Abort()
			h.Deliver(&protocol.Hello{ID: "h", Protocol: 1})
			h.Deliver(&protocol.RunTurn{ID: "t1", RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: c.prompt, Policy: c.runPol}})
			switch m := rec.reply(t, "t1").(type) {
			case *protocol.Error:
				if m.Error.Code != c.want {
					t.Errorf("refused %+v, want %s", m.Error, c.want)
				}
				if c.want == protocol.CodeBadRequest && !strings.Contains(m.Error.Message, "params.policy:2: commands.frob") {
					t.Errorf("the refusal does not name the line and key: %q", m.Error.Message)
				}
			case *protocol.RunDone:
				evs := rec.events("r1")
				if got := evs[len(evs)-1].Event.Text; got != c.want {
					t.Errorf("text %q, want %q", got, c.want)
				}
			}
		})
	}
}
