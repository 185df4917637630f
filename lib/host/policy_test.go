package host

import (
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
