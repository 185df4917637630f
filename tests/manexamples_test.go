package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
)

// TestManExamples runs the EXAMPLES of every man page, literally, with the
// binaries under test first on PATH, in a scratch directory and HOME of the
// page's own, and checks that each does what the page says. The convention
// (DESIGN.md, Tests):
//
// Each display of EXAMPLES (.Bd -literal … .Ed, or .Dl) is one example.
// If lines of it begin with "$ ", it is a session: each such line (and
// the lines it continues with a trailing \) is a command, run by sh in a
// shell of its own, and the lines after it, up to the next "$ ", are what
// it prints, stdout and stderr as a terminal shows them; it must exit 0.
// A line break in the page, with the indentation after it, matches any
// white space or none (the page folds long lines). Otherwise the display
// is a script whose output the page does not show: sh -e runs it whole,
// and it must exit 0 and print nothing on stderr; a line "..." in it is
// the reader's own work, and is not run.
//
// Comment lines just before a display, which do not render, mark it:
//
//	.\" example: skip REASON     not run: it needs what a test has not
//	                              (a real claude, the network)
//	.\" example: file NAME       not a command: the file NAME, written for
//	                              the examples after it
//	.\" example: then COMMAND    after a file, a command that uses it; it
//	                              must exit 0 with nothing on stderr
//	.\" example: prints REGEXP   what a script (or a then) prints on stdout
//	                              matches REGEXP: what the page says it does
//	                              where it does not show the output
//	.\" example: stderr REGEXP   what a script prints on stderr, where it is
//	                              not nothing, matches REGEXP
//	.\" example: vary REGEXP     in the output the page shows, text that
//	                              matches REGEXP (a pid, a port, a time)
//	                              stands for any text that matches it
//	.\" example: interrupt PREFIX a command that begins so runs until it has
//	                              printed what the page shows, then gets
//	                              SIGINT, as from ^C
//	.\" example: protocol COMMAND lines "-> " are what COMMAND reads,
//	                              lines "<- " what it prints; notices
//	                              (log, metric) of a type the page does not
//	                              show are left out of the comparison
//	.\" example: cd DIR          this example and those after it run in DIR,
//	                              a directory of the page's scratch one
//
// Before a page's first example, tests/testdata/man-examples/PAGE.sh, if
// there is one, makes the files the examples read (sh -e, in the scratch
// directory; $HOME/.local/bin is on PATH, after ./bin, for stand-ins of
// programs a test cannot run for real). Afterwards svc stop --all stops what
// the examples started, and the test fails on any process left with the
// page's HOME.
func TestManExamples(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("..", "man", "*.[1-9]"))
	if len(pages) == 0 {
		t.Fatal("no man pages in ../man")
	}
	data, err := filepath.Abs(filepath.Join("testdata", "man-examples"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		examples, err := parseExamples(string(b))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(examples) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			runPageExamples(t, name, examples, data)
		})
	}
}

// example is one display of a page's EXAMPLES and its marks.
type example struct {
	line      int    // of the display in the page
	text      string // as it renders: escapes undone
	skip      string
	file      string
	then      []string
	prints    []*regexp.Regexp
	stderr    *regexp.Regexp
	vary      []*regexp.Regexp
	interrupt []string
	protocol  string
	cd        string
}

// parseExamples reads the displays of a page's EXAMPLES section.
func parseExamples(page string) ([]example, error) {
	var out []example
	var cur example
	in, inBlock := false, false
	var body []string
	for i, l := range strings.Split(page, "\n") {
		n := i + 1
		if strings.HasPrefix(l, ".Sh ") {
			in = l == ".Sh EXAMPLES"
			continue
		}
		if !in {
			continue
		}
		if inBlock {
			if l == ".Ed" {
				cur.text = strings.Join(body, "\n") + "\n"
				out = append(out, cur)
				cur, inBlock, body = example{}, false, nil
			} else if !strings.HasPrefix(l, `.\"`) {
				body = append(body, unescapeRoff(l))
			}
			continue
		}
		if mark, ok := strings.CutPrefix(l, `.\" example: `); ok {
			verb, arg, _ := strings.Cut(strings.TrimSpace(mark), " ")
			switch verb {
			case "skip":
				cur.skip = arg
			case "file":
				cur.file = arg
			case "then":
				cur.then = append(cur.then, arg)
			case "vary", "prints", "stderr":
				re, err := regexp.Compile(arg)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", n, err)
				}
				if verb == "vary" {
					cur.vary = append(cur.vary, re)
				} else if verb == "stderr" {
					cur.stderr = re
				} else {
					cur.prints = append(cur.prints, re)
				}
			case "interrupt":
				cur.interrupt = append(cur.interrupt, arg)
			case "protocol":
				cur.protocol = arg
			case "cd":
				cur.cd = arg
			default:
				return nil, fmt.Errorf("line %d: unknown example mark %q", n, verb)
			}
			if cur.line == 0 {
				cur.line = n
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, ".Bd ") && strings.Contains(l, "-literal"):
			inBlock = true
			if cur.line == 0 {
				cur.line = n
			}
		case strings.HasPrefix(l, ".Dl "):
			if cur.line == 0 {
				cur.line = n
			}
			cur.text = unescapeRoff(strings.TrimPrefix(l, ".Dl ")) + "\n"
			out = append(out, cur)
			cur = example{}
		}
	}
	if cur.line != 0 {
		return nil, fmt.Errorf("line %d: an example mark with no display after it", cur.line)
	}
	return out, nil
}

// unescapeRoff undoes the escapes a page's examples use.
func unescapeRoff(s string) string {
	return strings.NewReplacer(`\e`, `\`, `\-`, `-`, `\&`, ``, `\(dq`, `"`, `\(aq`, `'`, `\(ti`, `~`, `\(ha`, `^`, `\(em`, `—`).Replace(s)
}

// pageEnv is what a page's examples run with.
type pageEnv struct {
	t       *testing.T
	page    string
	scratch string
	dir     string
	env     []string
}

func runPageExamples(t *testing.T, page string, examples []example, data string) {
	scratch := t.TempDir()
	home := filepath.Join(scratch, "home")
	local := filepath.Join(home, ".local", "bin")
	work := filepath.Join(scratch, "work")
	for _, d := range []string{local, work, filepath.Join(scratch, "tmp"), filepath.Join(scratch, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "PATH" || k == "TMPDIR" || k == "SVC_HOME" || strings.HasPrefix(k, "XDG_") ||
			strings.HasPrefix(k, "RUNAGENT_") || strings.HasPrefix(k, "AGENTRY_") || k == "NO_COLOR" || strings.HasPrefix(k, "LC_") || k == "LANG" ||
			strings.HasPrefix(k, "MAKE") || k == "MFLAGS" { // make test's own make
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"PATH="+binDir+string(os.PathListSeparator)+local+string(os.PathListSeparator)+os.Getenv("PATH")+serverDirs(),
		"HOME="+home, "TMPDIR="+filepath.Join(scratch, "tmp"), "XDG_RUNTIME_DIR="+filepath.Join(scratch, "run"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "LANG=C.UTF-8", "EXAMPLES_DATA="+data)
	pe := &pageEnv{t: t, page: page, scratch: scratch, dir: work, env: env}
	t.Cleanup(pe.stopAll)

	setup := filepath.Join(data, page+".sh")
	if _, err := os.Stat(setup); err == nil {
		if out, errb, code := pe.sh(nil, "-e", setup); code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", setup, code, out, errb)
		}
	}
	for _, ex := range examples {
		if ex.cd != "" {
			pe.dir = filepath.Join(work, ex.cd)
			if err := os.MkdirAll(pe.dir, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		where := fmt.Sprintf("%s:%d", page, ex.line)
		switch {
		case ex.skip != "":
			t.Logf("%s: not run: %s", where, ex.skip)
		case ex.file != "":
			if err := os.WriteFile(filepath.Join(pe.dir, ex.file), []byte(ex.text), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, c := range ex.then {
				pe.script(where+" (then "+c+")", c+"\n", ex)
			}
		case ex.protocol != "":
			pe.protocol(where, ex)
		case isSession(ex.text):
			pe.session(where, ex)
		default:
			pe.script(where, ex.text, ex)
		}
	}
}

func isSession(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "$ ") {
			return true
		}
	}
	return false
}

// exampleTimeout bounds each command of an example.
const exampleTimeout = 30 * time.Second

// sh runs sh ARGS in the page's directory with stdin, and returns what it
// printed (each stream to a file: a daemon that keeps them open cannot
// hold up the wait) and its exit code.
func (pe *pageEnv) sh(stdin []byte, args ...string) (stdout, stderr string, code int) {
	out, errb, code, _ := pe.start(stdin, false, args...).wait()
	return out, errb, code
}

// running is a command started by start.
type running struct {
	pid     int
	outPath string // where its stdout goes
	wait    func() (stdout, stderr string, code int, how string)
}

// start starts sh ARGS; with both, stdout and stderr go to one file, as a
// terminal shows them.
func (pe *pageEnv) start(stdin []byte, both bool, args ...string) running {
	t := pe.t
	ctx, cancel := context.WithTimeout(context.Background(), exampleTimeout)
	cmd := exec.CommandContext(ctx, "sh", args...)
	cmd.Dir, cmd.Env, cmd.Stdin = pe.dir, pe.env, bytes.NewReader(stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	outF, err := os.CreateTemp(pe.scratch, "out")
	if err != nil {
		t.Fatal(err)
	}
	errF := outF
	if !both {
		if errF, err = os.CreateTemp(pe.scratch, "err"); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Stdout, cmd.Stderr = outF, errF
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return running{pid: cmd.Process.Pid, outPath: outF.Name(), wait: func() (string, string, int, string) {
		defer cancel()
		err := cmd.Wait()
		outF.Close()
		errF.Close()
		out, _ := os.ReadFile(outF.Name())
		errb := []byte(nil)
		if !both {
			errb, _ = os.ReadFile(errF.Name())
		}
		code, how := 0, ""
		var ee *exec.ExitError
		switch {
		case ctx.Err() != nil:
			code, how = -1, fmt.Sprintf("still running after %v: killed", exampleTimeout)
		case errors.As(err, &ee):
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				how = "killed by " + ws.Signal().String()
			}
		case err != nil:
			t.Fatal(err)
		}
		return string(out), string(errb), code, how
	}}
}

// script runs a display whose output the page does not show.
func (pe *pageEnv) script(where, text string, ex example) {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t == "..." || t == "…" {
			continue
		}
		lines = append(lines, l)
	}
	out, errb, code := pe.sh(nil, "-e", "-c", strings.Join(lines, "\n"))
	wantErr := "nothing"
	if ex.stderr != nil {
		wantErr = ex.stderr.String()
	}
	if code != 0 || (ex.stderr == nil && errb != "") || (ex.stderr != nil && !ex.stderr.MatchString(errb)) {
		pe.t.Errorf("%s: exit %d, stderr %q (stdout %q), want exit 0 and %s on stderr; the example:\n%s", where, code, errb, out, wantErr, text)
	}
	for _, re := range ex.prints {
		if !re.MatchString(out) {
			pe.t.Errorf("%s: what it prints does not match %s (the page's claim); printed:\n%s", where, re, out)
		}
	}
}

// session runs the commands of a "$ " display one by one and compares what
// each prints with what the page shows after it.
func (pe *pageEnv) session(where string, ex example) {
	type step struct{ cmd, want string }
	var steps []step
	lines := strings.Split(strings.TrimSuffix(ex.text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "$ ") {
			if len(steps) == 0 {
				pe.t.Fatalf("%s: a session must begin with a \"$ \" line, not %q", where, l)
			}
			steps[len(steps)-1].want += l + "\n"
			continue
		}
		cmd := strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd += "\n" + lines[i]
		}
		steps = append(steps, step{cmd: cmd})
	}
	for _, s := range steps {
		if slices.ContainsFunc(ex.interrupt, func(p string) bool { return strings.HasPrefix(s.cmd, p) }) {
			pe.interrupted(where, s.cmd, s.want, ex.vary)
			continue
		}
		out, _, code, how := pe.start(nil, true, "-c", s.cmd).wait()
		if code != 0 || !outputMatches(s.want, out, ex.vary) {
			pe.t.Errorf("%s: $ %s\nexit %d %s; printed:\n%s\nthe page shows:\n%s", where, s.cmd, code, how, out, s.want)
		}
	}
}

// interrupted runs a command that goes on until interrupted: once it has
// printed what the page shows (or anything, where the page shows nothing),
// it gets SIGINT, and must end.
func (pe *pageEnv) interrupted(where, cmd, want string, vary []*regexp.Regexp) {
	pe.t.Helper()
	r := pe.start(nil, true, "-c", "exec "+cmd)
	printed := await.Until(exampleTimeout/2, func() bool {
		b, _ := os.ReadFile(r.outPath)
		if want == "" {
			return len(b) > 0
		}
		return outputMatches(want, string(b), vary)
	})
	syscall.Kill(r.pid, syscall.SIGINT) // sh exec'd the command: the pid is its
	out, _, code, how := r.wait()
	if !printed || (code != 0 && code != 130 && how != "killed by interrupt") {
		pe.t.Errorf("%s: $ %s (interrupted once it printed): exit %d %s; printed:\n%s\nthe page shows:\n%s", where, cmd, code, how, out, want)
	}
}

// protocol sends the "-> " lines of a display to a command and compares
// what it prints with the "<- " lines.
func (pe *pageEnv) protocol(where string, ex example) {
	var in, want strings.Builder
	var to *strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(ex.text, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "-> "):
			to = &in
			if in.Len() > 0 {
				in.WriteString("\n")
			}
			in.WriteString(strings.TrimPrefix(l, "-> "))
		case strings.HasPrefix(l, "<- "):
			to = &want
			want.WriteString(strings.TrimPrefix(l, "<- ") + "\n")
		case to == &in:
			in.WriteString(strings.TrimSpace(l)) // a folded line: no break on the wire
		case to == &want:
			want.WriteString(l + "\n")
		default:
			pe.t.Fatalf("%s: a protocol example must begin with \"-> \" or \"<- \", not %q", where, l)
		}
	}
	in.WriteString("\n")
	out, errb, code := pe.sh([]byte(in.String()), "-c", ex.protocol)
	// Notices (log, metric) come when they come: those of a type the page
	// leaves out are not compared.
	var kept []string
	for _, l := range strings.SplitAfter(out, "\n") {
		notice := strings.HasPrefix(l, `{"type":"log",`) || strings.HasPrefix(l, `{"type":"metric",`)
		if !notice || strings.Contains(want.String(), l[:strings.IndexByte(l, ',')+1]) {
			kept = append(kept, l)
		}
	}
	out = strings.Join(kept, "")
	if code != 0 || errb != "" || !outputMatches(want.String(), out, ex.vary) {
		pe.t.Errorf("%s: %s: exit %d, stderr %q; printed:\n%s\nthe page shows:\n%s", where, ex.protocol, code, errb, out, want.String())
	}
}

var foldRE = regexp.MustCompile(`\n[ \t]*`)

// outputMatches: does got print what the page shows (want)? A line break
// in want, and the indentation after it, matches any white space or none;
// text in want that a vary pattern matches stands for any text it matches.
func outputMatches(want, got string, vary []*regexp.Regexp) bool {
	return outputRE(want, vary).MatchString(got)
}

func outputRE(want string, vary []*regexp.Regexp) *regexp.Regexp {
	want = strings.TrimSpace(want)
	type span struct {
		from, to int
		re       string
	}
	var spans []span
	for _, re := range vary {
		for _, m := range re.FindAllStringIndex(want, -1) {
			spans = append(spans, span{m[0], m[1], re.String()})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	literal := func(s string) string {
		parts := foldRE.Split(s, -1)
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		return strings.Join(parts, `\s*`)
	}
	var b strings.Builder
	b.WriteString(`^\s*`)
	at := 0
	for _, s := range spans {
		if s.from < at {
			continue // overlaps one before
		}
		b.WriteString(literal(want[at:s.from]))
		b.WriteString("(?:" + s.re + ")")
		at = s.to
	}
	b.WriteString(literal(want[at:]))
	b.WriteString(`\s*$`)
	return regexp.MustCompile(b.String())
}

// envHas: does process pid's environment hold kv?
func envHas(pid int, kv string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	return slices.Contains(strings.Split(string(b), "\x00"), kv)
}

// stopAll stops what the page's examples started, then fails on (and
// kills) any process still running with the page's HOME.
func (pe *pageEnv) stopAll() {
	cmd := exec.Command(filepath.Join(binDir, "svc"), "stop", "--all", "--grace", "2s")
	cmd.Env, cmd.Dir = pe.env, pe.scratch
	cmd.Run()
	var left []string
	await.Until(5*time.Second, func() bool {
		left = leftovers(filepath.Join(pe.scratch, "home"))
		return len(left) == 0
	})
	if len(left) > 0 {
		pe.t.Errorf("%s: the examples left running after svc stop --all:\n%s", pe.page, strings.Join(left, "\n"))
		for _, l := range left {
			pid, _ := strconv.Atoi(strings.Fields(l)[0])
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// leftovers lists the live processes whose HOME is home: "PID ARGS".
func leftovers(home string) []string {
	var left []string
	for _, p := range proc.All() {
		if p.State != 'Z' && envHas(p.PID, "HOME="+home) {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
			left = append(left, fmt.Sprintf("%d %s", p.PID, bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '})))
		}
	}
	return left
}

// The parts of TestManExamples find what they claim to: the marks, the
// folds and varying text of shown output, a process left behind.
func TestManExamplesHarness(t *testing.T) {
	page := `.Sh EXAMPLES
.\" example: cd shop
.\" example: vary [0-9]+
.\" example: interrupt svc tail -f
.Bd -literal -offset indent
$ svc up \e
    --project .
shop/db is ready (pid 12)
.Ed
.\" example: skip needs a real claude
.Dl runagent \(dqhi\(dq
.\" example: file svc.toml
.\" example: then svc up
.\" example: prints ^ok$
.Bd -literal
[services.db]
.Ed
.Sh SEE ALSO
`
	ex, err := parseExamples(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 3 || ex[0].cd != "shop" || len(ex[0].vary) != 1 || ex[0].interrupt[0] != "svc tail -f" ||
		ex[0].text != "$ svc up \\\n    --project .\nshop/db is ready (pid 12)\n" || !isSession(ex[0].text) ||
		ex[1].skip != "needs a real claude" || ex[1].text != "runagent \"hi\"\n" ||
		ex[2].file != "svc.toml" || ex[2].then[0] != "svc up" || len(ex[2].prints) != 1 || isSession(ex[2].text) {
		t.Errorf("parseExamples: %+v", ex)
	}
	if _, err := parseExamples(".Sh EXAMPLES\n.\\\" example: bogus x\n.Dl x\n"); err == nil {
		t.Error("an unknown mark is not an error")
	}
	if _, err := parseExamples(".Sh EXAMPLES\n.\\\" example: skip x\n.Sh SEE ALSO\n"); err == nil {
		t.Error("a mark with no display after it is not an error")
	}

	num := []*regexp.Regexp{regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)}
	for _, tc := range []struct {
		want, got string
		vary      []*regexp.Regexp
		match     bool
	}{
		{"dev is ready at http://localhost:5173/ (pid 4242; from its output\nand its socket after 0.41s)\n",
			"dev is ready at http://localhost:36001/ (pid 7; from its output and its socket after 1.2s)\n", num, true},
		{"dev is ready (pid 4242)\n", "dev is ready (pid 7)\n", nil, false},
		{"dev is ready (pid 4242)\n", "dev is starting (pid 7)\n", num, false},
		{"{\"a\":1,\n    \"b\":2}\n{\"c\":3}\n", "{\"a\":1,\"b\":2}\n{\"c\":3}\n", nil, true},
		{"one\ntwo\n", "one\ntwo\nthree\n", nil, false},
		{"", "", nil, true},
		{"", "something\n", nil, false},
	} {
		if got := outputMatches(tc.want, tc.got, tc.vary); got != tc.match {
			t.Errorf("outputMatches(%q, %q) = %v, want %v (%s)", tc.want, tc.got, got, tc.match, outputRE(tc.want, tc.vary))
		}
	}

	home := t.TempDir()
	cmd := exec.Command("sleep", "600")
	cmd.Env = []string{"HOME=" + home}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	left := leftovers(home)
	cmd.Process.Kill()
	cmd.Wait()
	if len(left) != 1 || !strings.HasPrefix(left[0], strconv.Itoa(cmd.Process.Pid)+" sleep 600") {
		t.Errorf("leftovers = %q, want the sleep %d", left, cmd.Process.Pid)
	}
	if left := leftovers(home); len(left) != 0 {
		t.Errorf("leftovers after the kill = %q", left)
	}
}
