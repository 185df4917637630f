package codex

import (
	"reflect"
	"testing"
)

func TestHunks(t *testing.T) {
	for _, c := range []struct {
		diff string
		want []hunk
	}{
		{"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", []hunk{{"a\n", "b\n"}}},
		{"@@ -1,2 +1,2 @@\n keep\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n", []hunk{{"keep\nold", "keep\nnew"}}},
		{"@@ -3,0 +4,1 @@\n+added\n", []hunk{{"", "added\n"}}},
		{"not a diff", nil},
	} {
		if got := hunks(c.diff); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.diff, got, c.want)
		}
	}
}
