package await

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestUntilSeesAConditionMadeTrueByAnotherGoroutine(t *testing.T) {
	done := make(chan struct{})
	flag := make(chan bool, 1)
	go func() { flag <- true; close(done) }()
	var seen bool
	if !Until(10*time.Second, func() bool {
		select {
		case seen = <-flag:
		default:
		}
		return seen
	}) {
		t.Fatal("Until gave up on a condition that became true")
	}
	<-done
}

func TestUntilGivesUp(t *testing.T) {
	calls := 0
	if Until(30*time.Millisecond, func() bool { calls++; return false }) {
		t.Fatal("Until reported a condition that never held")
	}
	if calls < 2 {
		t.Errorf("polled %d times in 30ms", calls)
	}
}

func TestPIDWaitsForTheWholeLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pid")
	if err := os.WriteFile(path, []byte("12"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := PID(path, 20*time.Millisecond); err == nil || !strings.Contains(err.Error(), `"12"`) {
		t.Fatalf("a pid without its newline was taken, or the error does not show it: %v", err)
	}
	go os.WriteFile(path, []byte("1234\n"), 0o600)
	if pid, err := PID(path, 10*time.Second); err != nil || pid != 1234 {
		t.Fatalf("PID = %d, %v", pid, err)
	}
}

func TestMatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	go os.WriteFile(path, []byte("starting\nready on :8080\n"), 0o600)
	b, err := Match(path, regexp.MustCompile(`ready on :\d+`), 10*time.Second)
	if err != nil || !strings.Contains(string(b), "starting") {
		t.Fatalf("Match = %q, %v", b, err)
	}
	if _, err := Match(path, regexp.MustCompile(`never`), 10*time.Millisecond); err == nil || !strings.Contains(err.Error(), "ready on :8080") {
		t.Fatalf("a timeout does not show what the file held: %v", err)
	}
}
