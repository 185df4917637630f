package svc

import (
	"fmt"
	"slices"
	"testing"
)

func numbered(prefix string, n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func TestCrashTail(t *testing.T) {
	frames := numbered("    at f ", 14)
	for _, c := range []struct {
		name  string
		lines []string
		from  string // the first line shown
	}{
		{"short", numbered("line ", 4), "line 1"},
		{"no error", numbered("line ", 30), "line 21"},
		{"node", slices.Concat(numbered("log ", 5), []string{"TypeError: x is undefined"}, frames), "TypeError: x is undefined"},
		{"go", slices.Concat([]string{"panic: boom", "", "goroutine 1 [running]:"}, numbered("main.f ", 12)), "panic: boom"},
		{"python", slices.Concat([]string{"Traceback (most recent call last):"}, numbered("  File ", 11), []string{"KeyError: 'a'"}), "Traceback (most recent call last):"},
		{"the first of two", slices.Concat([]string{"[vite] error when starting dev server:", "Error: listen EADDRINUSE"}, frames), "[vite] error when starting dev server:"},
		{"within the tail", slices.Concat(numbered("log ", 20), []string{"Error: late"}, numbered("at ", 3)), "log 15"},
		{"a word with error inside it", slices.Concat([]string{"no errors here"}, numbered("line ", 12)), "line 3"},
		{"a log line further up", slices.Concat([]string{"Error handling middleware registered", "warning: x"}, []string{"TypeError: boom"}, frames), "TypeError: boom"},
		{"chained", slices.Concat([]string{"Traceback (most recent call last):", "  File a", "KeyError: 'a'", "", "During handling of the above exception, another exception occurred:", "", "Traceback (most recent call last):"}, numbered("  File ", 10), []string{"RuntimeError: b"}), "Traceback (most recent call last):"},
	} {
		got := CrashTail(c.lines)
		if len(got) == 0 || got[0] != c.from {
			t.Errorf("%s: shown from %q, want %q", c.name, got, c.from)
		}
		if !slices.Equal(got, c.lines[len(c.lines)-len(got):]) {
			t.Errorf("%s: not the last lines: %q", c.name, got)
		}
	}
}
