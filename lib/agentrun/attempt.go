package agentrun

import (
	"context"
	"time"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/proc"
)

// once starts the agent with grant g and prompt and reads it to its end:
// one attempt of the run, decided as a run of its own.
func once(ctx context.Context, req Request, w *workspace, g *grant.Grant, prompt string, events *eventLog, c caps) (*Result, error) {
	if req.Host != nil {
		return onceHosted(ctx, req, w, g, prompt, events, c)
	}
	a, err := startAgent(req, w, g, prompt)
	if err != nil {
		return nil, err
	}
	defer a.child.Stdout.Close()
	res := &Result{Agent: g.Harness, Level: g.Level, PID: a.child.PID()}
	tr := &grant.Transcript{Harness: g.Harness}
	tailOut := proc.NewTail(4096)
	st := newStream(g.Harness, tr, events, c)
	read := st.read(a.child.Stdout, tailOut)
	w.secrets.ready() // while the agent runs, not before it starts
	res.wait(ctx, req, a, st)
	// What the agent left in its group goes with it.
	exit := a.child.End()
	_ = a.child.Stdout.SetReadDeadline(time.Now().Add(time.Second))
	<-read
	res.DurationMs = proc.Ms(time.Since(a.start))
	res.Session = tr.Session
	res.ExitCode, res.Signal = exit.Code, exit.SignalName()
	res.work = st.work
	usage := st.result()
	usage.DurationMs = res.DurationMs
	res.Usage = &usage
	res.outcome(g.Harness, exit, tr, req.MaxOutput, a.child.Stderr, tailOut, w.secrets)
	res.stopped(req, tr)
	if res.OK && req.Schema != nil {
		res.conform(req.Schema, tr)
	}
	res.tr = tr
	res.classify(exit)
	return res, nil
}

// classify marks a failure worth another attempt: an API failure the
// agent reported as transient, or a signal nobody here sent.
func (res *Result) classify(exit proc.Exit) {
	if res.OK || res.StoppedBy != "" || res.Limit != NoLimit || res.Stalled {
		return
	}
	if f := res.tr.Fault(); f.Transient() {
		res.fault, res.retry = f.String(), f.RetryAfter
		return
	}
	if exit.Signal != 0 {
		res.fault = exit.SignalName()
	}
}
