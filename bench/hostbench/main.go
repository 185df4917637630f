// Command hostbench measures agent-host with the echo backend through a
// pipe, for make bench: pipelined ping throughput, unpipelined
// request→reply latency, and the host's memory over a million requests.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

type host struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	raw io.WriteCloser
	out *bufio.Reader
}

func start(bin string, args ...string) *host {
	cmd := exec.Command(bin, append([]string{"--log-level", "error"}, args...)...)
	raw, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "hostbench:", err)
		os.Exit(1)
	}
	h := &host{cmd: cmd, in: bufio.NewWriterSize(raw, 1<<16), raw: raw, out: bufio.NewReaderSize(out, 1<<16)}
	h.in.WriteString(`{"type":"hello","id":"h","protocol":1}` + "\n")
	h.in.Flush()
	h.line()
	return h
}

func (h *host) line() string {
	l, err := h.out.ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostbench: reading the host:", err)
		os.Exit(1)
	}
	return l
}

func (h *host) stop() {
	h.raw.Close()
	h.cmd.Wait()
}

// rssKB reads a field (VmRSS, VmHWM) of the host's /proc status, in kB.
func (h *host) rssKB(field string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.cmd.Process.Pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return 0
}

// pipelined sends n pings as fast as they can be written while reading
// the replies, and returns the time to the last reply.
func (h *host) pipelined(n int, sample func(done int)) time.Duration {
	start := time.Now()
	go func() {
		for i := 0; i < n; i++ {
			h.in.WriteString(`{"type":"ping","id":"p` + strconv.Itoa(i) + `"}` + "\n")
		}
		h.in.Flush()
	}()
	for got := 0; got < n; {
		if strings.Contains(h.line(), `"type":"ok"`) {
			got++
			if sample != nil && got%100000 == 0 {
				sample(got)
			}
		}
	}
	return time.Since(start)
}

func main() {
	bin := flag.String("bin", "bin/agent-host", "the agent-host binary")
	flag.Parse()

	h := start(*bin)
	h.pipelined(20000, nil) // warm up
	var rates []float64
	for range 5 {
		const n = 200000
		d := h.pipelined(n, nil)
		rates = append(rates, n/d.Seconds())
	}
	sort.Float64s(rates)
	fmt.Printf("agent-host ping, pipelined:   %9.0f round trips/s (median of 5 × 200,000)   target >= 100,000: %s\n",
		rates[2], verdict(rates[2] >= 100000))

	var lat []time.Duration
	for i := 0; i < 20000; i++ {
		t := time.Now()
		h.in.WriteString(`{"type":"ping","id":"l` + strconv.Itoa(i) + `"}` + "\n")
		h.in.Flush()
		h.line()
		lat = append(lat, time.Since(t))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	med, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	fmt.Printf("agent-host ping, one at a time: median %v, p99 %v (20,000 requests)   target median <= 50µs: %s\n",
		med.Round(time.Microsecond/10), p99.Round(time.Microsecond), verdict(med <= 50*time.Microsecond))
	h.stop()

	h = start(*bin)
	var at100k, atEnd int
	h.pipelined(1000000, func(done int) {
		switch done {
		case 100000:
			at100k = h.rssKB("VmRSS")
		case 1000000:
			atEnd = h.rssKB("VmRSS")
		}
	})
	peak := h.rssKB("VmHWM")
	h.stop()
	fmt.Printf("agent-host memory over 1,000,000 pings: RSS %.1f MB after 100,000, %.1f MB after 1,000,000, peak %.1f MB   flat: %s\n",
		float64(at100k)/1024, float64(atEnd)/1024, float64(peak)/1024, verdict(float64(atEnd) <= 1.5*float64(at100k)+2048))
	longLines(*bin)
}

// longLines measures the host's peak RSS for one long line: one over the
// cap (skipped), one held (a ping whose extra field makes it 60 MB, just
// under the 64 MiB cap), and one over a small cap; each against its target.
func longLines(bin string) {
	const mib = 1 << 20
	cases := []struct {
		what   string
		args   []string
		line   string
		target float64 // MB
	}{
		{"an 80 MB line over the 64 MiB cap", nil, run(80_000_000), 2 * 64 * mib / 1e6},
		{"a 60 MB line under the 64 MiB cap", nil, `{"type":"ping","id":"big","pad":"` + strings.Repeat("x", 60_000_000) + `"}`, 2 * 64 * mib / 1e6},
		{"an 80 MB line over --max-line 1MiB", []string{"--max-line", "1MiB"}, run(80_000_000), 40},
	}
	for _, c := range cases {
		h := start(bin, c.args...)
		h.in.WriteString(c.line + "\n" + `{"type":"ping","id":"after"}` + "\n")
		h.in.Flush()
		for !strings.Contains(h.line(), `"after"`) {
		}
		peak := float64(h.rssKB("VmHWM")) * 1024 / 1e6
		h.stop()
		fmt.Printf("agent-host peak RSS for %s: %.1f MB   target <= %.0f MB: %s\n", c.what, peak, c.target, verdict(peak <= c.target))
	}
}

// run is a run_turn line of n bytes or so.
func run(n int) string {
	return `{"type":"run_turn","id":"t","runId":"r","params":{"chatId":"c","prompt":"` + strings.Repeat("x", n) + `"}}`
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}
