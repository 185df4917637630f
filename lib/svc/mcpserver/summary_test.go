package mcpserver

import (
	"testing"

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
