package peers

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A resumed claude run on agentry's host (--answers) reports its own
// turn's cost in --json and in its usage event, not the session's
// running total that claude's result carries after a resume: the fake
// API's one answer costs the same in the first run and the resumed one.
func TestHostedResumeCost(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	env := claudeEnv(t, api)
	work := t.TempDir()
	answers := writeJSON(t, "none.json", `{}`)
	r := runagent(t, env, work, "-l", "1", "--answers", answers, "--json", "SAY first")
	first := parseLoop(t, r)
	if r.code != 0 || first.Usage == nil || first.Usage.CostUSD == nil || *first.Usage.CostUSD <= 0 || first.Session == "" {
		t.Fatalf("first run: exit %d %+v\nstderr %s", r.code, first, r.stderr)
	}
	events := filepath.Join(t.TempDir(), "events.ndjson")
	r = runagent(t, env, work, "-l", "1", "--resume", first.Session, "--answers", answers, "--json", "--events", events, "SAY second")
	second := parseLoop(t, r)
	if r.code != 0 || second.Usage == nil || second.Usage.CostUSD == nil {
		t.Fatalf("resumed run: exit %d %+v\nstderr %s", r.code, second, r.stderr)
	}
	want := fmt.Sprintf("%.9f", *first.Usage.CostUSD)
	if got := fmt.Sprintf("%.9f", *second.Usage.CostUSD); got != want {
		t.Errorf("the resumed run's --json cost is %s, its one answer costs %s (the first run's)", got, want)
	}
	if cost, _ := usageEvents(t, events); fmt.Sprintf("%.9f", cost) != want {
		b, _ := os.ReadFile(events)
		t.Errorf("the resumed run's usage events add up to %v, want %s\n%s", cost, want, b)
	}
}
