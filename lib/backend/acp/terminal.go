package acp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentry/agentry/lib/proc"
)

// terminal is one command an agent runs through terminal/create: the
// leader of a process group of agentry's, its stdout and stderr kept
// together up to a byte limit (the end kept). When the leader exits,
// whatever it left running in its group is killed (End), so that a
// terminal's `sleep 300 &` does not outlive it.
type terminal struct {
	child *proc.Child
	done  chan struct{} // closed once the leader is reaped
	exit  proc.Exit

	mu        sync.Mutex
	out       []byte
	limit     int
	truncated bool
}

// defaultOutputLimit is how much of a terminal's output is kept when the
// agent does not say; maxOutputLimit the most it may ask for.
const (
	defaultOutputLimit = 1 << 20
	maxOutputLimit     = 64 << 20
)

func (t *terminal) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = append(t.out, b...)
	if over := len(t.out) - t.limit; over > 0 {
		// Cut at a character's start, as ACP asks.
		for over < len(t.out) && !utf8.RuneStart(t.out[over]) {
			over++
		}
		t.out = append(t.out[:0], t.out[over:]...)
		t.truncated = true
	}
	return len(b), nil
}

type createTerminal struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
	Cwd             string `json:"cwd"`
	OutputByteLimit *int   `json:"outputByteLimit"`
}

// isLine reports whether the command is a shell line (as some agents
// send one): no args, and shell syntax in it.
func (p createTerminal) isLine() bool {
	return len(p.Args) == 0 && strings.ContainsAny(p.Command, " \t|&;<>()$`'\"*?")
}

// terminals are an agent's terminals, by id.
type terminals struct {
	mu   sync.Mutex
	next int
	all  map[string]*terminal
}

// create starts one in dir, with environ and the agent's variables, as o
// says.
func (ts *terminals) create(p createTerminal, dir string, environ []string, o proc.Options) (string, error) {
	argv := append([]string{p.Command}, p.Args...)
	if p.isLine() {
		argv = []string{"/bin/sh", "-c", p.Command} // a command line, as some agents send
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{}, environ...)
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	t := &terminal{done: make(chan struct{}), limit: defaultOutputLimit}
	if p.OutputByteLimit != nil && *p.OutputByteLimit >= 0 {
		t.limit = min(*p.OutputByteLimit, maxOutputLimit)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	cmd.Stdout, cmd.Stderr = w, w
	child, err := proc.Start(cmd, o)
	w.Close()
	if err != nil {
		r.Close()
		return "", err
	}
	t.child = child
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			t.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		t.exit = child.End()
		// The rest of the output, bounded in case something escaped the
		// group and holds the pipe.
		_ = r.SetReadDeadline(time.Now().Add(time.Second))
		<-read
		r.Close()
		close(t.done)
	}()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.all == nil {
		ts.all = map[string]*terminal{}
	}
	ts.next++
	id := "term-" + strconv.Itoa(ts.next)
	ts.all[id] = t
	return id, nil
}

func (ts *terminals) get(id string) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.all[id]
	if t == nil {
		return nil, &RPCError{Code: codeInvalidParams, Message: fmt.Sprintf("no terminal %q", id)}
	}
	return t, nil
}

// exitStatus is ACP's TerminalExitStatus.
type exitStatus struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

func statusOf(e proc.Exit) exitStatus {
	s := exitStatus{ExitCode: e.Code}
	if name := e.SignalName(); name != "" {
		s.Signal = &name
	}
	return s
}

type outputResult struct {
	Output     string      `json:"output"`
	Truncated  bool        `json:"truncated"`
	ExitStatus *exitStatus `json:"exitStatus,omitempty"`
}

func (t *terminal) output() outputResult {
	t.mu.Lock()
	res := outputResult{Output: string(t.out), Truncated: t.truncated}
	t.mu.Unlock()
	select {
	case <-t.done:
		s := statusOf(t.exit)
		res.ExitStatus = &s
	default:
	}
	return res
}

func (t *terminal) wait(ctx context.Context) (exitStatus, error) {
	select {
	case <-t.done:
		return statusOf(t.exit), nil
	case <-ctx.Done():
		return exitStatus{}, &RPCError{Code: codeInternal, Message: "the turn ended before the command did"}
	}
}

// kill ends the terminal's whole group; its output stays readable.
func (t *terminal) kill() { _ = t.child.Signal(syscall.SIGKILL) }

// release kills the terminal and forgets it.
func (ts *terminals) release(id string) error {
	ts.mu.Lock()
	t := ts.all[id]
	delete(ts.all, id)
	ts.mu.Unlock()
	if t == nil {
		return &RPCError{Code: codeInvalidParams, Message: fmt.Sprintf("no terminal %q", id)}
	}
	t.kill()
	return nil
}

// killAll kills every terminal's group and waits until each is reaped.
func (ts *terminals) killAll() {
	ts.mu.Lock()
	all := ts.all
	ts.all = nil
	ts.mu.Unlock()
	for _, t := range all {
		t.kill()
	}
	for _, t := range all {
		<-t.done
	}
}
