package peers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codex under runagent keeps --max-budget-usd within its turn (issue 45):
// a budget or a tool-call cap runs codex through agentry's host (codex
// app-server, which reports usage as it grows), so the turn stops where
// the budget is crossed (exit 3), not after all its calls, as codex exec
// (tokens only at the turn's end) did: a run of eight calls at
// --price 1,2 --max-budget-usd 0.00005 (each request of the fake costs
// 20 in and 8 out, $0.000036) is stopped after its second request.
func TestRunagentCodexBudgetMidTurn(t *testing.T) {
	need(t)
	a := loopAgents[1]
	steps := "STEPS:\n"
	for i := 1; i <= 8; i++ {
		steps += a.shell(fmt.Sprintf("echo step %d >> log.txt", i)) + "\n"
	}
	api := a.fake(t)
	work := t.TempDir()
	r := runagent(t, a.env(t, api), work, append(a.args, "-l", "2", "--price", "1,2", "--max-budget-usd", "0.00005", "--json", steps)...)
	res := parseLoop(t, r)
	b, _ := os.ReadFile(filepath.Join(work, "log.txt"))
	lines := strings.Count(string(b), "\n")
	api.mu.Lock()
	requests := api.requests
	api.mu.Unlock()
	if r.code != 3 || res.Limit != "--max-budget-usd" || res.Usage == nil || res.Usage.CostUSD == nil || *res.Usage.CostUSD < 0.00005 {
		t.Fatalf("exit %d %+v %+v\nstderr %s", r.code, res, res.Usage, r.stderr)
	}
	if lines >= 8 || requests >= 9 {
		t.Fatalf("the turn went on past the budget: %d commands ran, %d requests", lines, requests)
	}
}
