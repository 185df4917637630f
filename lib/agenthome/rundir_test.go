package agenthome

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentry/agentry/lib/proc"
)

// place is a test's temporary directory (TMPDIR), the user's directory
// in it, and this process (as the owner a run directory is named for).
type place struct {
	tmp, user string
	me        proc.Info
}

func newPlace(t *testing.T) place {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	me, err := proc.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return place{tmp, filepath.Join(tmp, "agentry-"+strconv.Itoa(os.Getuid())), me}
}

// dir is the name of a run directory in in, of an owner with this
// process's pid and start start; made, 0700, when create.
func (p place) dir(t *testing.T, in, prefix string, start uint64, tail string, create bool) string {
	d := filepath.Join(in, fmt.Sprintf("%s-%d-%d-%s", prefix, p.me.PID, start, tail))
	if create {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// A run's directory left by an owner killed outright is swept by the next
// run, under each prefix it sweeps; one whose owner still runs is not, nor
// one that is not a run's directory at all. They are in the user's own
// directory of the temporary directory, 0700, and the first sweep takes
// what earlier versions left in the temporary directory itself.
func TestSweepTakesTheDead(t *testing.T) {
	p := newPlace(t)
	gone := p.me.Start + 1                                   // same pid, another start: not us
	legacy := p.dir(t, p.tmp, CodexPrefix, gone, "x0", true) // left before agentry-UID
	legacyLive := p.dir(t, p.tmp, CodexPrefix, p.me.Start, "x5", true)
	runs := NewRuns()
	if fi, err := os.Lstat(p.user); err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
		t.Fatalf("the user's directory: %v %v", fi, err)
	}
	dead := p.dir(t, p.user, CodexPrefix, gone, "x1", true)
	deadScratch := p.dir(t, p.user, RunagentScratch, gone, "x3", true)
	live := p.dir(t, p.user, CodexPrefix, p.me.Start, "x2", true)
	unswept := p.dir(t, p.user, HostCodexScratch, gone, "x4", true) // a prefix not asked for
	other := filepath.Join(p.user, CodexPrefix+"-notours")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := runs.Dir(CodexPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(d), fmt.Sprintf("%s-%d-%d-", CodexPrefix, p.me.PID, p.me.Start)) || filepath.Dir(d) != p.user {
		t.Errorf("made %s", d)
	}
	runs.Sweep(RunagentScratch, CodexPrefix)
	want := map[string]bool{dead: false, deadScratch: false, live: true, other: true, unswept: true, d: true, legacy: false, legacyLive: true}
	for path, want := range want {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", path, err == nil, want)
		}
	}
}

// The temporary directory itself is swept once, of every component's
// prefix, whoever made the user's directory and whatever it sweeps: here
// a zero Runs (as agent-host's codex backend has) makes the directory,
// and a later sweep of claude's prefix alone takes runagent's old
// CODEX_HOME too. It is not read again after.
func TestSweepOfTheTemporaryDirectoryIsOnce(t *testing.T) {
	p := newPlace(t)
	gone := p.me.Start + 1
	codex := p.dir(t, p.tmp, CodexPrefix, gone, "a", true)
	files := p.dir(t, p.tmp, HostClaudeFiles, gone, "b", true)
	var zero Runs
	d, err := zero.Dir(HostCodexScratch)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(d) != p.user {
		t.Fatalf("made %s", d)
	}
	NewRuns().Sweep(HostClaudeFiles)
	for _, d := range []string{codex, files} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s: not swept", d)
		}
	}
	later := p.dir(t, p.tmp, CodexPrefix, gone, "c", true)
	NewRuns().Sweep(CodexPrefix)
	if _, err := os.Stat(later); err != nil {
		t.Errorf("the temporary directory swept again: %v", err)
	}
}

// The user's directory made under a umask that takes the owner's bits
// is made 0700 all the same, and used.
func TestRunsUnderATightUmask(t *testing.T) {
	p := newPlace(t)
	old := syscall.Umask(0o277)
	d, err := NewRuns().Dir(RunagentScratch)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(d) != p.user {
		t.Errorf("made %s, not in %s", d, p.user)
	}
	if fi, err := os.Lstat(p.user); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v", p.user, fi, err)
	}
}

// The user's directory gone between the run finding it and making a
// directory in it (a cleaner of /tmp) is made again; a link that took its
// place meanwhile is not followed: the run's directory goes in the
// temporary directory itself, and nothing is left where the link led.
func TestRunsWhenTheDirectoryChanges(t *testing.T) {
	p := newPlace(t)
	tmp, user := p.tmp, p.user
	runs := NewRuns()
	if err := os.Remove(user); err != nil {
		t.Fatal(err)
	}
	d, err := runs.Dir(RunagentScratch)
	if err != nil || filepath.Dir(d) != user {
		t.Fatalf("after the directory went: made %s, %v", d, err)
	}
	// A link at the name, to a directory it would have the run's files
	// made in.
	os.RemoveAll(user)
	elsewhere := filepath.Join(tmp, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, user); err != nil {
		t.Fatal(err)
	}
	d, err = runs.Dir(RunagentScratch)
	if err != nil || filepath.Dir(d) != tmp {
		t.Errorf("after the directory was replaced: made %s, %v", d, err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("left where the link led: %v", entries)
	}
}

// An agentry-UID that is not the user's alone — open to others, another
// user's, a link to a directory — is not used: the run directories go in
// the temporary directory itself, as they did before it.
func TestRunsRefuseAnOpenDirectory(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(user, tmp string) error
	}{
		{"open to others", func(user, _ string) error {
			if err := os.Mkdir(user, 0o700); err != nil {
				return err
			}
			return os.Chmod(user, 0o777)
		}},
		{"open to its group", func(user, _ string) error {
			if err := os.Mkdir(user, 0o700); err != nil {
				return err
			}
			return os.Chmod(user, 0o750)
		}},
		{"another user's", func(user, _ string) error {
			if os.Geteuid() != 0 {
				t.Skip("needs root, to give a directory to another user")
			}
			if err := os.Mkdir(user, 0o700); err != nil {
				return err
			}
			return os.Chown(user, 61917, 61917)
		}},
		{"a link", func(user, tmp string) error {
			elsewhere := filepath.Join(tmp, "elsewhere")
			if err := os.Mkdir(elsewhere, 0o700); err != nil {
				return err
			}
			return os.Symlink(elsewhere, user)
		}},
		{"a file", func(user, _ string) error { return os.WriteFile(user, nil, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlace(t)
			if err := tc.make(p.user, p.tmp); err != nil {
				t.Fatal(err)
			}
			d, err := NewRuns().Dir(RunagentScratch)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Dir(d) != p.tmp {
				t.Errorf("made %s, not in %s", d, p.tmp)
			}
			if fi, err := os.Lstat(d); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v %v", d, fi, err)
			}
		})
	}
}

// The user's empty directory is made once, 0500 whatever the umask, and
// kept: the next run is given the same one.
func TestEmptyIsMadeOnceAndKept(t *testing.T) {
	p := newPlace(t)
	old := syscall.Umask(0o277)
	d, err := NewRuns().Empty()
	syscall.Umask(old)
	if err != nil || d != filepath.Join(p.user, "empty") {
		t.Fatalf("Empty: %q, %v", d, err)
	}
	if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o500 {
		t.Fatalf("%s: %v %v", d, fi, err)
	}
	if again, err := NewRuns().Empty(); err != nil || again != d {
		t.Errorf("again: %q, %v", again, err)
	}
	if entries, _ := os.ReadDir(p.user); len(entries) != 1 {
		t.Errorf("the user's directory holds %v", entries)
	}
}

// An empty directory that holds something, whose mode was changed, that
// is a link, or that is in no directory of the user's own is not used.
func TestEmptyRefusedWhenNotEmpty(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, empty, user, tmp string)
	}{
		{"written to", func(t *testing.T, empty, _, _ string) {
			os.Chmod(empty, 0o700)
			if err := os.WriteFile(filepath.Join(empty, "left"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chmod(empty, 0o500)
		}},
		{"made writable", func(t *testing.T, empty, _, _ string) {
			if err := os.Chmod(empty, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"a link", func(t *testing.T, empty, _, tmp string) {
			elsewhere := filepath.Join(tmp, "elsewhere")
			if err := os.Mkdir(elsewhere, 0o500); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(empty); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, empty); err != nil {
				t.Fatal(err)
			}
		}},
		{"in an open directory", func(t *testing.T, _, user, _ string) {
			if err := os.Chmod(user, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlace(t)
			empty, err := NewRuns().Empty()
			if err != nil {
				t.Fatal(err)
			}
			tc.spoil(t, empty, p.user, p.tmp)
			if d, err := NewRuns().Empty(); err != ErrNoEmpty {
				t.Errorf("Empty: %q, %v; want ErrNoEmpty", d, err)
			}
			os.Chmod(empty, 0o700) // for the test's cleanup
		})
	}
}
