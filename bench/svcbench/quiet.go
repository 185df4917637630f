package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serveSilent is a server that prints nothing: it listens on $PORT (or a
// free port), writes the time it did so to the file named, and serves
// until SIGTERM.
func serveSilent(file string) {
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		os.Exit(1)
	}
	os.WriteFile(file, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o600)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	<-sig
}

// quiet measures a server that prints nothing: svc start → report, and
// listen() → ready, against nohup … & with the port polled.
func (b *bench) quiet() {
	var start, lag []time.Duration
	for i := 0; i < b.runs; i++ {
		name := "q" + strconv.Itoa(i)
		mark := filepath.Join(b.home, name+".listened")
		t := time.Now()
		out, err := b.cmd(b.svc, "start", "--name", name, "--port", "auto", "--", b.self, "serve-silent", mark).Output()
		start = append(start, time.Since(t))
		if err != nil || !strings.Contains(string(out), "from its listening socket") {
			fmt.Printf("  svc start of a silent server failed: %v %s\n", err, out)
			b.fails++
			return
		}
		if l, ok := b.listenLag(name, mark); ok {
			lag = append(lag, l)
		}
		b.cmd(b.svc, "stop", name).Run()
	}
	nohupStart := b.nohupSilent()
	ratio := float64(median(start)) / float64(nohupStart)
	fmt.Printf("  start → report, silent server (prints nothing):  svc %s; nohup … & then polling the port %s: %.1fx   target <= 3x: %s\n",
		ms(median(start)), ms(nohupStart), ratio, b.verdict(ratio <= 3))
	if len(lag) > 0 {
		fmt.Printf("  readiness detected after listen():               %s   target <= 20 ms: %s\n", ms(median(lag)), b.verdict(median(lag) <= 20*time.Millisecond))
	}
}

// listenLag is readyAt in state.json minus the time the server listened.
func (b *bench) listenLag(name, mark string) (time.Duration, bool) {
	listened, err := os.ReadFile(mark)
	if err != nil {
		return 0, false
	}
	ns, _ := strconv.ParseInt(string(listened), 10, 64)
	ready, ok := b.readyAt(name)
	return ready.Sub(time.Unix(0, ns)), ok
}

func (b *bench) readyAt(name string) (time.Time, bool) {
	state, err := os.ReadFile(filepath.Join(b.home, name, "state.json"))
	if err != nil {
		return time.Time{}, false
	}
	c := exec.Command(b.ndjson, "get", "-r", "readyAt")
	c.Stdin = strings.NewReader(string(state))
	out, err := c.Output()
	if err != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(out)))
	return t, err == nil
}

// nohupSilent: the silent server under nohup, its port polled until it
// accepts.
func (b *bench) nohupSilent() time.Duration {
	var starts []time.Duration
	for i := 0; i < b.runs; i++ {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
		t := time.Now()
		c := exec.Command("nohup", b.self, "serve-silent", filepath.Join(b.home, "nohup.listened"))
		c.Env = append(os.Environ(), "PORT="+port)
		c.Start()
		for {
			if conn, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
				conn.Close()
				break
			}
			time.Sleep(time.Millisecond)
		}
		starts = append(starts, time.Since(t))
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	}
	return median(starts)
}

// idle is the monitor's CPU while nothing changes: with a ready service,
// and with one that never listens (looked at less and less often).
func (b *bench) idle() {
	b.cmd(b.svc, "start", "--name", "idle-ready", "--port", "auto", "--", b.self, "serve-silent", filepath.Join(b.home, "idle.listened")).Run()
	b.cmd(b.svc, "start", "--name", "idle-quiet", "--settle", "1ms", "--", "sleep", "600").Run()
	const window = 10 * time.Second
	before := map[string]int{}
	for _, n := range []string{"idle-ready", "idle-quiet"} {
		before[n] = b.monitorTicks(n)
	}
	time.Sleep(window)
	for _, n := range []string{"idle-ready", "idle-quiet"} {
		used := time.Duration(b.monitorTicks(n)-before[n]) * 10 * time.Millisecond // USER_HZ 100
		pct := 100 * float64(used) / float64(window)
		what := map[string]string{"idle-ready": "a ready service, nothing changing", "idle-quiet": "a service that never listens, its first 10 s"}[n]
		target := map[string]float64{"idle-ready": 0.5, "idle-quiet": 2}[n]
		fmt.Printf("  monitor CPU over 10 s, %s: %.2f%% of a core   target <= %g%%: %s\n", what, pct, target, b.verdict(pct <= target))
	}
	b.cmd(b.svc, "stop", "idle-ready", "idle-quiet").Run()
}

// monitorTicks is utime+stime of a service's monitor, in clock ticks.
func (b *bench) monitorTicks(name string) int {
	state, _ := os.ReadFile(filepath.Join(b.home, name, "state.json"))
	c := exec.Command(b.ndjson, "get", "monitorPid")
	c.Stdin = strings.NewReader(string(state))
	out, _ := c.Output()
	stat, _ := os.ReadFile("/proc/" + strings.TrimSpace(string(out)) + "/stat")
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	k, _ := strconv.Atoi(f[12])
	return u + k
}

// tailAll: svc tail --all over 10 services of 100,000 rows each, merged
// by time received, against cat of the same log files (no merge, no
// numbering: the floor).
func (b *bench) tailAll() {
	home, _ := os.MkdirTemp("", "svcbench-tail-")
	defer os.RemoveAll(home)
	run := func(args ...string) *exec.Cmd {
		c := exec.Command(b.svc, args...)
		c.Env = append(os.Environ(), "SVC_HOME="+home)
		return c
	}
	var logs []string
	for i := 0; i < 10; i++ {
		name := "t" + strconv.Itoa(i)
		run("start", "--name", name, "--settle", "60s", "--", "sh", "-c", "seq 1 100000 | sed 's/^/row of some typical length, number /'").Run()
		logs = append(logs, filepath.Join(home, name, "log"))
	}
	var svcT, catT []time.Duration
	rows := 0
	for i := 0; i < b.runs; i++ {
		c := run("tail", "--all", "--since", "0")
		t := time.Now()
		out, _ := c.Output()
		svcT = append(svcT, time.Since(t))
		rows = strings.Count(string(out), "\n")
		t = time.Now()
		exec.Command("cat", logs...).Run()
		catT = append(catT, time.Since(t))
	}
	ratio := float64(median(svcT)) / float64(median(catT))
	fmt.Printf("  svc tail --all, 10 services × 100k rows (%d printed): %s; cat of the logs %s: %.1fx   target <= 20x: %s\n",
		rows, ms(median(svcT)), ms(median(catT)), ratio, b.verdict(rows == 1000000 && ratio <= 20))
}
