package ndjson

import (
	"bytes"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// corpusLines is the first 32 MB of the corpus named by
// $NDJSON_BENCH_CORPUS (make bench's, in $BENCH_DIR), cut at a line's
// end; or, without one, lines shaped like its agent corpus. The
// benchmarks below time the walk on it, one line after another, as a
// verb's worker does: go test -bench Corpus -cpuprofile for where the
// time goes.
func corpusLines(b *testing.B) []byte {
	path := os.Getenv("NDJSON_BENCH_CORPUS")
	if path == "" {
		return benchLines(100000)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 32<<20)
	n, _ := f.Read(buf)
	buf = buf[:n]
	for len(buf) > 0 && buf[len(buf)-1] != '\n' {
		buf = buf[:len(buf)-1]
	}
	return buf
}

func benchFind(b *testing.B, path string) {
	data := corpusLines(b)
	var keys []string
	if path != "" {
		keys = strings.Split(path, ".")
	}
	b.SetBytes(int64(len(data)))
	var c Checker
	for b.Loop() {
		for rest := data; len(rest) > 0; {
			var line []byte
			line, rest = Cut(rest)
			if keys == nil {
				if c.Check(line) != Valid {
					b.Fatal("invalid")
				}
			} else if p, _ := c.Find(line, keys); p != Valid {
				b.Fatal("invalid")
			}
		}
	}
}

func BenchmarkCorpusCheck(b *testing.B) { benchFind(b, "") }
func BenchmarkCorpusType(b *testing.B)  { benchFind(b, "type") }
func BenchmarkCorpusPath(b *testing.B) {
	path := os.Getenv("NDJSON_BENCH_PATH")
	if path == "" {
		path = "event.text"
	}
	benchFind(b, path)
}

// threadTime is the CPU time of the calling thread: on a machine others
// load, what a walk costs moves less than its wall time.
func threadTime(t *testing.T) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil && t != nil {
		t.Skip(err)
	}
	return time.Duration(ts.Nano())
}

// TestWalkAB times (in thread CPU time) the walk against the reference walk (valid_ref_test.go,
// the walk before issue 51), interleaved in one process, over 8 MB of
// each of make bench's corpora in $BENCH_DIR, for a check and for a find
// of "type", with the vector marks and with the eight-byte ones: the
// median over rounds of new time / old time, and the ratio of the
// fastest runs, which a machine others load moves least. Run it with NDJSON_AB=1
// (NDJSON_AB_ROUNDS, default 21) and -v.
func TestWalkAB(t *testing.T) {
	if os.Getenv("NDJSON_AB") == "" {
		t.Skip("NDJSON_AB unset")
	}
	rounds := 21
	if n, err := strconv.Atoi(os.Getenv("NDJSON_AB_ROUNDS")); err == nil {
		rounds = n
	}
	dir := os.Getenv("BENCH_DIR")
	if dir == "" {
		dir = "/tmp/agentry-bench"
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, corpus := range []string{"agent-1000000", "traffic-1000000", "dense-1000000", "deep-200000"} {
		data, err := os.ReadFile(dir + "/corpus-" + corpus + ".ndjson")
		if err != nil {
			t.Skip(err)
		}
		data = data[:8<<20]
		data = data[:bytes.LastIndexByte(data, '\n')+1]
		var lines [][]byte
		for rest := data; len(rest) > 0; {
			var line []byte
			line, rest = Cut(rest)
			lines = append(lines, line)
		}
		for _, vector := range []bool{true, false} {
			if vector && !fastUTF8 {
				continue
			}
			for _, find := range []bool{false, true} {
				run := func(ref bool) time.Duration {
					marks := make(Marks, 1<<14)
					start := threadTime(t)
					for _, line := range lines {
						m := marks[:len(line)>>6+1]
						var f *finder
						if find {
							f = &finder{paths: []pathFind{{keys: []string{"type"}}}}
							f.searchAgain()
						}
						switch {
						case vector && markUTF8(line, m):
						case ref:
							refMarkSWAR(line, m)
						default:
							markSWAR(line, m)
						}
						var p Problem
						if ref {
							p = refWalk(line, m, f)
						} else {
							p = walk(line, m, f)
						}
						if p != Valid {
							t.Fatal("invalid")
						}
					}
					return threadTime(t) - start
				}
				var ratios []float64
				bestOld, bestCur := time.Duration(1<<62), time.Duration(1<<62)
				for r := range rounds {
					var old, cur time.Duration
					if r%2 == 0 {
						old, cur = run(true), run(false)
					} else {
						cur, old = run(false), run(true)
					}
					ratios = append(ratios, float64(cur)/float64(old))
					bestOld, bestCur = min(bestOld, old), min(bestCur, cur)
				}
				slices.Sort(ratios)
				t.Logf("%-16s vector=%-5v find=%-5v new/old median %.3f, fastest %.3f (%.0f MB/s)", corpus, vector, find, ratios[len(ratios)/2], float64(bestCur)/float64(bestOld), float64(len(data))/bestCur.Seconds()/1e6)
			}
		}
	}
}

// BenchmarkCorpusMark times the marking alone (the vector pass where the
// CPU has one), line by line.
func BenchmarkCorpusMark(b *testing.B) {
	data := corpusLines(b)
	b.SetBytes(int64(len(data)))
	marks := make(Marks, 1<<14)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var spent time.Duration
	for b.Loop() {
		start := threadTime(nil)
		for rest := data; len(rest) > 0; {
			var line []byte
			line, rest = Cut(rest)
			mark(line, marks[:len(line)>>6+1])
		}
		spent += threadTime(nil) - start
	}
	// On a loaded machine the thread's CPU time says more than the wall's.
	b.ReportMetric(float64(len(data))*float64(b.N)/spent.Seconds()/1e6, "cpuMB/s")
}
