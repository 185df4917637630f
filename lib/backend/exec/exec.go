// Package exec is the backend that runs any command once per turn: the
// prompt on its stdin, its stdout streamed back as text_delta events, its
// exit status deciding completed or error. It is how agent-host composes
// with any CLI: agent-host --backend exec -- runagent -l 2.
//
// The command runs in the turn's workspace (or the host's directory), as
// the leader of a process group of its own, with AGENTRY_RUN_ID,
// AGENTRY_CHAT_ID and AGENTRY_MODEL in its environment, and the turn's
// level as AGENTRY_LEVEL and RUNAGENT_LEVEL: the backend enforces no level
// itself, the command must (runagent takes RUNAGENT_LEVEL as its -l). Its stderr goes to
// the host's stderr, and its tail into the error of a failed turn. An
// interrupt sends SIGINT to the group; when the host gives up waiting, the
// group gets SIGKILL. When the command exits, whatever it left running in
// its group is killed, and the turn never waits on a pipe a process that
// escaped the group still holds.
package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
)

// Backend runs Argv once per turn.
type Backend struct {
	Argv []string
	// Env is the command's environment, and where its stderr goes.
	Env host.Env
	// MaxOutput caps the text kept for the completed event (default 1 MB);
	// every delta is still streamed.
	MaxOutput int
}

// New makes an exec backend for argv.
func New(argv []string, env host.Env) (*Backend, error) {
	if len(argv) == 0 {
		return nil, errors.New("exec: no command given (agent-host --backend exec -- CMD ARGS...)")
	}
	if _, err := osexec.LookPath(argv[0]); err != nil {
		return nil, fmt.Errorf("exec: %v", err)
	}
	return &Backend{Argv: argv, Env: env, MaxOutput: 1 << 20}, nil
}

func (b *Backend) Name() string    { return "exec" }
func (b *Backend) Version() string { return "exec " + b.Argv[0] }

// turnLevel is the level a turn's command is given: the turn's, but no
// more than the AGENTRY_LEVEL the host itself was given (a host run
// inside a turn of another). A turn that gives none is given none: the
// command has the host's environment, that AGENTRY_LEVEL in it.
func turnLevel(asked int, environ []string) int {
	if asked == 0 {
		return 0
	}
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], "AGENTRY_LEVEL="); ok {
			if most, err := strconv.Atoi(v); err == nil && most >= 1 && most < asked {
				return most
			}
			break
		}
	}
	return asked
}

// drainAfterExit bounds how long output is read once the command has
// exited and its group was killed: only a process that left the group can
// still hold the pipe.
const drainAfterExit = 200 * time.Millisecond

// RunTurn runs the command once.
func (b *Backend) RunTurn(ctx context.Context, t *host.Turn) error {
	if ws := t.Params.Workspace; ws != "" {
		// Else the start's error would blame the command ("fork/exec
		// /usr/bin/cat: no such file or directory").
		if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
			return host.Failed(protocol.CodeBadRequest, "exec: the workspace "+ws+" is not a directory", false)
		}
	}
	cmd := osexec.Command(b.Argv[0], b.Argv[1:]...)
	cmd.Dir = t.Params.Workspace
	cmd.Env = append(append([]string{}, b.Env.Environ...), "AGENTRY_RUN_ID="+t.RunID, "AGENTRY_CHAT_ID="+t.Params.ChatID, "AGENTRY_MODEL="+t.Params.Model)
	if level := turnLevel(t.Params.Level, b.Env.Environ); level > 0 {
		// This backend enforces no level: it hands the turn's to the
		// command, which runagent takes as its own (RUNAGENT_LEVEL) and
		// as the most it may run at (AGENTRY_LEVEL).
		l := strconv.Itoa(level)
		cmd.Env = append(cmd.Env, "AGENTRY_LEVEL="+l, "RUNAGENT_LEVEL="+l)
	}
	// (A process that escaped the group may hold stdin unread, or stderr
	// open: StartPiped waits on those copies for a second after the exit.)
	child, err := proc.StartPiped(cmd, proc.Pipes{Stdin: strings.NewReader(t.Params.Prompt), Stderr: b.Env.StderrOr(), Tail: 2048, Options: b.Env.Start()})
	if err != nil {
		return host.Failed(protocol.CodeBackendUnavailable, fmt.Sprintf("starting %s: %v", b.Argv[0], err), false)
	}
	stdout, tail := child.Stdout, child.Stderr
	defer stdout.Close()

	var text bytes.Buffer
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		b.stream(stdout, t, &text)
	}()

	interrupted := false
	intr := t.Interrupted
	for waiting := true; waiting; {
		select {
		case <-child.Exited():
			waiting = false
		case <-intr:
			interrupted, intr = true, nil
			_ = child.Signal(syscall.SIGINT)
		case <-ctx.Done():
			_ = child.Signal(syscall.SIGKILL)
			<-child.Exited()
			waiting = false
		}
	}
	exit := child.End() // with what it left running in its group
	_ = stdout.SetReadDeadline(time.Now().Add(drainAfterExit))
	<-outDone

	if interrupted || ctx.Err() != nil {
		return host.ErrInterrupted
	}
	if exit.OK() {
		t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: text.String()})
		return nil
	}
	return host.Failed(protocol.CodeBackendFailed, describe(b.Argv[0], exit, tail.String()), false)
}

// stream turns stdout into text_delta events, never splitting a UTF-8
// character, and keeps up to MaxOutput bytes of it.
func (b *Backend) stream(r io.Reader, t *host.Turn, text *bytes.Buffer) {
	buf := make([]byte, 32<<10)
	var pending []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			pending = append(pending, buf[:n]...)
			cut := completeUTF8(pending)
			if cut > 0 {
				chunk := string(pending[:cut])
				t.Emit(protocol.AgentEvent{Type: protocol.EvTextDelta, Text: chunk})
				if room := b.MaxOutput - text.Len(); room > 0 {
					text.WriteString(chunk[:min(room, len(chunk))])
				}
				pending = append(pending[:0], pending[cut:]...)
			}
		}
		if err != nil {
			if len(pending) > 0 {
				t.Emit(protocol.AgentEvent{Type: protocol.EvTextDelta, Text: strings.ToValidUTF8(string(pending), "\uFFFD")})
			}
			return
		}
	}
}

// completeUTF8 returns how much of b ends on a character boundary: all of
// it unless it ends inside a multi-byte character that may yet complete.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// describe says how a failed command ended, with the tail of its stderr.
func describe(name string, exit proc.Exit, tail string) string {
	how := name + " " + exit.String()
	if tail = strings.TrimSpace(tail); tail != "" {
		how += ": " + tail
	}
	return how
}
