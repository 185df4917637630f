package proc

import (
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// A piped child reads what it is given or written, its stdout is the
// caller's to read, and its stderr's end is kept and copied on.
func TestStartPiped(t *testing.T) {
	var copied strings.Builder
	c, err := StartPiped(exec.Command("sh", "-c", "cat; echo oops >&2"), Pipes{StdinPipe: true, Stderr: &copied})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stdout.Close()
	io.WriteString(c.Stdin, "hello\n")
	c.Stdin.Close()
	out, _ := io.ReadAll(c.Stdout)
	if exit := c.End(); !exit.OK() {
		t.Errorf("exit %v", exit)
	}
	if string(out) != "hello\n" || c.Stderr.LastLine() != "oops" || copied.String() != "oops\n" {
		t.Errorf("stdout %q, stderr tail %q, copied %q", out, c.Stderr.String(), copied.String())
	}

	m, err := StartPiped(exec.Command("sh", "-c", "cat; echo two >&2"), Pipes{Stdin: strings.NewReader("one\n"), MergeStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stdout.Close()
	out, _ = io.ReadAll(m.Stdout)
	m.End()
	if string(out) != "one\ntwo\n" || m.Stderr != nil {
		t.Errorf("merged: %q", out)
	}
}

// Output is stdout, and an exit other than 0 an *ExitError with the end
// of stderr.
func TestOutput(t *testing.T) {
	out, err := Output(exec.Command("sh", "-c", "echo v1.2"), Options{})
	if err != nil || string(out) != "v1.2\n" {
		t.Errorf("%q, %v", out, err)
	}
	_, err = Output(exec.Command("sh", "-c", "echo broken >&2; exit 3"), Options{})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Exit.Status() != 3 || strings.TrimSpace(ee.Stderr) != "broken" {
		t.Errorf("%v", err)
	}
	if _, err := Output(exec.Command("/nonexistent/program"), Options{}); err == nil {
		t.Error("a program that does not exist ran")
	}
}
