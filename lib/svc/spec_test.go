package svc

import (
	"syscall"
	"testing"
	"time"
)

// go run gets SIGINT, which has it remove its build directory; every other
// command SIGTERM. A given signal is kept, by its name.
func TestStopSignal(t *testing.T) {
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"go", "run", "."}, "SIGINT"},
		{[]string{"/usr/local/go/bin/go", "run", "./cmd/web"}, "SIGINT"},
		{[]string{"go run ./cmd/web --port 8080"}, "SIGINT"},
		{[]string{"PORT=1 exec go run ."}, "SIGINT"},
		{[]string{"sh", "-c", "go run ."}, "SIGINT"},
		{[]string{"bash", "-lc", "cd api && exec go run ./cmd/web"}, "SIGINT"},
		{[]string{"cd . && go run ."}, "SIGINT"},
		{[]string{"go run . 2>&1 | tee log"}, "SIGINT"},
		{[]string{"go run .; echo stopped"}, "SIGINT"},
		{[]string{"env", "-u", "X", "nice", "-n", "5", "go", "run", "."}, "SIGINT"},
		{[]string{"nice -n 5 timeout 1h go run ."}, "SIGINT"},
		{[]string{"go run ./gen && node server.js"}, "SIGTERM"},
		{[]string{"go", "build"}, "SIGTERM"},
		{[]string{"npm run dev"}, "SIGTERM"},
		{[]string{"gorun"}, "SIGTERM"},
	} {
		if got := DefaultStopSignal(c.cmd); got != c.want {
			t.Errorf("DefaultStopSignal(%q) = %s, want %s", c.cmd, got, c.want)
		}
	}
	s := Spec{Command: []string{"go", "run", "."}, StopSignal: "quit"}.WithDefaults()
	if s.StopSignal != "SIGQUIT" || s.Signal() != syscall.SIGQUIT {
		t.Errorf("a given signal: %q", s.StopSignal)
	}
	if s := (Spec{Command: []string{"sleep", "1"}}).WithDefaults(); s.Signal() != syscall.SIGTERM || s.StopSignal != "SIGTERM" {
		t.Errorf("the default: %q", s.StopSignal)
	}
}

// A spec an earlier svc recorded with what this one refuses (a debounce
// without a watch, a probe's timing without a probe, a timeout longer
// than the time between probes) is made one it starts, so that svc
// restart never stops a service it then refuses to start.
func TestRecordedSpecsStartAgain(t *testing.T) {
	for _, s := range []Spec{
		{Command: []string{"x"}, WatchSpec: WatchSpec{Debounce: time.Second, WatchExclude: []string{"*.x"}}},
		{Command: []string{"x"}, HealthSpec: HealthSpec{HealthEvery: time.Second, HealthFailures: 2}},
		{Command: []string{"x"}, HealthSpec: HealthSpec{HealthCmd: "true", HealthEvery: time.Second, HealthTimeout: 8 * time.Second}},
		{Command: []string{"x"}, HealthSpec: HealthSpec{HealthCmd: "true", HealthTimeout: 8 * time.Second}},
	} {
		if s.Check() == nil {
			t.Fatalf("%+v: checks already", s)
		}
		if err := s.recorded().Check(); err != nil {
			t.Errorf("%+v recorded: %v", s, err)
		}
	}
	kept := Spec{Command: []string{"x"}, HealthSpec: HealthSpec{HealthCmd: "true", HealthEvery: 2 * time.Second, HealthTimeout: time.Second}}
	if got := kept.recorded(); got.HealthTimeout != time.Second || got.HealthEvery != 2*time.Second {
		t.Errorf("a good spec changed: %+v", got)
	}
}
