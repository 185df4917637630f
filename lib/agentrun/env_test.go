package agentrun

import (
	"fmt"
	"strings"
	"testing"
)

// uEscaped writes each character as fmt's \u%04x would.
func TestUEscapedSame(t *testing.T) {
	for _, v := range []string{"", "abc", "Zürich/ü€", "\x00\x1f\u2028", "a\U0001F600"} {
		var b strings.Builder
		want := ""
		ok := true
		for _, r := range v {
			if r > 0xFFFF {
				ok = false
				break
			}
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		if ok {
			want = b.String()
		}
		if got := uEscaped(v); got != want {
			t.Errorf("%q: %q want %q", v, got, want)
		}
	}
}
