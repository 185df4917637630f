package ndjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzUnescape: a valid string literal unescapes as encoding/json decodes it.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u2028\ud83d\ude80"`, `"\ud800x"`, `"\udc00\ud800"`, `"\ud83d\u0041"`, `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		raw = strings.Trim(raw, " \t\r\n") // as gjson gives it: no space around
		if Check([]byte(raw)) != Valid || len(raw) < 2 || raw[0] != '"' {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("valid %q does not decode: %v", raw, err)
		}
		if got := string(AppendUnescaped(nil, []byte(raw), false)); got != want {
			t.Fatalf("AppendUnescaped(%q) = %q, want %q", raw, got, want)
		}
		// Doubling quotes, the same text with each quote doubled.
		if got, want := string(AppendUnescaped(nil, []byte(raw), true)), strings.ReplaceAll(want, `"`, `""`); got != want {
			t.Fatalf("AppendUnescaped(%q, doubleQuotes) = %q, want %q", raw, got, want)
		}
	})
}
