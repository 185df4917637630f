package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/svc"
)

func TestStartSummaryOfAWatcher(t *testing.T) {
	got := startSummary(&svc.StartResult{Name: "logs", Status: svc.Running, PID: 42})
	want := "logs is running (pid 42) and does not listen: nothing to connect to, so there is nothing to wait for; output shows what it prints"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	got = startSummary(&svc.StartResult{Name: "w", Status: svc.Running, PID: 7, Restarts: 2})
	if want := "w is running (pid 7) and does not listen: nothing to connect to, so there is nothing to wait for; output shows what it prints\nnote: restarted 2 times so far (status has how the last run ended)"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// A stop cause is said to an agent without svc's flags; a note an older
// monitor wrote is shown as it is.
func TestStopCauseSummary(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		cause *svc.StopCause
		note  string
		want  string
	}{
		{&svc.StopCause{Kind: svc.UntilExit, PID: 4242}, "", "note: stopped because process 4242 (the process it was tied to) ended"},
		{&svc.StopCause{Kind: svc.GaveUp, N: 2}, "", "note: gave up after 2 restarts (the most restarts it was given)"},
		{&svc.StopCause{Kind: svc.LeftBehind, N: 1, Program: "sh", NotFollowed: svc.NoFollow}, "", "note: sh left 1 process behind; stopped it (it was started not to follow a daemon)"},
		{&svc.StopCause{Kind: svc.LeftBehind, N: 3, NotFollowed: svc.OneShot}, "", "note: the command left 3 processes behind; stopped them (a one-shot)"},
		{nil, "stopped because process 9 (--until-exit) ended", "note: stopped because process 9 (--until-exit) ended"},
	} {
		l := &svc.Listing{State: svc.State{Name: "web", Status: svc.Exited, StopCause: c.cause, StopNote: c.note}}
		got := statusSummary(l, now)
		if _, note, _ := strings.Cut(got, "\n"); note != c.want {
			t.Errorf("%+v: %q\nwant %q", c.cause, got, c.want)
		}
		r := &svc.StartResult{Name: "web", Status: svc.Exited, StopCause: c.cause, StopNote: c.note}
		if got := startSummary(r); !strings.HasSuffix(got, "\n"+c.want) {
			t.Errorf("start %+v: %q", c.cause, got)
		}
	}
}
