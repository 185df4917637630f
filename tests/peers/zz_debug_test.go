package peers

import (
	"regexp"
	"testing"
)

func TestZZCodexToolNames(t *testing.T) {
	need(t)
	env, api := servicesAgents[1].env(t)
	env, _ = servicesEnv(t, env)
	runagent(t, env, t.TempDir(), "--agent", "codex", "-l", "2", "--services", "SAY hi")
	for _, b := range api.bodies {
		if j := regexp.MustCompile(`\{"type":"tool_search"`).FindStringIndex(b); j != nil {
			t.Logf("tool_search: %.3000s", b[j[0]:])
		}
		break
	}
}
