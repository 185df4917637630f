package ready

import (
	"os"
	"testing"
)

// One look at the tree's listeners while nothing changes: what a starting
// service's monitor pays every few milliseconds.
func BenchmarkListensPoll(b *testing.B) {
	t := NewListens(os.Getpid(), nil)
	defer t.Close()
	t.Poll()
	b.ReportAllocs()
	for b.Loop() {
		t.Poll()
	}
}
