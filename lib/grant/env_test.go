package grant

import (
	"slices"
	"testing"
)

// GitGuard adds safe.bareRepository=explicit after the configuration the
// environment gives already, and nothing else changes.
func TestGitGuard(t *testing.T) {
	got := GitGuard([]string{"PATH=/bin", "GIT_CONFIG_PARAMETERS='user.name'='x'", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1"})
	want := []string{"PATH=/bin", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1",
		"GIT_CONFIG_PARAMETERS='user.name'='x' 'safe.bareRepository=explicit'"}
	if !slices.Equal(got, want) {
		t.Errorf("GitGuard = %q\nwant %q", got, want)
	}
	if got := GitGuard([]string{"HOME=/h"}); !slices.Equal(got, []string{"HOME=/h", "GIT_CONFIG_PARAMETERS='safe.bareRepository=explicit'"}) {
		t.Errorf("GitGuard = %q", got)
	}
}
