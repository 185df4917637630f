package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// watchDebounce is the --debounce of the watch figures.
const watchDebounce = 100 * time.Millisecond

// watch measures svc start --watch: from a file's change to the service
// restarted and ready again, against the debounce plus the service's own
// start (svc start → ready of the same server); and the monitor's idle
// CPU and RSS watching a tree of 10,000 files with a health probe every
// second.
func (b *bench) watch() {
	tree := filepath.Join(b.home, "tree")
	for d := range 100 {
		dir := filepath.Join(tree, "d"+strconv.Itoa(d))
		os.MkdirAll(dir, 0o755)
		for f := range 100 {
			os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(f)+".py"), nil, 0o600)
		}
	}
	var own []time.Duration
	for i := 0; i < b.runs; i++ {
		name := "own" + strconv.Itoa(i)
		t := time.Now()
		if out, err := b.cmd(b.svc, "start", "--name", name, "--", b.self, "serve").Output(); err != nil || !strings.Contains(string(out), "is ready") {
			fmt.Printf("  svc start failed: %v %s\n", err, out)
			b.fails++
			return
		}
		own = append(own, time.Since(t))
		b.cmd(b.svc, "stop", name).Run()
	}
	out, err := b.cmd(b.svc, "start", "--name", "w", "--cwd", tree, "--watch", ".", "--debounce", watchDebounce.String(),
		"--port", "auto", "--health-url", "http://127.0.0.1:{port}/", "--health-every", "1s", "--", b.self, "serve").Output()
	if err != nil || !strings.Contains(string(out), "is ready") {
		fmt.Printf("  svc start --watch failed: %v %s\n", err, out)
		b.fails++
		return
	}
	defer b.cmd(b.svc, "stop", "w").Run()
	const window = 10 * time.Second
	before := b.monitorTicks("w")
	time.Sleep(window)
	used := time.Duration(b.monitorTicks("w")-before) * 10 * time.Millisecond // USER_HZ 100
	pct := 100 * float64(used) / float64(window)
	fmt.Printf("  monitor CPU over 10 s, watching 10,000 files, a health probe every 1 s: %.2f%% of a core   target <= 0.5%%: %s\n", pct, b.verdict(pct <= 0.5))
	rss := b.monitorRSS("w")
	fmt.Printf("  monitor RSS, the same, idle: %.1f MB   target <= 6 MB: %s\n", rss, b.verdict(rss > 0 && rss <= 6))
	var lag []time.Duration
	for i := 0; i < b.runs; i++ {
		t := time.Now()
		os.WriteFile(filepath.Join(tree, "d7", "f7.py"), []byte(strconv.Itoa(i)), 0o600)
		ready, ok := b.readyAgain("w", i+1, t.Add(10*time.Second))
		if !ok {
			fmt.Printf("  the change was not followed by a restart and readiness within 10 s\n")
			b.fails++
			return
		}
		lag = append(lag, ready.Sub(t))
	}
	floor := watchDebounce + median(own)
	fmt.Printf("  change → restarted and ready (debounce %s): %s; debounce + the service's own start %s   target <= that + 20 ms: %s\n",
		watchDebounce, ms(median(lag)), ms(floor), b.verdict(median(lag) <= floor+20*time.Millisecond))
	rss = b.monitorRSS("w")
	fmt.Printf("  monitor RSS after those %d restarts: %.1f MB   (no target: the idle figure's is above)\n", b.runs, rss)
}

// readyAgain waits until a service has made n restarts on change and is
// ready again, and says when it was.
func (b *bench) readyAgain(name string, n int, deadline time.Time) (time.Time, bool) {
	for time.Now().Before(deadline) {
		var s struct {
			Status    string     `json:"status"`
			ReadyAt   *time.Time `json:"readyAt"`
			Restarted struct {
				Change int `json:"change"`
			} `json:"restarted"`
		}
		b2, _ := os.ReadFile(filepath.Join(b.home, name, "state.json"))
		if json.Unmarshal(b2, &s) == nil && s.Restarted.Change >= n && s.Status == "ready" && s.ReadyAt != nil {
			return *s.ReadyAt, true
		}
		time.Sleep(time.Millisecond)
	}
	return time.Time{}, false
}

// monitorRSS is a service's monitor's resident memory, in MB.
func (b *bench) monitorRSS(name string) float64 {
	b2, _ := os.ReadFile(filepath.Join(b.home, name, "state.json"))
	var s struct {
		MonitorPID int `json:"monitorPid"`
	}
	json.Unmarshal(b2, &s)
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.MonitorPID))
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.Atoi(strings.Fields(l)[1])
			return float64(kb) / 1024
		}
	}
	return 0
}
