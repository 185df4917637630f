package ndjsontool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/ndjson"
)

func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u2028\ud83d\ude80"`, `"\ud800x"`, `"\udc00\ud800"`, `"\ud83d\u0041"`, `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		raw = strings.Trim(raw, " \t\r\n") // as gjson gives it: no space around
		if ndjson.Check([]byte(raw)) != ndjson.Valid || len(raw) < 2 || raw[0] != '"' {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("valid %q does not decode: %v", raw, err)
		}
		if got := string(appendUnescaped(nil, raw)); got != want {
			t.Fatalf("appendUnescaped(%q) = %q, want %q", raw, got, want)
		}
	})
}
