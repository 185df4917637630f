package svc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestNames(t *testing.T) {
	for _, ok := range []string{"web", "api-2", "db_main", "v1.2", "shop/api"} {
		if err := ValidName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "..", "../x", "a/b/c", "/x", "x/", "a b", ".x", "-x", "tab\tname", "nul\x00", strings.Repeat("x", 65), "naïve"} {
		if ValidName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A project's service lives beside the plain ones, in a directory no plain
// name can have, and List gives it back by its name.
func TestProjectServiceDirs(t *testing.T) {
	home := t.TempDir()
	for _, name := range []string{"shop/api", "shop", "api"} {
		d := Dir{Home: home, Name: name}
		if err := os.Mkdir(d.Path(), 0o700); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if got := (Dir{Home: home, Name: "shop/api"}).Path(); got != home+"/shop+api" {
		t.Errorf("path %s", got)
	}
	names, err := List(home)
	if err != nil || strings.Join(names, " ") != "api shop shop/api" {
		t.Errorf("List: %q %v", names, err)
	}
	if ValidPlainName("shop/api") == nil {
		t.Error("a plain name with a slash")
	}
}

// Each directory gets its own project name, the same one every time, even
// when many claim at once and their base names are equal.
func TestProjectNames(t *testing.T) {
	home := t.TempDir()
	dirs := []string{"/src/shop", "/tmp/wt/shop", "/x/shop", "/src/my app"}
	got := make([]string, len(dirs))
	errs := make(chan error, len(dirs))
	for i, d := range dirs {
		go func() {
			var err error
			got[i], err = ProjectName(home, d)
			errs <- err
		}()
	}
	for range dirs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for i, d := range dirs {
		if seen[got[i]] {
			t.Errorf("%s shares the name %s", d, got[i])
		}
		seen[got[i]] = true
		again, err := ProjectName(home, d)
		if err != nil || again != got[i] {
			t.Errorf("%s: %s then %s (%v)", d, got[i], again, err)
		}
		if found, _ := Registry(home).FindProject(d); found != got[i] {
			t.Errorf("FindProject(%s) = %s", d, found)
		}
	}
	if got[3] != "myapp" || !seen["shop"] || !seen["shop-2"] || !seen["shop-3"] {
		t.Errorf("names %v", got)
	}
	if found, _ := Registry(home).FindProject("/elsewhere"); found != "" {
		t.Errorf("a directory svc up never saw has project %q", found)
	}
}

func TestStateAtomicAndDamaged(t *testing.T) {
	d := Dir{Home: t.TempDir(), Name: "s"}
	os.Mkdir(d.Path(), 0o700)
	if err := WriteState(d, &State{Name: "s", Status: Ready, PID: 42}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(d.StatePath())
	if bytes.Count(b, []byte{'\n'}) != 1 || b[0] != '{' {
		t.Errorf("state.json is not one line: %q", b)
	}
	st, _ := os.Stat(d.StatePath())
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	os.WriteFile(d.StatePath(), []byte("{torn"), 0o600)
	if _, err := ReadState(d); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged state: %v", err)
	}
}

// A stop cause goes into state.json and comes back as it was; a state an
// older monitor wrote, with its note and no cause, reads as it was.
func TestStopCauseRoundTrip(t *testing.T) {
	d := Dir{Home: t.TempDir(), Name: "s"}
	os.Mkdir(d.Path(), 0o700)
	cause := &StopCause{Kind: LeftBehind, N: 2, Program: "sh", NotFollowed: NoFollow}
	if err := WriteState(d, &State{Name: "s", Status: Exited, StopCause: cause}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(d.StatePath())
	if !bytes.Contains(b, []byte(`"stopCause":{"kind":"leftBehind","n":2,"program":"sh","notFollowed":"noFollow"}`)) || bytes.Contains(b, []byte("--")) {
		t.Errorf("state.json: %s", b)
	}
	if s, err := ReadState(d); err != nil || s.StopCause == nil || *s.StopCause != *cause {
		t.Errorf("read back: %v %+v", err, s)
	}
	old := `{"name":"s","status":"exited","startedAt":"2025-01-01T00:00:00Z","stopNote":"stopped because process 9 (--until-exit) ended"}` + "\n"
	os.WriteFile(d.StatePath(), []byte(old), 0o600)
	if s, err := ReadState(d); err != nil || s.StopCause != nil || s.StopNote != "stopped because process 9 (--until-exit) ended" {
		t.Errorf("an older monitor's state: %v %+v", err, s)
	}
}

// Spec.Check names the field that is wrong; a good spec passes.
func TestSpecCheck(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/f"
	os.WriteFile(file, nil, 0o600)
	good := Spec{Command: []string{"true"}, Cwd: dir, Env: []string{"A=1", "B="}}
	if err := good.Check(); err != nil {
		t.Fatalf("a good spec: %v", err)
	}
	for _, c := range []struct {
		field string
		edit  func(*Spec)
		is    error
	}{
		{"command", func(s *Spec) { s.Command = nil }, ErrNoCommand},
		{"command", func(s *Spec) { s.Command = []string{"  "} }, ErrNoCommand},
		{"cwd", func(s *Spec) { s.Cwd = file }, ErrNotDir},
		{"env", func(s *Spec) { s.Env = []string{"=1"} }, ErrNoEnvName},
		{"env", func(s *Spec) { s.Env = []string{"NOEQUALS"} }, ErrNoEnvName},
		{"logKeep", func(s *Spec) { s.LogKeep = -1 }, ErrZero},
		{"maxRestarts", func(s *Spec) { s.MaxRestarts = -1 }, ErrNegative},
		{"restart", func(s *Spec) { s.Restart = "sometimes" }, ErrBadRestart},
		{"ready", func(s *Spec) { s.ReadyURL, s.ReadyPort = "http://x", 3 }, ErrManyReady},
		{"readyPort", func(s *Spec) { s.ReadyPort = 70000 }, ErrBadPort},
		{"stopSignal", func(s *Spec) { s.StopSignal = "BOGUS" }, ErrBadSignal},
		{"stopSignal", func(s *Spec) { s.StopSignal = "STOP" }, ErrBadSignal},
	} {
		s := good
		c.edit(&s)
		var fe *FieldError
		if err := s.Check(); !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, c.is) {
			t.Errorf("%s: got %v", c.field, err)
		}
	}
}

// The typed errors are told apart by errors.Is and As, and keep the words
// the command line printed before.
func TestTypedErrors(t *testing.T) {
	d := Dir{Home: t.TempDir(), Name: "gone"}
	if _, err := Look(d); !errors.Is(err, ErrNotFound) || err.Error() != "no service called gone" {
		t.Errorf("Look of nothing: %v", err)
	}
	if _, err := Stop(d, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("Stop of nothing: %v", err)
	}
	taken := error(&TakenError{Name: "web"})
	if !errors.Is(taken, ErrNameTaken) || taken.Error() != "name taken: a service called web is running" {
		t.Errorf("taken: %v", taken)
	}
	var ne *NameError
	if err := ValidPlainName("a/b"); !errors.As(err, &ne) {
		t.Errorf("a/b: %v", err)
	}
	if _, err := Start(context.Background(), StartOptions{Home: t.TempDir(), Name: "x", Spec: Spec{}}); !errors.Is(err, ErrNoCommand) {
		t.Errorf("Start of no command: %v", err)
	}
}

// A service whose monitor holds the lock but has written no state yet is
// being started: svc ls said "stopped" in those first milliseconds.
func TestLookBeforeFirstState(t *testing.T) {
	d := Dir{Home: t.TempDir(), Name: "fresh"}
	if err := os.Mkdir(d.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	if l, err := Look(d); err != nil || l.Status != Stopped {
		t.Fatalf("no monitor, no state: %v %v", l, err)
	}
	lock, ok, err := TryLock(d)
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	defer lock.Close()
	if l, err := Look(d); err != nil || l.Status != Starting || !l.Supervised {
		t.Errorf("a monitor, no state yet: %+v %v", l, err)
	}
}

// A look at the lock (Supervised, from any svc ls or port pick) holds it
// shared for an instant: a monitor taking it then is not refused, as
// if the name were another's (svc up in three worktrees at once saw
// "name taken"); a monitor's own hold still refuses it.
func TestTryLockOutlastsALook(t *testing.T) {
	d := Dir{Home: t.TempDir(), Name: "looked"}
	if err := os.Mkdir(d.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	look, err := os.OpenFile(d.LockPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(look.Fd()), unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	// The look ends a little later, as Supervised's does at once.
	time.AfterFunc(20*time.Millisecond, func() { look.Close() })
	lock, ok, err := TryLock(d)
	if err != nil || !ok {
		t.Fatalf("refused behind a look: %v %v", ok, err)
	}
	defer lock.Close()
	if other, ok, err := TryLock(d); err != nil || ok {
		if other != nil {
			other.Close()
		}
		t.Errorf("taken while a monitor holds it: %v %v", ok, err)
	}
}
