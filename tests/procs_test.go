package tests

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
)

// liveProcs lists the live (not zombie) processes whose arguments, joined
// by spaces, match re. It reads /proc itself, so a machine without procps
// cannot turn "no such process" into a pass.
func liveProcs(re *regexp.Regexp) []proc.Info {
	var out []proc.Info
	for _, p := range proc.All() {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
		if err != nil || p.State == 'Z' || p.PID == os.Getpid() {
			continue
		}
		if re.Match(bytes.TrimSpace(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))) {
			out = append(out, p)
		}
	}
	return out
}

// procs [-c|-ppid|-kill|-wait|-gone] REGEXP prints the pid of each live
// process whose arguments match REGEXP, one a line: with -c their count,
// with -ppid their parents' pids, with -kill it sends each SIGKILL; with
// -wait it waits (10 s at most) until one is there, and fails if none
// came; with -gone, until none is, and fails if one is left.
func cmdProcs(ts *testscript.TestScript, neg bool, args []string) {
	mode := ""
	if len(args) == 2 {
		mode, args = args[0], args[1:]
	}
	if neg || len(args) != 1 || (mode != "" && mode != "-c" && mode != "-ppid" && mode != "-kill" && mode != "-wait" && mode != "-gone") {
		ts.Fatalf("usage: procs [-c|-ppid|-kill|-wait|-gone] REGEXP")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	if mode == "-wait" {
		if !await.Until(10*time.Second, func() bool { return len(liveProcs(re)) > 0 }) {
			ts.Fatalf("no process matching %q within 10s", args[0])
		}
		return
	}
	if mode == "-gone" {
		if !await.Until(10*time.Second, func() bool { return len(liveProcs(re)) == 0 }) {
			ts.Fatalf("a process matching %q is still there after 10s", args[0])
		}
		return
	}
	ps := liveProcs(re)
	if mode == "-c" {
		fmt.Fprintln(ts.Stdout(), len(ps))
		return
	}
	for _, p := range ps {
		switch mode {
		case "-ppid":
			fmt.Fprintln(ts.Stdout(), p.PPID)
		case "-kill":
			syscall.Kill(p.PID, syscall.SIGKILL)
		default:
			fmt.Fprintln(ts.Stdout(), p.PID)
		}
	}
}
