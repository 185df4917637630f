package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/proc"
	"github.com/tidwall/gjson"
)

// appServer is one `codex app-server` process and the JSON-RPC spoken to
// it on its stdio: one JSON object per line each way, no "jsonrpc" field
// (PEERS.md). Calls are matched to their responses by id; notifications
// and the server's own requests come on in, in order.
type appServer struct {
	child  *proc.Child
	stdin  io.WriteCloser
	out    *ndjson.Writer // on stdin: one line per message, never interleaved
	stderr *proc.Tail

	mu    sync.Mutex
	next  int64
	calls map[int64]chan rpcReply

	in     chan rpcMsg   // notifications and server requests; closed when stdout ends
	exited chan struct{} // closed once the process is reaped, with its group
}

// rpcMsg is a notification (ID nil) or a request of the server.
type rpcMsg struct {
	Method string
	ID     json.RawMessage
	Params gjson.Result
}

type rpcReply struct {
	result gjson.Result
	err    error
}

// errServerGone is what a call gets when the server ended before it
// answered.
var errServerGone = errors.New("codex app-server ended")

// inQueue bounds what the server may send that nobody has read yet; past
// it, notifications are dropped (never a server request, never a reply).
const inQueue = 4096

// startAppServer starts cmd (codex app-server) in a process group of its
// own and reads its stdout; lines over maxLine are skipped.
func startAppServer(cmd *exec.Cmd, stderr io.Writer, o proc.Options, maxLine int, warn func(string)) (*appServer, error) {
	child, err := proc.StartPiped(cmd, proc.Pipes{StdinPipe: true, Stderr: stderr, Options: o})
	if err != nil {
		return nil, err
	}
	stdout := child.Stdout
	s := &appServer{child: child.Child, stdin: child.Stdin, out: ndjson.NewWriter(child.Stdin), stderr: child.Stderr, calls: map[int64]chan rpcReply{},
		in: make(chan rpcMsg, inQueue), exited: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer stdout.Close()
		skipped := func(*ndjson.TooLongError) { warn("codex: skipped an over-long line from app-server") }
		_ = ndjson.Lines(stdout, maxLine, skipped, func(line []byte) bool { s.receive(line, warn); return true })
	}()
	go func() {
		child.End()
		// The rest of stdout is read, bounded in case an escaped process
		// holds it; then every call still waiting fails.
		_ = stdout.SetReadDeadline(time.Now().Add(time.Second))
		<-read
		close(s.in)
		s.mu.Lock()
		calls := s.calls
		s.calls = map[int64]chan rpcReply{}
		s.mu.Unlock()
		for _, ch := range calls {
			ch <- rpcReply{err: errServerGone}
		}
		close(s.exited)
	}()
	return s, nil
}

// receive routes one line from the server.
func (s *appServer) receive(line []byte, warn func(string)) {
	if ndjson.Check(line) != ndjson.Valid {
		warn(fmt.Sprintf("codex: skipped a line from app-server that is not JSON: %.80q", line))
		return
	}
	m := gjson.ParseBytes(line)
	method, id := m.Get("method"), m.Get("id")
	if method.Exists() {
		msg := rpcMsg{Method: method.Str, Params: m.Get("params")}
		if id.Exists() {
			msg.ID = json.RawMessage(id.Raw)
			s.in <- msg // a request must be answered: never dropped
			return
		}
		select {
		case s.in <- msg:
		default:
			warn("codex: dropped an app-server notification nobody read: " + method.Str)
		}
		return
	}
	n, err := strconv.ParseInt(id.Raw, 10, 64)
	if err != nil {
		return // not an id of ours
	}
	s.mu.Lock()
	ch := s.calls[n]
	delete(s.calls, n)
	s.mu.Unlock()
	if ch == nil {
		return
	}
	if e := m.Get("error"); e.Exists() {
		ch <- rpcReply{err: fmt.Errorf("%s (%d)", e.Get("message").Str, e.Get("code").Int())}
		return
	}
	ch <- rpcReply{result: m.Get("result")}
}

func (s *appServer) write(v any) error { return s.out.Encode(v) }

// call sends a request and waits for its response, ctx, or the server's end.
func (s *appServer) call(ctx context.Context, method string, params any) (gjson.Result, error) {
	ch := make(chan rpcReply, 1)
	s.mu.Lock()
	select {
	case <-s.exited:
		s.mu.Unlock()
		return gjson.Result{}, errServerGone
	default:
	}
	s.next++
	id := s.next
	s.calls[id] = ch
	s.mu.Unlock()
	if err := s.write(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		s.forget(id)
		return gjson.Result{}, fmt.Errorf("%s: %w", method, errServerGone)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return gjson.Result{}, fmt.Errorf("%s: %w", method, r.err)
		}
		return r.result, nil
	case <-ctx.Done():
		s.forget(id)
		return gjson.Result{}, ctx.Err()
	}
}

func (s *appServer) forget(id int64) {
	s.mu.Lock()
	delete(s.calls, id)
	s.mu.Unlock()
}

func (s *appServer) notify(method string, params any) error {
	m := map[string]any{"method": method}
	if params != nil {
		m["params"] = params
	}
	return s.write(m)
}

// reply answers a request of the server.
func (s *appServer) reply(id json.RawMessage, result any) error {
	return s.write(map[string]any{"id": id, "result": result})
}

// refuse answers a request of the server with an error: the server never
// waits on us for ever.
func (s *appServer) refuse(id json.RawMessage, msg string) error {
	return s.write(map[string]any{"id": id, "error": map[string]any{"code": -32601, "message": msg}})
}

func (s *appServer) alive() bool { return s.child.Running() }

// stop ends the server: its stdin closed (it exits within ~30 ms), then
// SIGTERM, then SIGKILL, each after grace.
func (s *appServer) stop(grace time.Duration) {
	s.child.Finish(s.stdin, grace)
	<-s.exited
}

// kill ends the server and what it started at once.
func (s *appServer) kill() {
	_ = s.child.Signal(syscall.SIGKILL)
	<-s.exited
}
