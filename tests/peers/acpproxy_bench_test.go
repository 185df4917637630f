package peers

import (
	"fmt"
	"testing"

	"github.com/agentry/agentry/tests/acpclient"
)

// TestBenchACPProxy puts agent-host --acp --backend acp, an enforcing
// proxy, in front of claude-agent-acp, beside the adapter spoken to
// directly, on the same fake API: what the proxy adds to a turn and to
// the tree's memory (make bench runs it).
func TestBenchACPProxy(t *testing.T) {
	needBench(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Skip("no ACP SDK in $AGENTRY_PEERS/acp")
	}
	api := fakeAnthropic(t)
	env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "CLAUDE_CODE_EXECUTABLE="+claudeBin, "XDG_STATE_HOME="+t.TempDir())
	adapter := []string{"node", acpAdapter(t, "@zed-industries/claude-agent-acp/dist/index.js")}
	for _, a := range []acpAgent{
		{"claude-agent-acp", adapter, env},
		{"agent-host acp", append([]string{hostBin(), "--acp", "--backend", "acp", "--"}, adapter...), env},
	} {
		fmt.Println("ACP proxy:", acpFigures(t, sdk, a))
	}
}
