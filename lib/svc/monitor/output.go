package monitor

import (
	"bytes"
	"strings"
	"sync"

	"github.com/agentry/agentry/lib/svc"
	"golang.org/x/sys/unix"
)

// copyOutput moves the service's output into the log. While readiness is
// looked for in the output, complete lines that may matter also go to the
// watcher; the last few KiB are kept for reports. Nothing else is done per
// line, so output goes through at the speed of the log file.
func (m *monitor) copyOutput(r *launched, w *watch, lines chan<- string) {
	defer close(r.copyDone)
	defer close(lines)
	// A bigger pipe means fewer wake-ups for a chatty service.
	_, _ = unix.FcntlInt(r.out.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	buf := make([]byte, 256<<10)
	var partial []byte
	for {
		n, err := r.out.Read(buf)
		if n > 0 {
			data := buf[:n]
			failed := m.log.Err() != nil
			m.writeLog(data)
			if !failed && m.log.Err() != nil {
				// Logging just stopped (a full disk): the service goes on,
				// its output is still drained, and the state says so.
				m.rec.set(func(*svc.State) {})
			}
			m.keep(data) // and to svc attach, under --pty (pty.go)
			if w.watching.Load() {
				partial = w.feedLines(partial, data, lines)
			}
		}
		if err != nil {
			if len(partial) > 0 && w.watching.Load() {
				lines <- string(partial)
			}
			return
		}
	}
}

// feedLines passes the complete lines of data, after what partial holds,
// to the watcher; lines are cut at 4 KiB, which is plenty for a URL. When
// looking for an endpoint, only lines that may hold one are passed, and a
// chunk with no ':' and no "port" in it is skipped at memchr speed.
func (w *watch) feedLines(partial, data []byte, lines chan<- string) []byte {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return appendCapped(partial, data)
	}
	w.offer(appendCapped(partial, data[:i]), lines)
	data = data[i+1:]
	last := bytes.LastIndexByte(data, '\n')
	body, rest := data[:last+1], data[last+1:]
	if w.regex || mayHoldEndpoint(body) {
		for len(body) > 0 {
			j := bytes.IndexByte(body, '\n')
			w.offer(body[:min(j, 4096)], lines)
			body = body[j+1:]
		}
	}
	return appendCapped(partial[:0], rest)
}

func appendCapped(dst, src []byte) []byte {
	if room := 4096 - len(dst); room > 0 {
		dst = append(dst, src[:min(len(src), room)]...)
	}
	return dst
}

// offer passes one line to the watcher if it may matter, never blocking.
func (w *watch) offer(line []byte, lines chan<- string) {
	if !w.regex && !mayHoldEndpoint(line) {
		return
	}
	select {
	case lines <- string(line):
	default: // the watcher is behind; it needs only the first endpoint
	}
}

// mayHoldEndpoint is a cheap test that text could name a URL or port:
// every form ready.FindEndpoint knows has a ':' or the word "port".
func mayHoldEndpoint(b []byte) bool {
	return bytes.IndexByte(b, ':') >= 0 || bytes.Contains(b, []byte("port")) ||
		bytes.Contains(b, []byte("Port")) || bytes.Contains(b, []byte("PORT"))
}

// tail keeps at least the last 64 KiB of output, for the tail in
// reports: room for a crash's stack of most of svc.StackReach lines.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 64 << 10

// keep adds data to the tail. The buffer is cut back to tailMax only when
// it has grown to twice that, so that a chatty service's every write does
// not move the whole tail.
func (t *tail) keep(data []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(data) >= tailMax {
		t.buf = append(t.buf[:0], data[len(data)-tailMax:]...)
		return
	}
	t.buf = append(t.buf, data...)
	if len(t.buf) > 2*tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
}

// lines returns the last n lines of output.
func (t *tail) lines(n int) []string {
	t.mu.Lock()
	text := string(t.buf)
	full := len(t.buf) >= tailMax
	t.mu.Unlock()
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	all := strings.Split(text, "\n")
	if full && len(all) > 1 {
		all = all[1:] // the first may have been cut
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	for i, l := range all {
		all[i] = svc.ShortLine(l) // as the log's rows are shown
	}
	return all
}
