package peers

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/tests/acpclient"
)

// typingGap is how long a person takes to type a first prompt after the
// editor opened the session: the time an agent has to get ready unseen.
const typingGap = 2 * time.Second

// acpMeasure is what make bench measures of one ACP agent, the way an
// editor drives it.
type acpMeasure struct {
	newFirst  time.Duration // the first session/new after initialize
	newMedian time.Duration // the median of the 12 sessions' session/new
	gapFirst  time.Duration // turn 1's first chunk, prompted typingGap after session/new (median of 3 processes)
	nowFirst  time.Duration // turn 1's first chunk, prompted right after session/new (median of 3)
	laterFrst time.Duration // turns 2-6: median first chunk
	laterAns  time.Duration // turns 2-6: median answer
	idleRSS   int           // kB, the tree with 12 sessions prompted once, idle
	ownRSS    int           // kB, the agent's own process then
	idleProcs int           // processes in the tree then
	biggest   int           // kB, the largest child while the 12 were open
	appServer int           // kB, the tree's codex app-server then, if any
	leftIdle  [2]int        // processes left 3 s after end of input, of all, idle
	leftTurn  [2]int        // the same, mid-turn
}

// newSession opens a session in a directory of its own and returns its
// id and how long session/new took.
func newSession(t *testing.T, c *acpclient.Client) (string, time.Duration) {
	t.Helper()
	began := time.Now()
	_, res := c.Call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	took := time.Since(began)
	if res.Error != nil {
		t.Fatalf("session/new: %s", res.Error.Message)
	}
	return sessionID(res), took
}

// firstTurn prompts s and returns when the first chunk and the answer came.
func firstTurn(c *acpclient.Client, s, prompt string) (first, whole time.Duration) {
	began := time.Now()
	tag := c.Send("session/prompt", acpclient.Prompt(s, prompt))
	for _, ev := range c.Until(func(ev acpclient.Event) bool {
		return ev.Tag == tag || (ev.Update.SessionUpdate == "agent_message_chunk" && ev.Update.Text() != "")
	}) {
		if ev.Tag == tag {
			return time.Since(began), time.Since(began)
		}
	}
	first = time.Since(began)
	c.Wait(tag)
	return first, time.Since(began)
}

func initialize(c *acpclient.Client) {
	c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
}

// tree is pid and its descendants.
func tree(pid int) []int { return append([]int{pid}, proc.Descendants(pid)...) }

// leftAfterEOF closes the agent's input and counts the tree's processes
// still there 3 s later, of those there were.
func leftAfterEOF(c *acpclient.Client) [2]int {
	all := tree(c.PID)
	c.EOF()
	time.Sleep(3 * time.Second) // the measure is what is left after 3 s
	left := alivePids(all)
	killTree(left)
	return [2]int{len(left), len(all)}
}

// settle waits until the tree is idle: 3 s at least after the last turn,
// then until its process count has not changed for 1.5 s (an idle stop
// has happened), 12 s at most.
func settle(pid int) {
	start, n, since := time.Now(), len(tree(pid)), time.Now()
	for time.Since(start) < 12*time.Second {
		time.Sleep(250 * time.Millisecond)
		if m := len(tree(pid)); m != n {
			n, since = m, time.Now()
		}
		if time.Since(start) >= 3*time.Second && time.Since(since) >= 1500*time.Millisecond {
			return
		}
	}
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// freshTurnOne starts the agent, opens a session, waits gap and prompts:
// when turn 1's first chunk came. The agent's tree is killed after.
func freshTurnOne(t *testing.T, sdk string, a acpAgent, gap time.Duration) time.Duration {
	first, _, _ := freshTurns(t, sdk, a, gap, 1)
	return first
}

// freshTurns starts the agent, opens a session, waits gap and runs n
// turns: turn 1's first chunk, and the first chunks and answers of the
// turns after it. The agent's tree is killed after.
func freshTurns(t *testing.T, sdk string, a acpAgent, gap time.Duration, n int) (first time.Duration, firsts, wholes []time.Duration) {
	c := acpclient.Start(t, sdk, a.env, t.TempDir(), a.argv...)
	initialize(c)
	s, _ := newSession(t, c)
	time.Sleep(gap) // a person typing the first prompt
	first, _ = firstTurn(c, s, "SAY bench turn 1")
	for i := 2; i <= n; i++ {
		f, w := firstTurn(c, s, fmt.Sprintf("SAY bench turn %d", i))
		firsts, wholes = append(firsts, f), append(wholes, w)
	}
	all := tree(c.PID)
	c.EOF()
	killTree(alivePids(all))
	return first, firsts, wholes
}

// turnRounds is how many fresh processes of each agent pairedTurns runs.
const turnRounds = 11

// pairedTurns measures turn 1 (prompted typingGap after session/new) and
// turns 2-6 of both agents, interleaved — a fresh process of one, then of
// the other, the order swapped each round — so that the machine's load
// falls on both alike: turn 1 is one sample a process, and the CLIs'
// own first turn varies by ±50 ms from process to process. Each agent's
// figures are the medians over its turnRounds processes (turns 2-6: over
// all of their later turns).
func pairedTurns(t *testing.T, sdk string, h, r acpAgent, hm, rm *acpMeasure) {
	type samples struct{ first, later, answers []time.Duration }
	var got [2]samples
	agents := [2]acpAgent{h, r}
	for round := 0; round < turnRounds; round++ {
		for k := range 2 {
			i := (k + round) % 2
			f, fs, ws := freshTurns(t, sdk, agents[i], typingGap, 6)
			got[i].first = append(got[i].first, f)
			got[i].later, got[i].answers = append(got[i].later, fs...), append(got[i].answers, ws...)
		}
	}
	for i, m := range []*acpMeasure{hm, rm} {
		m.gapFirst, m.laterFrst, m.laterAns = medianOf(got[i].first), medianOf(got[i].later), medianOf(got[i].answers)
	}
}

// measureACP runs the bench on one agent, in five processes: the
// editor's way (session/new, a typing gap, the prompt, then turns 2-6,
// then end of input while idle); a prompt right after session/new then
// end of input mid-turn; a prompt right after session/new in two more;
// and 12 sessions each prompted once, then idle (idleArgs are added to
// this one's argv). The turns with targets are pairedTurns' to measure:
// its figures replace the first process's.
func measureACP(t *testing.T, sdk string, a acpAgent, idleArgs ...string) acpMeasure {
	var m acpMeasure
	// The editor's way.
	c := acpclient.Start(t, sdk, a.env, t.TempDir(), a.argv...)
	initialize(c)
	s, took := newSession(t, c)
	m.newFirst = took
	time.Sleep(typingGap) // a person typing the first prompt
	m.gapFirst, _ = firstTurn(c, s, "SAY bench turn 1")
	var firsts, wholes []time.Duration
	for i := 2; i <= 6; i++ {
		f, w := firstTurn(c, s, fmt.Sprintf("SAY bench turn %d", i))
		firsts, wholes = append(firsts, f), append(wholes, w)
	}
	m.laterFrst, m.laterAns = medianOf(firsts), medianOf(wholes)
	m.leftIdle = leftAfterEOF(c)

	// Prompted right after session/new; end of input mid-turn.
	c = acpclient.Start(t, sdk, a.env, t.TempDir(), a.argv...)
	initialize(c)
	s, _ = newSession(t, c)
	m.nowFirst, _ = firstTurn(c, s, "SAY bench turn 1")
	c.Send("session/prompt", acpclient.Prompt(s, "SLOW 200")) // 10 s of deltas
	c.Until(func(ev acpclient.Event) bool {
		return ev.Update.SessionUpdate == "agent_message_chunk" && ev.Update.Text() != ""
	})
	m.leftTurn = leftAfterEOF(c)

	// Turn 1 right after session/new is one sample a process: two more
	// processes, and the median of the three. (Turn 1 after a typing gap
	// and turns 2-6, which have targets, are pairedTurns'.)
	nows := []time.Duration{m.nowFirst}
	for i := 0; i < 2; i++ {
		nows = append(nows, freshTurnOne(t, sdk, a, 0))
	}
	m.nowFirst = medianOf(nows)

	// 12 sessions opened and prompted once, then idle.
	c = acpclient.Start(t, sdk, a.env, t.TempDir(), append(append([]string{}, a.argv...), idleArgs...)...)
	defer func() { killTree(alivePids(tree(c.PID))) }()
	initialize(c)
	var news []time.Duration
	for i := 0; i < 12; i++ {
		s, took := newSession(t, c)
		news = append(news, took)
		c.Call("session/prompt", acpclient.Prompt(s, "SAY short"))
		for _, p := range proc.Descendants(c.PID) {
			m.biggest = max(m.biggest, statusKB(p, "VmRSS"))
		}
	}
	m.newMedian = medianOf(news)
	settle(c.PID)
	all := tree(c.PID)
	m.idleRSS, m.ownRSS, m.idleProcs = treeRSS(c.PID), statusKB(c.PID, "VmRSS"), len(all)
	for _, p := range all[1:] {
		if strings.Contains(cmdline(p), "app-server") {
			m.appServer = max(m.appServer, statusKB(p, "VmRSS"))
		}
	}
	c.EOF()
	return m
}

func mb(kb int) string { return fmt.Sprintf("%.0f MB", float64(kb)/1024) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// acpRows prints make bench's rows for one backend: agent-host (h)
// beside the reference adapter (r), each row with its target.
func acpRows(backend, adapter string, h, r acpMeasure) {
	p := func(format string, args ...any) { fmt.Printf("ACP "+backend+": "+format+"\n", args...) }
	p("turn 1 first chunk (median of %d processes each, interleaved), prompt %s after session/new: agent-host %s, %s %s (target <= the adapter's): %s",
		turnRounds, typingGap, ms(h.gapFirst), adapter, ms(r.gapFirst), verdict(h.gapFirst <= r.gapFirst))
	p("turn 1 first chunk (median of 3), prompt right after session/new (no target): agent-host %s, %s %s",
		ms(h.nowFirst), adapter, ms(r.nowFirst))
	p("session/new, first / median of 12: agent-host %s / %s, %s %s / %s (target <= 50 ms): %s",
		ms(h.newFirst), ms(h.newMedian), adapter, ms(r.newFirst), ms(r.newMedian),
		verdict(max(h.newFirst, h.newMedian) <= 50*time.Millisecond))
	p("turns 2-6 median first chunk / answer (%d processes each, interleaved): agent-host %s / %s, %s %s / %s (target: faster than the adapter): %s",
		turnRounds, ms(h.laterFrst), ms(h.laterAns), adapter, ms(r.laterFrst), ms(r.laterAns),
		verdict(h.laterFrst < r.laterFrst && h.laterAns < r.laterAns))
	rss := fmt.Sprintf("tree RSS, 12 sessions prompted once, idle: agent-host %s (processes %d, its own %s), %s %s (processes %d)",
		mb(h.idleRSS), h.idleProcs, mb(h.ownRSS), adapter, mb(r.idleRSS), r.idleProcs)
	if backend == "codex" {
		limit := r.idleRSS + h.appServer
		p("%s (target <= the adapter's + one app-server, %s + %s = %s): %s",
			rss, mb(r.idleRSS), mb(h.appServer), mb(limit), verdict(h.appServer > 0 && h.idleRSS <= limit))
	} else {
		limit := h.ownRSS + h.biggest
		p("%s; agent-host run with --idle-stop 2s (target <= its own + 1 CLI, %s + %s = %s, idle ones stopped): %s",
			rss, mb(h.ownRSS), mb(h.biggest), mb(limit), verdict(h.biggest > 0 && h.idleRSS <= limit))
	}
	for _, row := range []struct {
		when string
		h, r [2]int
	}{{"idle", h.leftIdle, r.leftIdle}, {"mid-turn", h.leftTurn, r.leftTurn}} {
		p("processes left 3 s after end of input, %s: agent-host %d of %d, %s %d of %d (target 0): %s",
			row.when, row.h[0], row.h[1], adapter, row.r[0], row.r[1], verdict(row.h[0] == 0))
	}
}
