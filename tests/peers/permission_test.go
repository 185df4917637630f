package peers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/protocol"
)

// writeCall is a fake model's shell call that would write out.txt.
const writeCall = `CALL Bash {"command":"echo hello > out.txt","description":"write out.txt"}`

// askTurn starts a turn with params p that asks for permissions, the
// chat's out.txt removed first (the chat's process lives on in the
// workspace of its first turn), and returns it with its first permission
// request, which must be for tool.
func askTurn(t *testing.T, c hostclient.Client, runID, tool string, p protocol.ChatRunParams) (*hostclient.Run, *protocol.PermissionRequest) {
	t.Helper()
	os.Remove(filepath.Join(p.Workspace, "out.txt"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p.Permissions = protocol.PermissionsAsk
	r, err := c.RunTurn(ctx, runID, p)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case q := <-r.Asks():
		if q == nil {
			done, err := r.Wait(ctx)
			t.Fatalf("the run ended without asking: %+v %v", done, err)
		}
		if q.Tool != tool || !strings.Contains(string(q.Input), "echo hello > out.txt") {
			t.Fatalf("request %+v", q)
		}
		return r, q
	case <-ctx.Done():
		t.Fatal("no permission request within 60s")
	}
	return nil, nil
}

func collect(t *testing.T, r *hostclient.Run) ([]protocol.AgentEvent, *protocol.RunDone) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	evs, done, err := r.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return evs, done
}

func resolution(t *testing.T, r *hostclient.Run, q *protocol.PermissionRequest, want string) {
	t.Helper()
	res, ok := r.Resolution(q.RequestID)
	if !ok || res.Decision+"/"+res.By != want {
		t.Errorf("request %s resolved %+v, want %s", q.RequestID, res, want)
	}
}

// Claude Code's can_use_tool prompts, put to the daemon: denied, allowed,
// unanswered, and interrupted while pending.
func TestHostClaudePermissions(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	c := hostWithClaude(t, api)
	ctx := context.Background()
	work := t.TempDir()
	ask := func(t *testing.T, runID string, timeoutMs int64) (*hostclient.Run, *protocol.PermissionRequest) {
		return askTurn(t, c, runID, "Bash", protocol.ChatRunParams{ChatID: "c1", Prompt: writeCall, Workspace: work, PermissionTimeoutMs: timeoutMs})
	}

	t.Run("denied", func(t *testing.T) {
		r, q := ask(t, "r1", 60000)
		if err := c.AnswerPermission(ctx, "r1", q.RequestID, hostclient.Answer{Decision: "deny", Message: "not on this branch"}); err != nil {
			t.Fatal(err)
		}
		evs, done := collect(t, r)
		if done.StopReason != protocol.StopCompleted || last(evs).Text != "TOOL_RESULT(True): not on this branch" {
			t.Errorf("ended %s with %q", done.StopReason, last(evs).Text)
		}
		if _, err := os.Stat(filepath.Join(work, "out.txt")); err == nil {
			t.Error("a denied call wrote out.txt")
		}
		resolution(t, r, q, "deny/daemon")
	})

	t.Run("allowed", func(t *testing.T) {
		r, q := ask(t, "r2", 60000)
		if err := c.AnswerPermission(ctx, "r2", q.RequestID, hostclient.Answer{Decision: "allow"}); err != nil {
			t.Fatal(err)
		}
		evs, done := collect(t, r)
		if done.StopReason != protocol.StopCompleted || !strings.HasPrefix(last(evs).Text, "TOOL_RESULT(False)") {
			t.Errorf("ended %s with %q", done.StopReason, last(evs).Text)
		}
		if b, err := os.ReadFile(filepath.Join(work, "out.txt")); err != nil || string(b) != "hello\n" {
			t.Errorf("out.txt: %q %v", b, err)
		}
		resolution(t, r, q, "allow/daemon")
		// A second answer to the same request is refused.
		var re *hostclient.RemoteError
		if err := c.AnswerPermission(ctx, "r2", q.RequestID, hostclient.Answer{Decision: "deny"}); err == nil || !errors.As(err, &re) || re.Code != protocol.CodeUnknownRequest {
			t.Errorf("a second answer: %v", err)
		}
	})

	t.Run("unanswered", func(t *testing.T) {
		r, q := ask(t, "r3", 1500)
		if q.TimeoutMs != 1500 {
			t.Errorf("timeoutMs %d", q.TimeoutMs)
		}
		evs, done := collect(t, r)
		if done.StopReason != protocol.StopCompleted || !strings.Contains(last(evs).Text, "TOOL_RESULT(True): No answer to the permission request within 1.5s") {
			t.Errorf("ended %s with %q", done.StopReason, last(evs).Text)
		}
		if _, err := os.Stat(filepath.Join(work, "out.txt")); err == nil {
			t.Error("an unanswered call wrote out.txt")
		}
		resolution(t, r, q, "deny/timeout")
	})

	t.Run("interrupted", func(t *testing.T) {
		r, q := ask(t, "r4", 60000)
		if ok, err := c.Interrupt(ctx, "c1", ""); !ok || err != nil {
			t.Fatalf("interrupt: %v %v", ok, err)
		}
		_, done := collect(t, r)
		if done.StopReason != protocol.StopInterrupted {
			t.Errorf("ended %s", done.StopReason)
		}
		if _, err := os.Stat(filepath.Join(work, "out.txt")); err == nil {
			t.Error("an interrupted call wrote out.txt")
		}
		resolution(t, r, q, "deny/interrupt")
		// The chat goes on, without asking once the daemon stops asking.
		evs, done, err := runTurn(t, c, "r5", "c1", "SAY after the interrupt")
		if err != nil || done.StopReason != protocol.StopCompleted || last(evs).Text != "after the interrupt" {
			t.Fatalf("next turn: %+v %+v %v", last(evs), done, err)
		}
	})

	c.Close()
	if left := procsWithEnv("ANTHROPIC_BASE_URL=" + api.URL); len(left) > 0 {
		t.Errorf("still running after the host closed: %v", left)
	}
}
