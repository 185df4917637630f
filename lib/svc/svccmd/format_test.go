package svccmd

import (
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/svc"
)

// A stop cause is said with svc's flags; a note an older monitor wrote
// in state.json is shown as it is.
func TestStopCauseStatus(t *testing.T) {
	for _, c := range []struct {
		cause *svc.StopCause
		note  string
		want  string
	}{
		{&svc.StopCause{Kind: svc.UntilExit, PID: 4242}, "", "note: stopped because process 4242 (--until-exit) ended"},
		{&svc.StopCause{Kind: svc.GaveUp, N: 2}, "", "note: gave up after 2 restarts (--max-restarts)"},
		{&svc.StopCause{Kind: svc.LeftBehind, N: 1, Program: "sh", NotFollowed: svc.NoFollow}, "", "note: sh left 1 process behind; stopped it (--no-follow)"},
		{&svc.StopCause{Kind: svc.LeftBehind, N: 2, Program: "redis-server"}, "", "note: redis-server left 2 processes behind; stopped them"},
		{nil, "gave up after 3 restarts (--max-restarts)", "note: gave up after 3 restarts (--max-restarts)"},
	} {
		l := &svc.Listing{State: svc.State{Name: "web", Status: svc.Exited, StopCause: c.cause, StopNote: c.note}}
		if got := FormatStatus(l, time.Now(), svc.Proxied{}); !strings.Contains(got, "\n"+c.want+"\n") {
			t.Errorf("%+v: %q\nwant %q", c.cause, got, c.want)
		}
	}
}
