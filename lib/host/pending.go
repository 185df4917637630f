package host

import (
	"context"
	"time"

	"github.com/agentry/agentry/lib/protocol"
)

// A run puts two kinds of request to the daemon, permission requests and
// question requests, and both wait alike: sent, held pending under a cap,
// resolved exactly once (by the daemon, a deadline, an interrupt, the host
// stopping, or the run's end), each resolve said by a *_resolved message.
// What differs is the answer's type (A), what is kept to check an answer
// (M), and the words: a requestKind.

// pending is one request awaiting its resolution; answer gets exactly one
// value, from whichever resolve came first.
type pending[A, M any] struct {
	answer chan A
	meta   M
}

// requests are a run's pending requests of one kind, by request id,
// guarded by the run's mu.
type requests[A, M any] map[string]*pending[A, M]

// requestKind is what a kind of request has of its own.
type requestKind[A any] struct {
	// what names the requests, for a run ended past the cap.
	what string
	// resolved is the message that says a request was resolved with a.
	resolved func(runID, reqID string, a A) protocol.Msg
	// nobody is the answer of a request nobody answered, resolved by by
	// (an interrupt, the host stopping, the run's end).
	nobody func(by string) A
}

// await holds the request reqID pending in set, sends req, and waits for
// its resolution: the daemon's answer, or at timeout what timedOut gives,
// or the kind's nobody at an interrupt of the run, the host stopping or
// the end of the host's input. A
// run that has ended, or whose agent asked past the cap (which ends it),
// takes no request: nobody answers it.
func await[A, M any](ctx context.Context, r *run, set *requests[A, M], k requestKind[A], reqID string, meta M, req protocol.Msg, timeout time.Duration, timedOut func() A) A {
	p := &pending[A, M]{answer: make(chan A, 1), meta: meta}
	r.mu.Lock()
	if r.done || r.asksEnded {
		r.mu.Unlock()
		return k.nobody(protocol.ResolvedByRunEnded)
	}
	if max := r.h.opts.MaxPendingPermissions; len(*set) >= max {
		r.asksEnded = true
		r.mu.Unlock()
		r.tooMany(max, k.what)
		return k.nobody(protocol.ResolvedByRunEnded)
	}
	if *set == nil {
		*set = requests[A, M]{}
	}
	(*set)[reqID] = p
	r.h.send(req)
	r.mu.Unlock()
	if r.h.inputEnded.Load() {
		// Said, and resolved at once: nobody is left to answer. (A
		// request held before the input ended is resolved by InputEnded.)
		settle(r, set, k, reqID, k.nobody(protocol.ResolvedByInputEnd))
	}

	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case a := <-p.answer:
		return a
	case <-t.C:
		settle(r, set, k, reqID, timedOut())
	case <-r.interrupt:
		settle(r, set, k, reqID, k.nobody(protocol.ResolvedByInterrupt))
	case <-ctx.Done():
		settle(r, set, k, reqID, k.nobody(protocol.ResolvedByShutdown))
	}
	return <-p.answer
}

// settle ends the pending request reqID of set with a, and reports
// whether it was pending: only the first resolve of a request does
// anything.
func settle[A, M any](r *run, set *requests[A, M], k requestKind[A], reqID string, a A) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := (*set)[reqID]
	if p == nil {
		return false
	}
	delete(*set, reqID)
	r.h.send(k.resolved(r.id, reqID, a))
	p.answer <- a
	return true
}

// pendingOf is the pending request reqID of set, or nil.
func pendingOf[A, M any](r *run, set *requests[A, M], reqID string) *pending[A, M] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return (*set)[reqID]
}
