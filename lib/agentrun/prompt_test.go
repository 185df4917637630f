package agentrun

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The agent's stdin holds the whole prompt and then ends, whatever its
// size: in a pipe filled before the agent starts, or copied in.
func TestPromptInput(t *testing.T) {
	for _, n := range []int{1, 100, pipeHolds, pipeHolds + 1, 3 << 20} {
		prompt := strings.Repeat("p", n-1) + "\n"
		r, done := promptInput(prompt)
		if f, ok := r.(*os.File); ok && n <= pipeHolds {
			// As the agent would read it: blocking, to its end.
			got, err := io.ReadAll(f)
			if err != nil || string(got) != prompt {
				t.Errorf("%d bytes: read %d, %v", n, len(got), err)
			}
		} else if n <= pipeHolds {
			t.Errorf("%d bytes: not in a pipe", n)
		} else {
			got, err := io.ReadAll(r)
			if err != nil || string(got) != prompt {
				t.Errorf("%d bytes: read %d, %v", n, len(got), err)
			}
		}
		done()
	}
}

// A grant's file is 0600 whatever the umask, and a later attempt's write
// of it replaces what the first wrote.
func TestWriteRunFile(t *testing.T) {
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "mcp.json")
	for _, content := range []string{`{"mcpServers":{"tools":{}}}`, `{}`} {
		if err := writeRunFile(path, content); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, %v", st.Mode(), err)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("holds %q, want %q", b, content)
		}
	}
}
