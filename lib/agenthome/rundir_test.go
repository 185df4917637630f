package agenthome

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/proc"
)

// A run's directory left by an owner killed outright is swept by the next
// run, under each prefix it sweeps; one whose owner still runs is not, nor
// one that is not a run's directory at all.
func TestSweepTakesTheDead(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	me, err := proc.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	dir := func(prefix string, start uint64, tail string) string {
		return filepath.Join(tmp, fmt.Sprintf("%s-%d-%d-%s", prefix, me.PID, start, tail))
	}
	dead := dir(CodexPrefix, me.Start+1, "x1") // same pid, another start: not us
	deadScratch := dir("runagent-scratch", me.Start+1, "x3")
	live := dir(CodexPrefix, me.Start, "x2")
	other := filepath.Join(tmp, CodexPrefix+"-notours")
	unswept := dir("agent-host-codex", me.Start+1, "x4") // a prefix not asked for
	for _, d := range []string{dead, deadScratch, live, other, unswept} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "auth.json"), []byte("{}"), 0o600)
	}
	d, err := RunDir(CodexPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(d), fmt.Sprintf("%s-%d-%d-", CodexPrefix, me.PID, me.Start)) || filepath.Dir(d) != tmp {
		t.Errorf("made %s", d)
	}
	Sweep("runagent-scratch", CodexPrefix)
	for path, want := range map[string]bool{dead: false, deadScratch: false, live: true, other: true, unswept: true, d: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", path, err == nil, want)
		}
	}
}
