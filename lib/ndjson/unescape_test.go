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

// AppendTSV is AppendUnescaped then TSV's escapes of tab, newline,
// carriage return and backslash, for any string: escapes copied as JSON
// has them, \u escapes of those four, surrogate pairs, lone surrogates,
// and text without escapes.
func TestAppendTSV(t *testing.T) {
	tsv := func(s string) string {
		var b []byte
		for i := 0; i < len(s); i++ {
			switch c := s[i]; c {
			case '\t':
				b = append(b, `\t`...)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\\':
				b = append(b, `\\`...)
			default:
				b = append(b, c)
			}
		}
		return string(b)
	}
	cases := []string{`""`, `"plain"`, `"a\nb\tc\rd\\e"`, `"\u0009\u000a\u000D\u005c\u005C"`, `"\"q\" \/ \b\f"`,
		`"\ud83d\ude00 caf\u00e9"`, `"\ud800 lone"`, `"end\\"`, `"\\\\n"`}
	for i := range 2000 {
		// random mixes of the escapes and plain bytes
		var b strings.Builder
		b.WriteByte('"')
		for j := range i % 17 {
			b.WriteString([]string{`\n`, `\t`, `\r`, `\\`, `\"`, `\/`, `\u0009`, `\u005c`, `\ud83d\ude00`, `\udc00`, "x", "é", `\b`, `\u0041`}[(i*7+j*13)%14])
		}
		b.WriteByte('"')
		cases = append(cases, b.String())
	}
	for _, raw := range cases {
		want := tsv(string(AppendUnescaped(nil, []byte(raw), false)))
		if got := string(AppendTSV([]byte("pre"), []byte(raw))); got != "pre"+want {
			t.Errorf("%s: got %q, want %q", raw, got, "pre"+want)
		}
	}
}
