package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// upServices is how many independent servers the svc up figure starts.
const upServices = 10

// up measures svc up of a project of independent servers that listen at
// once against starting them one after another with svc start, and
// against foreman (Debian's ruby-foreman) running the same Procfile, timed
// to its last server's URL line. process-compose and overmind are not in
// Debian, and the Go module proxy here refuses both.
func (b *bench) up() {
	dir, err := os.MkdirTemp(b.home, "project-")
	if err != nil {
		return
	}
	var toml, procfile strings.Builder
	for i := range upServices {
		fmt.Fprintf(&toml, "[services.s%d]\ncommand = [%q, \"serve\"]\n", i, b.self)
		fmt.Fprintf(&procfile, "s%d: exec %s serve\n", i, b.self)
	}
	os.WriteFile(filepath.Join(dir, "svc.toml"), []byte(toml.String()), 0o600)
	os.WriteFile(filepath.Join(dir, "Procfile"), []byte(procfile.String()), 0o600)
	var up, seq, fm []time.Duration
	for i := 0; i < b.runs; i++ {
		t := time.Now()
		c := b.cmd(b.svc, "up")
		c.Dir = dir
		out, err := c.CombinedOutput()
		if err != nil || strings.Count(string(out), " is ready at ") != upServices {
			fmt.Printf("  svc up failed: %v %s\n", err, out)
			b.fails++
			return
		}
		up = append(up, time.Since(t))
		c = b.cmd(b.svc, "down")
		c.Dir = dir
		c.Run()

		if d, ok := b.sequential(i); ok {
			seq = append(seq, d)
		}
		if d, ok := b.foreman(dir); ok {
			fm = append(fm, d)
		}
	}
	if len(seq) == 0 {
		fmt.Println("  svc up: the sequential svc starts failed")
		b.fails++
		return
	}
	ratio := float64(median(up)) / float64(median(seq))
	fmt.Printf("  svc up, %d independent servers, until all ready: %s; %d svc starts one after another %s: %.2fx   target < 1x: %s\n",
		upServices, ms(median(up)), upServices, ms(median(seq)), ratio, b.verdict(ratio < 1))
	if len(fm) > 0 {
		fmt.Printf("  foreman start, same Procfile, until its last server's URL line: %s (foreground only: it knows no readiness)\n", ms(median(fm)))
	} else {
		fmt.Println("  foreman: not measured (apt-get install ruby-foreman)")
	}
	fmt.Println("  process-compose, overmind: not measured (in no registry this machine reaches)")
}

// sequential starts the servers one after another with svc start and
// stops them.
func (b *bench) sequential(run int) (time.Duration, bool) {
	var names []string
	t := time.Now()
	for i := range upServices {
		name := fmt.Sprintf("seq%d-%d", run, i)
		out, err := b.cmd(b.svc, "start", "--name", name, "--", b.self, "serve").Output()
		if err != nil || !strings.Contains(string(out), "is ready") {
			return 0, false
		}
		names = append(names, name)
	}
	d := time.Since(t)
	b.cmd(b.svc, append([]string{"stop"}, names...)...).Run()
	return d, true
}

// foreman runs the Procfile under foreman until every server has printed
// its URL, then stops it.
func (b *bench) foreman(dir string) (time.Duration, bool) {
	path, err := exec.LookPath("foreman")
	if err != nil {
		return 0, false
	}
	c := exec.Command(path, "start", "-f", filepath.Join(dir, "Procfile"), "-d", dir)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := c.StdoutPipe()
	if err != nil {
		return 0, false
	}
	t := time.Now()
	if err := c.Start(); err != nil {
		return 0, false
	}
	defer func() {
		syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
		c.Wait()
	}()
	sc := bufio.NewScanner(out)
	seen := 0
	for sc.Scan() {
		if strings.Contains(sc.Text(), "listening on http://") {
			if seen++; seen == upServices {
				d := time.Since(t)
				go func() {
					for sc.Scan() {
					}
				}()
				return d, true
			}
		}
	}
	return 0, false
}
