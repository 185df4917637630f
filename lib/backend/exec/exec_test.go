package exec

import "testing"

func TestCompleteUTF8(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"é", 2}, {"a\xc3", 1}, {"a\xe6\x97", 1}, {"日本", 6}, {"\xf0\x9f\x9a", 0}, {"\xf0\x9f\x9a\x80", 4}, {"\xff", 1},
	}
	for _, c := range cases {
		if got := completeUTF8([]byte(c.in)); got != c.want {
			t.Errorf("completeUTF8(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
