package svc

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func numbered(prefix string, n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// goPanic is a Go program's panic with a stack of n frames.
func goPanic(n int) []string {
	out := []string{"panic: runtime error: invalid memory address or nil pointer dereference", "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a5b2c]", "", "goroutine 1 [running]:"}
	for i := range n {
		out = append(out, fmt.Sprintf("main.f%d(...)", i), fmt.Sprintf("\t/src/app/main.go:%d +0x1d", i+10))
	}
	return append(out, "main.main()", "\t/src/app/main.go:5 +0x18")
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
		{"a go panic forty frames deep", slices.Concat(numbered("log ", 5), goPanic(40), []string{"exit status 2"}), "panic: runtime error: invalid memory address or nil pointer dereference"},
		{"a java exception", slices.Concat([]string{"started", `Exception in thread "main" java.lang.RuntimeException: boom`}, numbered("\tat app.Main.f", 30), []string{"Caused by: java.io.IOException: x"}, numbered("\tat app.Main.g", 5), []string{"\t... 30 more"}), `Exception in thread "main" java.lang.RuntimeException: boom`},
		{"a python traceback forty frames deep", slices.Concat([]string{"Traceback (most recent call last):"}, numbered("  File ", 80), []string{"RecursionError: deep"}), "  File 72"},
		{"a stack through errors packages", slices.Concat(numbered("log ", 3), []string{"panic: wrapped", "", "goroutine 1 [running]:", "errors.New(...)", "\t/usr/local/go/src/errors/errors.go:62", "github.com/pkg/errors.Wrap(0x0, 0x0)", "\t/go/pkg/mod/github.com/pkg/errors@v0.9.1/errors.go:184 +0x3f", "main.handleError(...)"}, numbered("\t/src/app/panic_handler.go:", 4), goPanic(30)[4:]), "panic: wrapped"},
		{"a go panic a hundred frames deep", slices.Concat(numbered("log ", 5), goPanic(100)), "panic: runtime error: invalid memory address or nil pointer dereference"},
		{"a stack overflow, every goroutine", slices.Concat([]string{"listening", "runtime: goroutine stack exceeds 1000000000-byte limit", "runtime: sp=0x1059dabe0388 stack=[0x1059dabe0000, 0x1059fabe0000]", "fatal error: stack overflow", "", "runtime stack:", "runtime.throw({0x491051?, 0x200000001?})", "\t/usr/local/go/src/runtime/panic.go:1229 +0x48"}, goPanic(100)[3:], []string{"...44739053 frames elided...", "", "goroutine 5 gp=0x1 m=nil [finalizer wait]:", "runtime.gopark(0x4570f5?)", "\t/usr/local/go/src/runtime/proc.go:462 +0xce", "created by runtime.createfing in goroutine 1", "\t/usr/local/go/src/runtime/mfinal.go:172 +0x3d"}), "runtime: goroutine stack exceeds 1000000000-byte limit"},
		{"node's error with a cause", slices.Concat([]string{"listening", "Error: outer"}, numbered("    at f ", 60), []string{"    at g (/app/a.js:1:1) {", "  [cause]: Error: inner", "      at h (/app/a.js:2:2)", "}", "", "Node.js v20.11.1"}), "Error: outer"},
		{"a long run of plain lines", slices.Concat([]string{"Error: an old one"}, numbered("line ", 40)), "line 31"},
		{"indented lines under no error", slices.Concat([]string{"config:"}, numbered("  key", 40)), "  key31"},
		{"chained", slices.Concat([]string{"Traceback (most recent call last):", "  File a", "KeyError: 'a'", "", "During handling of the above exception, another exception occurred:", "", "Traceback (most recent call last):"}, numbered("  File ", 10), []string{"RuntimeError: b"}), "Traceback (most recent call last):"},
	} {
		got := CrashTail(c.lines)
		if len(got) == 0 || got[0] != c.from {
			t.Errorf("%s: shown from %q, want %q", c.name, got, c.from)
		}
		if len(got) > TailReach {
			t.Errorf("%s: %d lines shown", c.name, len(got))
		}
		if len(got) == TailHead+1+TailEnd && strings.HasPrefix(got[TailHead], "… ") {
			// a long crash: its head, a line that says how much is left
			// out, and the last lines
			from := slices.Index(c.lines, c.from)
			left := len(c.lines) - from - TailHead - TailEnd
			if !slices.Equal(got[:TailHead], c.lines[from:from+TailHead]) || got[TailHead] != fmt.Sprintf("… %d lines left out …", left) ||
				!slices.Equal(got[TailHead+1:], c.lines[len(c.lines)-TailEnd:]) {
				t.Errorf("%s: not the crash's head and end: %q", c.name, got)
			}
			continue
		}
		if !slices.Equal(got, c.lines[len(c.lines)-len(got):]) {
			t.Errorf("%s: not the last lines: %q", c.name, got)
		}
	}
}

// A line cut at 4 KiB leaves out a character the cut would split.
func TestShortLineKeepsCharactersWhole(t *testing.T) {
	line := strings.Repeat("a", 4095) + "é" + strings.Repeat("b", 10)
	got := ShortLine(line)
	if want := strings.Repeat("a", 4095) + " … [12 more bytes]"; got != want {
		t.Errorf("ShortLine = …%q, want …%q", got[4090:], want[4090:])
	}
	if got := ShortLine(strings.Repeat("é", 3000)); !strings.HasSuffix(got, "é … [1904 more bytes]") {
		t.Errorf("ShortLine = …%q", got[len(got)-30:])
	}
}
