package svccmd

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/svc"
)

// mergeOneByOne is the order merge keeps, a row at a time: the service
// whose current row is earliest, the first listed on a tie; a row with
// no time goes at its service's previous one.
func mergeOneByOne(logs [][]svc.Row, names []string, p *rowPrinter) {
	at := make([]time.Time, len(logs))
	idx := make([]int, len(logs))
	for {
		pick := -1
		for i, l := range logs {
			if idx[i] == len(l) {
				continue
			}
			if t := l[idx[i]].At; !t.IsZero() {
				at[i] = t
			}
			if pick < 0 || at[i].Before(at[pick]) {
				pick = i
			}
		}
		if pick < 0 {
			return
		}
		p.print(names[pick], logs[pick][idx[pick]])
		idx[pick]++
	}
}

// feed is a service's rows as merge's reader would hand them over, in
// batches of at most size.
func feed(rows []svc.Row, size int) *batches {
	ch := make(chan *rowBatch, len(rows)/size+1)
	for i := 0; i < len(rows); i += size {
		ch <- &rowBatch{rows: rows[i:min(i+size, len(rows))]}
	}
	close(ch)
	return &batches{ch: ch, free: make(chan *rowBatch, 2)}
}

// Runs of rows, across batches, ties and rows without a time, print in
// the order of one row at a time.
func TestMergeRunsKeepsTheOrder(t *testing.T) {
	base := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		k := 1 + r.IntN(5)
		logs, names := make([][]svc.Row, k), make([]string, k)
		for i := range k {
			names[i] = "s" + strconv.Itoa(i)
			tick := r.IntN(3)
			for n := range r.IntN(40) {
				tick += r.IntN(3) // the same time again, often
				row := svc.Row{N: int64(n + 1), Line: []byte(names[i] + "-" + strconv.Itoa(n+1))}
				if r.IntN(4) > 0 {
					row.At = base.Add(time.Duration(tick) * time.Millisecond)
				}
				logs[i] = append(logs[i], row)
			}
		}
		var want, got bytes.Buffer
		pw := &rowPrinter{w: bufio.NewWriter(&want), names: true, width: 2}
		mergeOneByOne(logs, names, pw)
		pw.flush()
		ss := make([]*batches, k)
		for i := range k {
			ss[i] = feed(logs[i], 1+r.IntN(6))
		}
		pg := &rowPrinter{w: bufio.NewWriter(&got), names: true, width: 2}
		last, err := mergeRuns(ss, names, make([]int64, k), pg)
		pg.flush()
		if err != nil || got.String() != want.String() {
			t.Fatalf("seed %d: %v\ngot:\n%s\nwant:\n%s", seed, err, got.String(), want.String())
		}
		for i := range k {
			if n := int64(len(logs[i])); last[i] != n {
				t.Errorf("seed %d: last row of %s %d, want %d", seed, names[i], last[i], n)
			}
		}
	}
}
