package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// wtCount worktrees of one repository, wtServices services each.
const (
	wtCount    = 10
	wtServices = 3
)

// worktrees measures svc up in ten worktrees of one repository at once,
// each with web + api + redis on port = "auto", against the same ten
// svc up one after another: wall time, and the slowest service's time to
// ready from the moment the ups began. Each run checks what the issue
// asks: thirty distinct ports, ten distinct slots, and a svc down in one
// worktree that leaves the other nine's services ready.
func (b *bench) worktrees() {
	// Outside the state home, where a directory would be a service.
	root, err := os.MkdirTemp("", "svcbench-repo-")
	if err != nil {
		return
	}
	defer os.RemoveAll(root)
	dirs, ok := b.makeWorktrees(root, "wt")
	if !ok {
		fmt.Println("  worktrees: not measured (git worktree add failed)")
		b.fails++
		return
	}
	runs := min(b.runs, 3)
	var conc, seq, slowest []time.Duration
	for range runs {
		t := time.Now()
		var wg sync.WaitGroup
		var bad atomic.Bool
		for _, d := range dirs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := b.cmd(b.svc, "up")
				c.Dir = d
				if out, err := c.CombinedOutput(); err != nil {
					fmt.Printf("  svc up in %s: %v %s\n", d, err, out)
					bad.Store(true)
				}
			}()
		}
		wg.Wait()
		conc = append(conc, time.Since(t))
		if bad.Load() || !b.checkWorktrees(root, dirs) {
			b.fails++
			b.downAll(dirs)
			return
		}
		if last, ok := b.lastReady(root); ok {
			slowest = append(slowest, last.Sub(t))
		}
		b.downAll(dirs)

		t = time.Now()
		for _, d := range dirs {
			c := b.cmd(b.svc, "up")
			c.Dir = d
			c.Run()
		}
		seq = append(seq, time.Since(t))
		b.downAll(dirs)
	}
	ratio := float64(median(conc)) / float64(median(seq))
	fmt.Printf("  %d worktrees x %d services (web, api, redis; port auto), svc up in all at once: %s (slowest service ready after %s); one after another %s: %.2fx   target < 1x: %s\n",
		wtCount, wtServices, ms(median(conc)), ms(median(slowest)), ms(median(seq)), ratio, b.verdict(ratio < 1))
	fmt.Printf("  ... every run: %d distinct ports, %d distinct slots, svc down in one leaves the other %d ready\n", wtCount*wtServices, wtCount, wtCount-1)
}

// makeWorktrees makes a repository with wtCount-1 linked worktrees
// besides its main checkout (prefix1, prefix2 …: a measurement's names
// are not those an earlier one left), each with the same svc.toml.
func (b *bench) makeWorktrees(root, prefix string) ([]string, bool) {
	main := filepath.Join(root, "app")
	git := func(dir string, args ...string) bool {
		c := exec.Command("git", append([]string{"-c", "user.name=b", "-c", "user.email=b@b"}, args...)...)
		c.Dir = dir
		return c.Run() == nil
	}
	if err := os.MkdirAll(main, 0o700); err != nil || !git(main, "init", "-q") || !git(main, "commit", "-q", "--allow-empty", "-m", "i") {
		return nil, false
	}
	redis := "redis-server --port $PORT --save '' --appendonly no"
	if _, err := exec.LookPath("redis-server"); err != nil {
		redis = b.self + " serve"
	}
	toml := fmt.Sprintf("[services.web]\ncommand = [%q, \"serve\"]\nport = \"auto\"\n\n[services.api]\ncommand = [%q, \"serve\"]\nport = \"auto\"\n\n[services.redis]\ncommand = %q\nport = \"auto\"\n",
		b.self, b.self, redis)
	dirs := []string{main}
	for i := 1; i < wtCount; i++ {
		d := filepath.Join(root, prefix+strconv.Itoa(i))
		if !git(main, "worktree", "add", "-q", d) {
			return nil, false
		}
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		os.WriteFile(filepath.Join(d, "svc.toml"), []byte(toml), 0o600)
	}
	return dirs, true
}

// listed is what the checks read of svc ls --json.
type listed struct {
	Name     string     `json:"name"`
	Status   string     `json:"status"`
	Port     int        `json:"port"`
	ReadyAt  *time.Time `json:"readyAt"`
	Worktree *struct {
		Top  string `json:"top"`
		Slot int    `json:"slot"`
	} `json:"worktree"`
}

func (b *bench) listAll() []listed {
	out, _ := b.cmd(b.svc, "ls", "--json").Output()
	var ls []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var l listed
		if dec.Decode(&l) != nil {
			return ls
		}
		ls = append(ls, l)
	}
}

// checkWorktrees checks ports and slots, and that svc down in the first
// worktree stops only its services (those of the repository under root:
// the measurements before leave theirs, stopped, in the list).
func (b *bench) checkWorktrees(root string, dirs []string) bool {
	ls := b.listUnder(root)
	ports, slots := map[int]bool{}, map[int]string{}
	for _, l := range ls {
		if l.Status != "ready" || l.Worktree == nil {
			fmt.Printf("  worktrees: %s is %s\n", l.Name, l.Status)
			return false
		}
		port, _ := b.cmd(b.svc, "port", l.Name).Output()
		p, _ := strconv.Atoi(strings.TrimSpace(string(port)))
		if ports[p] {
			fmt.Printf("  worktrees: port %d twice\n", p)
			return false
		}
		ports[p] = true
		if top, ok := slots[l.Worktree.Slot]; ok && top != l.Worktree.Top {
			fmt.Printf("  worktrees: slot %d twice\n", l.Worktree.Slot)
			return false
		}
		slots[l.Worktree.Slot] = l.Worktree.Top
	}
	if len(ls) != wtCount*wtServices || len(slots) != wtCount {
		fmt.Printf("  worktrees: %d services in %d slots\n", len(ls), len(slots))
		return false
	}
	c := b.cmd(b.svc, "down")
	c.Dir = dirs[0]
	c.Run()
	ready := 0
	for _, l := range b.listUnder(root) {
		if l.Status == "ready" {
			ready++
		}
	}
	if ready != (wtCount-1)*wtServices {
		fmt.Printf("  worktrees: after svc down in one, %d ready\n", ready)
		return false
	}
	return true
}

// listUnder is listAll's services of worktrees under root.
func (b *bench) listUnder(root string) []listed {
	var ls []listed
	for _, l := range b.listAll() {
		if l.Worktree != nil && strings.HasPrefix(l.Worktree.Top, root+string(filepath.Separator)) {
			ls = append(ls, l)
		}
	}
	return ls
}

// lastReady is the latest readyAt of the services.
func (b *bench) lastReady(root string) (time.Time, bool) {
	var last time.Time
	for _, l := range b.listUnder(root) {
		if l.ReadyAt != nil && l.ReadyAt.After(last) {
			last = *l.ReadyAt
		}
	}
	return last, !last.IsZero()
}

func (b *bench) downAll(dirs []string) {
	var wg sync.WaitGroup
	for _, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := b.cmd(b.svc, "down")
			c.Dir = d
			c.Run()
		}()
	}
	wg.Wait()
}

// proxy measures a request through svc proxy against the same request to
// the service directly, one connection kept alive each, interleaved;
// then requests per second through the proxy from 8 clients.
func (b *bench) proxy() {
	root, err := os.MkdirTemp("", "svcbench-proxied-")
	if err != nil {
		return
	}
	defer os.RemoveAll(root)
	dirs, ok := b.makeWorktrees(root, "px")
	if !ok {
		b.fails++
		return
	}
	d := dirs[1]
	c := b.cmd(b.svc, "up", "web")
	c.Dir = d
	if out, err := c.CombinedOutput(); err != nil {
		fmt.Printf("  proxy: svc up: %v %s\n", err, out)
		b.fails++
		return
	}
	defer func() {
		c := b.cmd(b.svc, "down")
		c.Dir = d
		c.Run()
		b.cmd(b.svc, "stop", "svc-proxy").Run()
	}()
	if out, err := b.cmd(b.svc, "proxy", "--port", "auto").CombinedOutput(); err != nil {
		fmt.Printf("  proxy: %v %s\n", err, out)
		b.fails++
		return
	}
	pport, _ := b.cmd(b.svc, "port", "svc-proxy").Output()
	wport, _ := b.cmd(b.svc, "port", "px1/web").Output()
	direct := "http://127.0.0.1:" + strings.TrimSpace(string(wport)) + "/"
	via := "http://127.0.0.1:" + strings.TrimSpace(string(pport)) + "/"
	host := "web.px1.localhost:" + strings.TrimSpace(string(pport))
	get := func(cl *http.Client, url, host string) (time.Duration, bool) {
		req, _ := http.NewRequest("GET", url, nil)
		if host != "" {
			req.Host = host
		}
		t := time.Now()
		resp, err := cl.Do(req)
		if err != nil {
			return 0, false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(t), resp.StatusCode == 200
	}
	cd, cp := &http.Client{}, &http.Client{}
	var dd, pd []time.Duration
	for i := range 3000 {
		x, ok1 := get(cd, direct, "")
		y, ok2 := get(cp, via, host)
		if !ok1 || !ok2 {
			fmt.Println("  proxy: a request failed")
			b.fails++
			return
		}
		if i >= 200 { // warm
			dd, pd = append(dd, x), append(pd, y)
		}
	}
	over := median(pd) - median(dd)
	fmt.Printf("  svc proxy, one request kept alive: direct %s, through the proxy %s: +%.3f ms   target <= 0.3 ms: %s\n",
		fmt.Sprintf("%.3f ms", float64(median(dd).Microseconds())/1000), fmt.Sprintf("%.3f ms", float64(median(pd).Microseconds())/1000),
		float64(over.Microseconds())/1000, b.verdict(over <= 300*time.Microsecond))
	var n atomic.Int64
	stop := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &http.Client{}
			for time.Now().Before(stop) {
				if _, ok := get(cl, via, host); ok {
					n.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("  svc proxy throughput, 8 clients kept alive: %d requests/s\n", n.Load()/2)
}
