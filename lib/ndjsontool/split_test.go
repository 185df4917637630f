package ndjsontool

import (
	"strings"
	"testing"
)

func TestSplitName(t *testing.T) {
	for raw, want := range map[string]string{
		`"opus"`: "opus", `"a/b"`: "a%2Fb", `".."`: "%2E.", `"."`: "%2E", `""`: "%22%22",
		`1`: "1", `1.0`: "1", `1E0`: "1", `10e-1`: "1", `-0`: "0", `0.5`: "0.5", `1e21`: "1e21", `1e-7`: "1e-07",
		`"1"`: "%31", `"true"`: "%74rue", `true`: "true", `null`: "null", `"null"`: "%6Eull",
		`9007199254740993`: "9007199254740993", `"a\u002fb"`: "a%2Fb", `"%"`: "%25",
		`{"a": 1}`: "%7B%22a%22%3A1%7D",
	} {
		if got := SplitName([]byte(raw)); got != want {
			t.Errorf("SplitName(%s) = %q, want %q", raw, got, want)
		}
	}
	long := SplitName([]byte(`"` + strings.Repeat("x", 500) + `"`))
	other := SplitName([]byte(`"` + strings.Repeat("x", 499) + `y"`))
	if len(long) != maxName || long == other || !strings.Contains(long, "%~") {
		t.Errorf("long names %q %q", long, other)
	}
	for _, raw := range []string{`"../x"`, `"/etc"`, `".x"`, `"a\u0000b"`, `"\\"`} {
		if n := SplitName([]byte(raw)); strings.ContainsAny(n, "/\x00\\") || n[0] == '.' {
			t.Errorf("SplitName(%s) = %q", raw, n)
		}
	}
}
