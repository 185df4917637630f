package codex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/agenthome"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
)

// shared is one codex app-server serving every chat whose grant writes
// the same configuration into CODEX_HOME (level 1's, with no shell, is
// not level 2's): each chat is a thread of its own on it. What the server
// sends about a thread goes to that thread's turn in flight, if any.
type shared struct {
	ready chan struct{} // closed once started, or failed to
	err   error         // why it did not start; set before ready closes
	srv   *appServer
	home  agenthome.CodexHome

	warm sync.Once // Prestart's first thread

	mu    sync.Mutex
	turns map[string]chan rpcMsg // by thread: the messages of its turn in flight
	gone  bool                   // the server ended: no more messages
}

// up reports whether the server started and still runs.
func (sh *shared) up() bool {
	select {
	case <-sh.ready:
		return sh.err == nil && sh.srv.alive()
	default:
		return true // starting
	}
}

// startShared starts an app-server with the grant's configuration in a
// CODEX_HOME of its own, and says initialize; sh.ready is closed once it
// is ready or has failed.
func (b *Backend) startShared(ctx context.Context, sh *shared, g *grant.Grant) {
	defer close(sh.ready)
	home, err := agenthome.PrepareCodex(g, agenthome.CodexSource{Config: b.cfg.ConfigFile}, b.env.Environ)
	if err != nil {
		sh.err = homeError(err)
		return
	}
	cmd := exec.Command(b.cfg.Program, "app-server")
	cmd.Dir = b.cfg.Workspace
	cmd.Env = append(append([]string{}, b.env.Environ...), "CODEX_HOME="+home.Dir)
	stderr := b.env.StderrOr()
	srv, err := startAppServer(cmd, stderr, b.env.Start(), 0, func(msg string) { fmt.Fprintln(stderr, msg) })
	if err != nil {
		home.Remove()
		sh.err = host.Failed(protocol.CodeBackendUnavailable, "could not start codex app-server: "+err.Error(), false)
		return
	}
	sh.srv, sh.home = srv, home
	go sh.route(stderr)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-b.closing: // the backend closes: no waiting for a server that will not answer
			cancel()
		case <-ctx.Done():
		}
	}()
	if _, err = srv.call(ctx, "initialize", initializeParams{ClientInfo: clientInfo{Name: "agent-host", Version: "1"}}); err == nil {
		err = srv.notify("initialized", nil)
	}
	if err != nil {
		sh.err = serverError(srv, err)
		sh.close(time.Second)
	}
}

func homeError(err error) error {
	if errors.Is(err, agenthome.ErrNotSignedIn) {
		return host.Failed(protocol.CodeBackendUnavailable, notSignedIn, false)
	}
	return host.Failed(protocol.CodeBackendUnavailable, err.Error(), false)
}

// serverError is a failed call's error, with the server's last words.
func serverError(srv *appServer, err error) error {
	msg := err.Error()
	if last := srv.stderr.LastLine(); last != "" {
		msg += ": " + last
	}
	return host.Failed(protocol.CodeBackendUnavailable, "codex app-server: "+msg, true)
}

// route hands each message of the server to the turn in flight on its
// thread; a request no turn is there to answer is refused, so that the
// server never waits on us for ever. When the server ends, every turn's
// channel is closed.
func (sh *shared) route(warn io.Writer) {
	for m := range sh.srv.in {
		thread := m.Params.Get("threadId").Str
		sh.mu.Lock()
		ch := sh.turns[thread]
		sent := false
		if ch != nil {
			select {
			case ch <- m:
				sent = true
			default:
			}
		}
		sh.mu.Unlock()
		switch {
		case sent:
		case m.ID != nil:
			_ = sh.srv.refuse(m.ID, "agent-host: no turn of this thread is running")
		case ch != nil:
			fmt.Fprintln(warn, "codex: dropped an app-server notification nobody read: "+m.Method)
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, ch := range sh.turns {
		close(ch)
	}
	sh.turns, sh.gone = nil, true
}

// subscribe gives a turn of thread the server's messages about it, until
// unsubscribe; the channel is closed if the server ends first.
func (sh *shared) subscribe(thread string) chan rpcMsg {
	ch := make(chan rpcMsg, inQueue)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gone {
		close(ch)
		return ch
	}
	if sh.turns == nil {
		sh.turns = map[string]chan rpcMsg{}
	}
	sh.turns[thread] = ch
	return ch
}

func (sh *shared) unsubscribe(thread string, ch chan rpcMsg) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.turns[thread] == ch {
		delete(sh.turns, thread)
	}
}

// busy is how many turns are in flight on the server.
func (sh *shared) busy() int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return len(sh.turns)
}

// unload tells the server it may drop the thread (the chat ended, or it
// moved to a server of another configuration).
func (sh *shared) unload(thread string) {
	if sh == nil || thread == "" || !sh.up() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = sh.srv.call(ctx, "thread/unsubscribe", threadUnsubscribeParams{ThreadID: thread})
}

// close ends the server (stdin closed, then SIGTERM, then SIGKILL, each
// after grace), and what it had started that outlived it (a command in a
// session of its own), and removes its CODEX_HOME.
func (sh *shared) close(grace time.Duration) {
	if sh.srv != nil {
		left := proc.Tree(sh.srv.child.PID(), 0)
		sh.srv.stop(grace)
		for _, p := range left {
			proc.Signal(p, syscall.SIGKILL) // only if it is still that process
		}
		proc.WaitGone(left, time.Now().Add(2*time.Second), nil)
	}
	sh.home.Remove()
	sh.home = agenthome.CodexHome{}
}

// server is the shared app-server for a level's configuration, started
// (by this call, in it) when there is none or it ended; with the grant.
func (b *Backend) server(ctx context.Context, level int) (*shared, *grant.Grant, error) {
	g, err := grant.For(grant.Options{Level: level, Harness: grant.Codex, Program: b.cfg.Program})
	if err != nil {
		return nil, nil, host.Failed(protocol.CodeBadRequest, err.Error(), false)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, nil, host.Failed(protocol.CodeBackendUnavailable, "codex: the backend is closing", false)
	}
	sh := b.servers[g.CodexConfig]
	start := sh == nil || !sh.up()
	if start {
		if old := sh; old != nil {
			go old.close(0) // it ended or never started: what is left of it goes
		}
		sh = &shared{ready: make(chan struct{})}
		b.servers[g.CodexConfig] = sh
	}
	b.mu.Unlock()
	if start {
		b.startShared(context.WithoutCancel(ctx), sh, g)
	}
	select {
	case <-sh.ready:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if sh.err != nil {
		return nil, nil, sh.err
	}
	return sh, g, nil
}

// Prestart starts the shared app-server of the backend's level in the
// background, so that the first prompt finds it ready; a chat never
// prompted costs no process of its own.
func (b *Backend) Prestart() {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sh, _, err := b.server(ctx, b.cfg.Level)
		if err != nil {
			return
		}
		// The server's first thread costs it more than the next ones
		// (what codex loads once): a thread of no one's, not kept, pays
		// for it here rather than the first prompt; once per server, and
		// not when a session's own thread is on its way (StartChat),
		// which pays it without a second thread competing.
		b.mu.Lock()
		starting := b.starting
		b.mu.Unlock()
		if starting > 0 {
			return
		}
		sh.warm.Do(func() {
			res, err := sh.srv.call(ctx, "thread/start", threadStartParams{Cwd: b.cfg.Workspace, Ephemeral: true,
				ApprovalPolicy: policyNever, Sandbox: sandboxMode(b.cfg.Level)})
			if err == nil {
				sh.unload(res.Get("thread.id").Str)
			}
		})
	}()
}

// markVar names the variable every command a chat's thread runs has in
// its environment (codex's shell_environment_policy.set, per thread), its
// value the chat's own: what tells that chat's processes among all those
// of the shared server.
const markVar = "AGENT_HOST_CODEX_CHAT"

// newMark is a chat's value of markVar.
func newMark() string {
	return grant.NewSessionID()
}

// stopMarked ends what the server runs for one chat, when an interrupted
// turn has ended: codex's turn/interrupt ends the turn, not always the
// command it started (one run after an approval lives on). Each of the
// server's descendants whose environment has mark, what descends from it,
// and the rest of its process group when that is not the server's (the
// sandbox's wrapper), SIGKILL, parents first, each confirmed by its start
// time; again for what came meanwhile, for at most 2 s. It reports how
// many were signalled.
func stopMarked(server int, mark string) int {
	n := 0
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := marked(server, markVar+"="+mark)
		for _, p := range left {
			if proc.Signal(p, syscall.SIGKILL) {
				n++
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return n
		}
		proc.WaitGone(left, deadline, nil)
	}
}

// marked lists the processes stopMarked ends, parents first: among the
// server's descendants, those with entry in their environment, theirs,
// and their process groups; and anywhere else, a process with entry (one
// that left the tree: nothing but a command of the chat has its value).
func marked(server int, entry string) []proc.Info {
	srv, err := proc.Stat(server)
	if err != nil {
		return nil
	}
	var tree []proc.Info
	in := map[int]bool{server: true}
	for _, pid := range proc.Descendants(server) {
		if p, err := proc.Stat(pid); err == nil && p.State != 'Z' {
			tree = append(tree, p)
			in[pid] = true
		}
	}
	hit, groups := map[int]bool{}, map[int]bool{}
	own := syscall.Getpgrp()
	for _, p := range tree { // parents come before their children
		if hit[p.PPID] || hasEnv(p.PID, entry) {
			hit[p.PID] = true
			if p.PGID != srv.PGID && p.PGID != own {
				groups[p.PGID] = true
			}
		}
	}
	var out []proc.Info
	for _, p := range tree {
		if hit[p.PID] || groups[p.PGID] {
			out = append(out, p)
		}
	}
	for _, p := range proc.All() {
		if !in[p.PID] && p.State != 'Z' && p.PID != os.Getpid() && hasEnv(p.PID, entry) {
			out = append(out, p)
		}
	}
	return out
}

// hasEnv reports whether the process's environment has entry (NAME=value).
func hasEnv(pid int, entry string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, e := range bytes.Split(b, []byte{0}) {
		if string(e) == entry {
			return true
		}
	}
	return false
}
