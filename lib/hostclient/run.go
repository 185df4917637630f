package hostclient

import (
	"context"
	"sync"

	"github.com/agentry/agentry/lib/protocol"
)

// Run is a run in flight: its events, in order, then how it ended.
type Run struct {
	ID string

	mu     sync.Mutex
	queue  []protocol.AgentEvent
	n      int
	ended  bool
	wake   chan struct{}
	events chan protocol.AgentEvent
	done   chan struct{}
	result *protocol.RunDone
	err    error

	asks      feed[*protocol.PermissionRequest, *protocol.PermissionResolved]
	questions feed[*protocol.QuestionRequest, *protocol.QuestionResolved]
}

func newRun(id string) *Run {
	r := &Run{ID: id, wake: make(chan struct{}, 1), events: make(chan protocol.AgentEvent), done: make(chan struct{}),
		asks: newFeed[*protocol.PermissionRequest, *protocol.PermissionResolved](), questions: newFeed[*protocol.QuestionRequest, *protocol.QuestionResolved]()}
	go r.pump()
	go r.asks.pump(r)
	go r.questions.pump(r)
	return r
}

// Questions delivers the run's question requests, in order, each to be
// answered with Client.AnswerQuestion; it is closed when the run ends. A
// run that did not ask for them (params.questions) gets none: its agent
// is told nobody is there to answer. It need not be read: a request
// nobody answers has no answer at its deadline, and the agent is told so.
func (r *Run) Questions() <-chan *protocol.QuestionRequest { return r.questions.out }

// QuestionResolution is how the question request requestID was resolved,
// once it has been: answered, or not, and by whom (daemon, timeout,
// interrupt, shutdown, run_ended, input_ended).
func (r *Run) QuestionResolution(requestID string) (*protocol.QuestionResolved, bool) {
	return r.questions.resolution(r, requestID)
}

// Asks delivers the run's permission requests, in order, each to be
// answered with Client.AnswerPermission; it is closed when the run ends.
// A run that did not ask for them (params.permissions) gets none. It need
// not be read: a request nobody answers is denied at its deadline.
func (r *Run) Asks() <-chan *protocol.PermissionRequest { return r.asks.out }

// Resolution is how the permission request requestID was resolved, once
// it has been.
func (r *Run) Resolution(requestID string) (*protocol.PermissionResolved, bool) {
	return r.asks.resolution(r, requestID)
}

// feed is one kind of the run's requests (permission, question) on its
// way to the caller: queued as they come (a slow reader never holds up
// the host), delivered in order on out, which is closed when the run
// ends; and each request's resolution (R) by its id. Guarded by the run's
// mu; wake is poked when the queue grows or the run ends.
type feed[Q, R any] struct {
	queue    []Q
	wake     chan struct{}
	out      chan Q
	resolved map[string]R
}

func newFeed[Q, R any]() feed[Q, R] {
	return feed[Q, R]{wake: make(chan struct{}, 1), out: make(chan Q), resolved: map[string]R{}}
}

// add queues a request of the run, unless the run has ended.
func (f *feed[Q, R]) add(r *Run, q Q) {
	r.mu.Lock()
	if !r.ended {
		f.queue = append(f.queue, q)
	}
	r.mu.Unlock()
	poke(f.wake)
}

// settle records how the request id was resolved.
func (f *feed[Q, R]) settle(r *Run, id string, res R) {
	r.mu.Lock()
	f.resolved[id] = res
	r.mu.Unlock()
}

func (f *feed[Q, R]) resolution(r *Run, id string) (R, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := f.resolved[id]
	return res, ok
}

// pump moves the queued requests to out, and closes it once the run has
// ended; a request not yet read when the run ends is dropped with it.
func (f *feed[Q, R]) pump(r *Run) {
	for {
		r.mu.Lock()
		if len(f.queue) > 0 && !r.ended {
			q := f.queue[0]
			f.queue = f.queue[1:]
			r.mu.Unlock()
			select {
			case f.out <- q:
			case <-f.wake:
				r.mu.Lock()
				f.queue = append([]Q{q}, f.queue...)
				r.mu.Unlock()
			}
			continue
		}
		ended := r.ended
		r.mu.Unlock()
		if ended {
			close(f.out)
			return
		}
		<-f.wake
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// push queues an event; it never blocks, so one slow reader cannot hold
// up the host's other runs.
func (r *Run) push(ev protocol.AgentEvent) {
	r.mu.Lock()
	if !r.ended {
		r.queue = append(r.queue, ev)
		r.n++
	}
	r.mu.Unlock()
	r.poke()
}

func (r *Run) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Run) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// end records how the run ended: run_done, or an error (it could not
// start, or the host was lost).
func (r *Run) end(done *protocol.RunDone, err error) {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended, r.result, r.err = true, done, err
	r.mu.Unlock()
	r.poke()
	poke(r.asks.wake)
	poke(r.questions.wake)
}

// pump moves queued events to the events channel, and closes it after the
// last one once the run has ended.
func (r *Run) pump() {
	for {
		r.mu.Lock()
		if len(r.queue) > 0 {
			ev := r.queue[0]
			r.queue = r.queue[1:]
			r.mu.Unlock()
			r.events <- ev
			continue
		}
		ended := r.ended
		r.mu.Unlock()
		if ended {
			close(r.events)
			close(r.done)
			return
		}
		<-r.wake
	}
}

// Events delivers the run's events in order; it is closed after the last.
// Read it to the end (or Wait, which drains it).
func (r *Run) Events() <-chan protocol.AgentEvent { return r.events }

// Wait returns the run's run_done once every event was delivered. err is
// a *RemoteError when the run could not start, and wraps ErrHostDied when
// the host was lost (the RunDone then says stopReason "lost"). Events not
// yet read are discarded.
func (r *Run) Wait(ctx context.Context) (*protocol.RunDone, error) {
	for {
		select {
		case _, ok := <-r.events:
			if ok {
				continue
			}
			<-r.done
			return r.result, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Collect reads every event and then the end: a convenience for tests and
// scripts.
func (r *Run) Collect(ctx context.Context) ([]protocol.AgentEvent, *protocol.RunDone, error) {
	var evs []protocol.AgentEvent
	for {
		select {
		case ev, ok := <-r.events:
			if !ok {
				<-r.done
				return evs, r.result, r.err
			}
			evs = append(evs, ev)
		case <-ctx.Done():
			return evs, nil, ctx.Err()
		}
	}
}
