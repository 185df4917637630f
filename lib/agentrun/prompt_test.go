package agentrun

import (
	"io"
	"os"
	"strings"
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
