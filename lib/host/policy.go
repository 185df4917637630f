package host

import (
	"fmt"
	"os"

	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
)

// PolicyEnforcer is a backend that can enforce a policy: for a run with
// Turn.AskAll set it starts its CLI at an ask level and puts every tool
// call it can to Turn.Ask (Ask.Granted set where the level alone allows
// it, Ask.Call filled), the ones the daemon never sees too, and carries
// out the answer. A run that a policy applies to (agent-host --policy,
// params.policy) on a backend without it is refused as unsupported:
// agentry refuses rather than pretend to enforce one.
type PolicyEnforcer interface {
	EnforcesPolicy() bool
}

// Who decided an Answer the daemon was never asked about (Answer.By).
const (
	// ByPolicy: a policy's rule denied the call.
	ByPolicy = "policy"
	// ByLevel: the level decided it (it allows the call; or it does
	// not, and nobody was there to ask).
	ByLevel = "level"
)

// checker is what the host asks of a policy (a *policy.Policy).
type checker interface {
	Check(c policy.Call, root string) policy.Decision
}

// strictest is the strictest decision of the policies on call c, the
// first of equals: the host's own policy is first.
func strictest(policies []checker, c policy.Call, root string) policy.Decision {
	var d policy.Decision
	for _, p := range policies {
		if got := p.Check(c, root); got.Verdict > d.Verdict {
			d = got
		}
	}
	return d
}

// policyAsk is Turn.Ask for a run a policy applies to: the policies'
// strictest decision, then the level (q.Granted), then the daemon
// (forward, nil when the run does not ask) decide. A policy only narrows:
// what it allows, the level and the daemon still decide.
//
//	deny            denied; the agent told the rule; a denied event
//	ask             the daemon decides; nobody to ask: denied, verdict ask
//	allow or none   granted: allowed; else the daemon decides; else denied
func (r *run) policyAsk(policies []checker, root string, forward func(Ask) Answer, q Ask) Answer {
	d := strictest(policies, q.Call, root)
	switch {
	case d.Verdict == policy.Deny:
		return r.denied(q, d, "agentry's policy denies this")
	case d.Verdict == policy.Ask && forward == nil:
		return r.denied(q, d, "agentry's policy has a person decide this, and nobody is here to ask")
	case d.Verdict == policy.Ask:
		return forward(q)
	case q.Granted:
		return Answer{Decision: protocol.DecisionAllow, By: ByLevel}
	case forward != nil:
		return forward(q)
	}
	return Answer{Decision: protocol.DecisionDeny, By: ByLevel,
		Message: "The run's permission level does not allow this call, and nobody is here to ask."}
}

// denied denies call q as the policy decided (d): the denied event, a log
// line, and a message the model sees that names the rule and what it
// matched.
func (r *run) denied(q Ask, d policy.Decision, why string) Answer {
	verdict := d.Verdict.String()
	msg := fmt.Sprintf("%s: rule %s matched `%s`", why, d.Rule, d.Match)
	r.emit(protocol.AgentEvent{Type: protocol.EvDenied, ToolCallID: q.ToolCallID, Name: q.Tool,
		Denial: &protocol.Denial{Rule: d.Rule, Match: d.Match, Verdict: verdict}})
	r.h.Log("info", "run "+r.id, fmt.Sprintf("denied %s (verdict %s): rule %s matched `%s`", q.Tool, verdict, d.Rule, d.Match))
	return Answer{Decision: protocol.DecisionDeny, By: ByPolicy, Message: msg + "."}
}

// policies are the policies that apply to a run with params p: the
// host's, then the run's own (params.policy), which does not parse is a
// bad_request naming its line.
func (h *Host) policies(id string, p protocol.ChatRunParams) ([]checker, *protocol.Error) {
	var ps []checker
	if h.opts.Policy != nil {
		ps = append(ps, h.opts.Policy)
	}
	if p.Policy != "" {
		rp, err := policy.Parse("params.policy", []byte(p.Policy))
		if err != nil {
			return nil, errReply(id, protocol.CodeBadRequest, "bad policy: "+err.Error(), false)
		}
		ps = append(ps, rp)
	}
	return ps, nil
}

// workspaceRoot is the working copy a policy's paths are relative to: the
// run's workspace, else the host's own directory.
func workspaceRoot(ws string) string {
	if ws != "" {
		return ws
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "."
}

// checkPolicy refuses a run that a policy applies to on a backend that
// cannot enforce one; it returns nil for one that may start.
func checkPolicy(id string, applies bool, b Backend) *protocol.Error {
	if !applies {
		return nil
	}
	if pe, ok := b.(PolicyEnforcer); ok && pe.EnforcesPolicy() {
		return nil
	}
	return errReply(id, protocol.CodeUnsupported, fmt.Sprintf(
		"the %s backend cannot enforce a policy: it cannot put each tool call to agentry before it runs", b.Name()), false)
}
