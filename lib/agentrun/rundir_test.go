package agentrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/proc"
)

// A run's directory left by an owner killed outright is swept by the next
// run; one whose owner still runs is not.
func TestRunDirSweepsTheDead(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	me, err := proc.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(tmp, fmt.Sprintf("runagent-codex-%d-%d-x1", me.PID, me.Start+1)) // same pid, another start: not us
	live := filepath.Join(tmp, fmt.Sprintf("runagent-codex-%d-%d-x2", me.PID, me.Start))
	other := filepath.Join(tmp, "runagent-codex-notours")
	for _, d := range []string{dead, live, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "auth.json"), []byte("{}"), 0o600)
	}
	d, err := RunDir("runagent-codex")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(d), fmt.Sprintf("runagent-codex-%d-%d-", me.PID, me.Start)) || filepath.Dir(d) != tmp {
		t.Errorf("made %s", d)
	}
	for path, want := range map[string]bool{dead: false, live: true, other: true, d: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", path, err == nil, want)
		}
	}
}
