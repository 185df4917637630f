package peers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/tests/acpclient"
)

// headlessLeg is one headless ACP client run against the agent: its
// argv (the prompt given by the leg itself) and the figures it gave.
type headlessLeg struct {
	name string
	argv func(work, prompt string) []string
	// answers, peaks and lefts are the runs' times to the answer, the
	// peak RSS of every process the run started (kB) and the processes
	// of the run still alive 3 s after the client exited.
	answers []time.Duration
	peaks   []int
	lefts   []int
	fails   int
}

// marked lists the processes whose environment holds mark: every
// process a run started, detached or not (acpx's queue owner leaves the
// client's tree by starting a session of its own).
func marked(mark string) []int {
	return procsWhere("environ", func(f []string) bool {
		for _, kv := range f {
			if kv == mark {
				return true
			}
		}
		return false
	})
}

// headlessRun runs one client to its exit, sampling the memory of its
// marked processes every 20 ms, and counts what of them is left 3 s
// after it exited; whatever is left is then killed.
func headlessRun(env []string, argv []string, work, want string) (time.Duration, int, int, error) {
	mark := "AGENTRY_BENCH_RUN=" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = append(append([]string(nil), env...), mark), work
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	peak := 0
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(120 * time.Second)
	var took time.Duration
wait:
	for {
		select {
		case err := <-done:
			took = time.Since(began)
			if err != nil || !strings.Contains(out.String(), want) {
				killTree(marked(mark))
				return 0, 0, 0, fmt.Errorf("%v: exit %v\nstdout %s\nstderr %s", argv, err, out.String(), errb.String())
			}
			break wait
		case <-tick.C:
			total := 0
			for _, p := range marked(mark) {
				total += statusKB(p, "VmRSS")
			}
			peak = max(peak, total)
		case <-deadline:
			_ = cmd.Process.Kill()
			killTree(marked(mark))
			<-done
			return 0, 0, 0, fmt.Errorf("%v did not finish in 120 s; stderr %s", argv, errb.String())
		}
	}
	time.Sleep(3 * time.Second) // the measure is what is left after 3 s
	left := alivePids(marked(mark))
	killTree(left)
	return took, peak, len(left), nil
}

// TestBenchRunagentACPx sets runagent --agent acp beside acpx, the
// headless ACP client scripts use today, both driving claude-agent-acp
// (and so the pinned claude) on the same fake API at the same
// permission stance (everything allowed in the working copy): the time
// to the answer, the peak memory of everything the run started, and the
// processes of the run alive 3 s after the client exited. Legs are
// interleaved, and the medians printed with their targets (make bench).
func TestBenchRunagentACPx(t *testing.T) {
	needBench(t)
	sdk := acpclient.SDK()
	acpx := filepath.Join(sdk, "node_modules/acpx/dist/cli.js")
	if _, err := os.Stat(acpx); sdk == "" || err != nil {
		t.Skip("no acpx in $AGENTRY_PEERS/acp (tests/peers/install.sh installs it)")
	}
	api := fakeAnthropic(t)
	env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "CLAUDE_CODE_EXECUTABLE="+claudeBin)
	adapter := acpAdapter(t, "@zed-industries/claude-agent-acp/dist/index.js")
	legs := []*headlessLeg{
		{name: "runagent --agent acp", argv: func(work, prompt string) []string {
			return []string{runagentBin, "--agent", "acp", "-l", "2", "--env-allow", "ANTHROPIC_*,CLAUDE_*,DISABLE_*,AGENTRY_BENCH_*", "--", "node", adapter}
		}},
		{name: "acpx exec", argv: func(work, prompt string) []string {
			return []string{"node", acpx, "--approve-all", "--format", "quiet", "--cwd", work, "--agent", "node " + adapter, "exec", prompt}
		}},
		// acpx's sessions: a queue owner keeps the agent for the next
		// prompt (--ttl, 300 s by default), as scripts that prompt twice use
		// it; the leg is a new session and one prompt.
		{name: "acpx sessions+prompt", argv: func(work, prompt string) []string {
			acpxCmd := "node '" + acpx + "' --approve-all --format quiet --cwd '" + work + "' --agent 'node " + adapter + "'"
			return []string{"sh", "-c", acpxCmd + " sessions new >/dev/null && " + acpxCmd + " prompt '" + prompt + "'"}
		}},
	}
	const pairs = 5
	for i := 0; i < pairs; i++ {
		for _, l := range legs {
			work := t.TempDir()
			prompt := fmt.Sprintf("SAY bench answer %d", i)
			argv := l.argv(work, prompt)
			if argv[0] == runagentBin {
				// runagent reads the prompt on standard input.
				f := filepath.Join(t.TempDir(), "prompt")
				if err := os.WriteFile(f, []byte(prompt), 0o600); err != nil {
					t.Fatal(err)
				}
				argv = append([]string{runagentBin, "-f", f}, argv[1:]...)
			}
			took, peak, left, err := headlessRun(env, argv, work, fmt.Sprintf("bench answer %d", i))
			if err != nil {
				t.Logf("%s: %v", l.name, err)
				l.fails++
				continue
			}
			l.answers, l.peaks, l.lefts = append(l.answers, took), append(l.peaks, peak), append(l.lefts, left)
		}
	}
	ours := legs[0]
	for _, l := range legs {
		if len(l.answers) == 0 {
			fmt.Printf("ACP headless: %-20s no run finished (%d failed)\n", l.name, l.fails)
			continue
		}
		fmt.Printf("ACP headless: %-20s answer %s, peak RSS of the run %d MB, processes left 3 s after it exited %s (median of %d, %d failed)\n",
			l.name, ms(medianOf(l.answers)), medianInt(l.peaks)/1024, leftList(l.lefts), len(l.answers), l.fails)
	}
	if len(ours.answers) == 0 {
		t.Fatalf("runagent --agent acp: no run finished")
	}
	for _, l := range legs[1:] {
		if len(l.answers) == 0 {
			continue
		}
		a, b := medianOf(ours.answers), medianOf(l.answers)
		fmt.Printf("ACP headless: runagent vs %s: answer %s vs %s (target: no slower) %s; processes left %s vs %s (target 0) %s\n",
			l.name, ms(a), ms(b), verdict(a <= b), leftList(ours.lefts), leftList(l.lefts), verdict(maxInt(ours.lefts) == 0))
	}
}

func medianInt(v []int) int {
	s := append([]int(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func maxInt(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func leftList(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, "/")
}
