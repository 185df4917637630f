package svc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestUnescapeKeys(t *testing.T) {
	for in, want := range map[string]string{
		`print(6*7)\n`: "print(6*7)\n",
		`\x03`:         "\x03",
		`a\\n`:         `a\n`,
		`\e[A\r\t\0`:   "\x1b[A\r\t\x00",
		"as is\n":      "as is\n",
	} {
		got, err := UnescapeKeys(in)
		if err != nil || got != want {
			t.Errorf("UnescapeKeys(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`\q`, `a\`, `\x3`, `\xzz`} {
		var ke *KeysError
		if _, err := UnescapeKeys(in); !errors.As(err, &ke) {
			t.Errorf("UnescapeKeys(%q): %v, want a *KeysError", in, err)
		}
	}
}

func TestParseDetachKeys(t *testing.T) {
	for in, want := range map[string]string{"ctrl-]": "\x1d", "ctrl-p,ctrl-q": "\x10\x11", "CTRL-A,x": "\x01x"} {
		got, err := ParseDetachKeys(in)
		if err != nil || string(got) != want {
			t.Errorf("ParseDetachKeys(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ctrl-1", "ab", "ctrl-p,"} {
		if _, err := ParseDetachKeys(in); err == nil {
			t.Errorf("ParseDetachKeys(%q) took it", in)
		}
	}
}

// The detach sequence is not forwarded; a start of it that turns out
// not to be it is, in order, even across reads.
func TestForwardKeys(t *testing.T) {
	for _, c := range []struct {
		in, sent string
		end      AttachEnd
	}{
		{"abc\x10\x11zzz", "abc", Detached},
		{"a\x10b\x10\x10\x11", "a\x10b\x10", Detached},
		{"plain", "plain", InputEnded},
		{"a\x10", "a", InputEnded}, // a start of the sequence, then the end of input: held back
	} {
		var w bytes.Buffer
		end := forwardKeys(&oneByte{strings.NewReader(c.in)}, &w, []byte("\x10\x11"))
		if w.String() != c.sent || end != c.end {
			t.Errorf("%q: sent %q, end %v; want %q, %v", c.in, w.String(), end, c.sent, c.end)
		}
	}
}

// oneByte reads one byte at a time, as keys come.
type oneByte struct{ r *strings.Reader }

func (o *oneByte) Read(b []byte) (int, error) { return o.r.Read(b[:1]) }
