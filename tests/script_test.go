// Package tests runs the testscript scripts in scripts/ against the built
// binaries: those in $AGENTRY_BIN when set (make test sets it to ./bin),
// else binaries built here, once, for this run.
package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentry/agentry/lib/await"
)

// binDir is where the binaries under test are; set once by TestMain.
var binDir string

// goCache is this run's Go build cache, handed to the scripts that build
// a Go program (their HOME is their own, whose empty cache would have
// them compile the standard library anew); set once by TestMain.
var goCache string

type buildFirst struct{ m *testing.M }

func (b buildFirst) Run() int {
	dir, cleanup, err := binaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 2
	}
	defer cleanup()
	binDir = dir
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		goCache = strings.TrimSpace(string(out))
	}
	return b.m.Run()
}

func TestMain(m *testing.M) {
	testscript.Main(buildFirst{m}, map[string]func(){
		"feeder":        feeder,
		"httpserve":     httpserve,
		"numbers":       numbers,
		"fakeagent":     fakeagent,
		"fakeappserver": fakeappserver,
		"mcppost":       mcppost,
		"monsock":       monsock,
	})
}

// binaries returns the directory of the binaries to test.
func binaries() (string, func(), error) {
	if d := os.Getenv("AGENTRY_BIN"); d != "" {
		abs, err := filepath.Abs(d)
		return abs, func() {}, err
	}
	dir, err := os.MkdirTemp("", "agentry-bin-")
	if err != nil {
		return "", nil, err
	}
	// As make all: every command.
	for _, args := range [][]string{
		{"build", "-o", dir + string(os.PathSeparator), "../cmd/..."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			os.RemoveAll(dir)
			return "", nil, fmt.Errorf("building the binaries: %v", err)
		}
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

func TestScripts(t *testing.T) {
	testscript.Run(t, params("scripts"))
}

func params(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", binDir+string(os.PathListSeparator)+env.Getenv("PATH")+serverDirs())
			env.Setenv("NO_COLOR", "")
			env.Setenv("HOME", env.WorkDir)
			if goCache != "" {
				env.Setenv("GOCACHE", goCache)
			}
			if td, err := filepath.Abs(filepath.Join("..", "lib", "grant", "testdata")); err == nil {
				env.Setenv("TRANSCRIPTS", td)
			}
			// runagent --agent acp's tiny ACP agent.
			if f, err := filepath.Abs(filepath.Join("testdata", "acpagent.py")); err == nil {
				env.Setenv("FAKEACP", f)
			}
			// runagent's harnesses are the fake that replays transcripts.
			env.Setenv("RUNAGENT_CLAUDE_BIN", "fakeagent")
			env.Setenv("RUNAGENT_CODEX_BIN", "fakeagent")
			// The user's run directories are $TMPDIR/agentry-$UID.
			env.Setenv("UID", strconv.Itoa(os.Getuid()))
			home := filepath.Join(env.WorkDir, "svc")
			env.Setenv("SVC_HOME", home)
			// Whatever a script left running, even after a failure, is
			// stopped: no test leaves a process behind.
			// The disk-full script keeps its home on a tmpfs under full/.
			full := filepath.Join(env.WorkDir, "full")
			env.Defer(func() {
				for _, h := range []string{home, filepath.Join(full, "svc")} {
					cmd := exec.Command(filepath.Join(binDir, "svc"), "stop", "--all", "--grace", "1s")
					cmd.Env = append(os.Environ(), "SVC_HOME="+h)
					cmd.Run()
				}
				// The tmpfs, if a failure left it mounted.
				exec.Command("umount", "-l", full).Run()
			})
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "tmpfs" {
				return canMountTmpfs(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
			"waitfile": cmdWaitfile,
			"procs":    cmdProcs,
			"tcpopen":  cmdTCPOpen,
		},
	}
}

// exitcode N PROG ARGS... runs PROG like exec and requires exit status N.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// tcpopen FILE succeeds when something accepts TCP connections on
// 127.0.0.1 at the port FILE holds (as svc port prints it); ! tcpopen
// when nothing does.
func cmdTCPOpen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: tcpopen FILE")
	}
	port := strings.TrimSpace(ts.ReadFile(args[0]))
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 2*time.Second)
	if err == nil {
		c.Close()
	}
	switch {
	case neg && err == nil:
		ts.Fatalf("port %s accepts connections", port)
	case !neg && err != nil:
		ts.Fatalf("port %s: %v", port, err)
	}
}

// waitfile FILE REGEXP [TIMEOUT] waits until FILE exists and matches REGEXP,
// failing after TIMEOUT (default 10s).
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitfile FILE REGEXP [TIMEOUT]")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	timeout := 10 * time.Second
	if len(args) == 3 {
		timeout, err = time.ParseDuration(args[2])
		ts.Check(err)
	}
	if _, err := await.Match(ts.MkAbs(args[0]), re, timeout); err != nil {
		ts.Fatalf("%v", err)
	}
}

// feeder OUTFILE writes its stdin to its stdout one line at a time, and
// before each next line waits until OUTFILE holds the text after "=>" of
// the previous one (lines are "INPUT=>EXPECTED", EXPECTED may be empty).
// A filter that buffers its output makes it time out: this is how the
// scripts prove that output comes line by line without any sleep.
func feeder() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: feeder OUTFILE < lines")
		os.Exit(2)
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		in, want, _ := strings.Cut(sc.Text(), "=>")
		fmt.Println(in)
		if want == "" {
			continue
		}
		if _, err := await.Match(os.Args[1], regexp.MustCompile(regexp.QuoteMeta(want)), 10*time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "feeder: %q did not reach %s while its input stayed open\n", want, os.Args[1])
			os.Exit(1)
		}
	}
}

// httpserve [ADDR] serves HTTP (every path answers "ok") and prints
// "listening on http://ADDR" once it accepts; ADDR defaults to
// 127.0.0.1:0, a free port.
func httpserve() {
	addr := "127.0.0.1:0"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpserve:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("GET %s\n", r.URL.Path)
		io.WriteString(w, "ok\n")
	}))
}

// numbers N prints the numbers 1 to N, one a line, as fast as it can.
func numbers() {
	n, _ := strconv.Atoi(os.Args[1])
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	for i := 1; i <= n; i++ {
		w.WriteString(strconv.Itoa(i))
		w.WriteByte('\n')
	}
	w.Flush()
}

// canMountTmpfs reports whether this process may mount a tmpfs (root in
// most sandboxes, CI's included).
func canMountTmpfs() bool {
	dir, err := os.MkdirTemp("", "tmpfs-probe-")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	if exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).Run() != nil {
		return false
	}
	return exec.Command("umount", dir).Run() == nil
}

// fakeagent stands in for claude and codex: it records how it was started
// (argv, /proc/self/cmdline, stdin, cwd, CODEX_HOME's files) in
// $FAKE_RECORD, replays $FAKE_TRANSCRIPT.stdout/.stderr and exits with the
// rc of its .meta; with FAKE_HANG=1 it then waits to be signalled (with
// FAKE_HOLD_TERM=FILE, SIGTERM only writes FILE).
func fakeagent() {
	stdin, _ := io.ReadAll(os.Stdin)
	if rec := os.Getenv("FAKE_RECORD"); rec != "" {
		cmdline, _ := os.ReadFile("/proc/self/cmdline")
		cwd, _ := os.Getwd()
		var homeFiles []string
		if h := os.Getenv("CODEX_HOME"); h != "" {
			entries, _ := os.ReadDir(h)
			for _, e := range entries {
				homeFiles = append(homeFiles, e.Name())
			}
			if b, err := os.ReadFile(filepath.Join(h, "config.toml")); err == nil {
				os.WriteFile(rec+".config.toml", b, 0o600)
			}
		}
		// What runagent made for the run, among the user's run
		// directories.
		var tmpRun []string
		tmp, _ := os.ReadDir(filepath.Join(os.TempDir(), "agentry-"+strconv.Itoa(os.Getuid())))
		for _, e := range tmp {
			if strings.HasPrefix(e.Name(), "runagent-") {
				tmpRun = append(tmpRun, e.Name())
			}
		}
		f, _ := os.Create(rec)
		fmt.Fprintf(f, "argv: %q\ncmdline: %q\nstdin: %q\ncwd: %s\ncodex_home: %s\ncodex_home_files: %v\ntmp_runagent: %v\n",
			os.Args[1:], strings.ReplaceAll(string(cmdline), "\x00", " "), stdin, cwd, os.Getenv("CODEX_HOME"), homeFiles, tmpRun)
		// What the files the argv names hold, as the CLI would read them.
		for i, a := range os.Args[1 : len(os.Args)-1] {
			if a == "--mcp-config" || strings.HasSuffix(a, "-file") {
				if b, err := os.ReadFile(os.Args[i+2]); err == nil {
					fmt.Fprintf(f, "file %s: %q\n", a, b)
				}
			}
		}
		f.Close()
	}
	rc := 0
	if t := os.Getenv("FAKE_TRANSCRIPT"); t != "" {
		out, _ := os.ReadFile(t + ".stdout")
		errb, _ := os.ReadFile(t + ".stderr")
		os.Stdout.Write(out)
		os.Stderr.Write(errb)
		if meta, err := os.ReadFile(t + ".meta"); err == nil {
			for _, l := range strings.Split(string(meta), "\n") {
				if v, ok := strings.CutPrefix(l, "rc: "); ok {
					rc, _ = strconv.Atoi(strings.TrimSpace(v))
				}
			}
		}
	}
	if dir := os.Getenv("FAKE_DETACH"); dir != "" {
		// A daemon of its own: a sleep in a session of its own, whose
		// parent (the shell) is gone once the pid is written. The sleep
		// writes its pid once it is in its session, and the shell waits
		// for that: else a group ended at once could still take it.
		_ = exec.Command("sh", "-c", `mkfifo "$1/detach.fifo" && { setsid sh -c 'echo $$ > "$0/detach.fifo"; exec sleep 6921' "$1" </dev/null >/dev/null 2>&1 & } && read pid < "$1/detach.fifo" && echo $pid > "$1/detached.pid"`, "sh", dir).Run()
	}
	if held := os.Getenv("FAKE_HOLD_TERM"); held != "" {
		// SIGTERM does not end it: each one is written down in the
		// file, so that a test knows when it came.
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		go func() {
			for range ch {
				os.WriteFile(held, []byte("SIGTERM\n"), 0o600)
			}
		}()
	}
	if os.Getenv("FAKE_HANG") == "1" {
		fmt.Fprintln(os.Stderr, "fakeagent: waiting to be signalled")
		// Not select{}: in a build without cgo the runtime would call
		// that a deadlock and exit 2 instead of waiting for the signal.
		for {
			time.Sleep(time.Hour)
		}
	}
	os.Exit(rc)
}

// serverDirs is ":DIR" for each directory of servers a Debian package
// keeps off PATH (PostgreSQL's in /usr/lib/postgresql/N/bin, nginx's and
// mariadbd's in /usr/sbin), so scripts run them by name as a user who
// has them on PATH would.
func serverDirs() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	out := ""
	for _, d := range append(dirs, "/usr/sbin") {
		out += string(os.PathListSeparator) + d
	}
	return out
}
