package ndjson

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// event is what a Reader produced: a line or a skipped line.
type event struct {
	line    int64
	text    string
	skipped int64 // size, when the line was skipped
}

func readAll(t testing.TB, r io.Reader, max int) ([]event, error) {
	t.Helper()
	rd := NewReader(r, max)
	var out []event
	for {
		line, err := rd.Next()
		var tl *TooLongError
		switch {
		case errors.As(err, &tl):
			if tl.Line != rd.Line() {
				t.Fatalf("TooLongError line %d, Reader.Line %d", tl.Line, rd.Line())
			}
			out = append(out, event{line: tl.Line, skipped: tl.Size})
		case err == io.EOF:
			return out, nil
		case err != nil:
			return out, err
		default:
			out = append(out, event{line: rd.Line(), text: string(line)})
		}
	}
}

// model is the framing rules written the obvious way.
func model(data []byte, max int) []event {
	data = bytes.TrimPrefix(data, bom)
	if len(data) == 0 {
		return nil
	}
	parts := bytes.Split(data, []byte{'\n'})
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1]
	}
	var out []event
	for i, p := range parts {
		n := int64(i + 1)
		if len(p) > max {
			out = append(out, event{line: n, skipped: int64(len(p))})
			continue
		}
		out = append(out, event{line: n, text: string(bytes.TrimSuffix(p, []byte{'\r'}))})
	}
	return out
}

func TestReaderFraming(t *testing.T) {
	cases := []struct {
		name, in string
		max      int
	}{
		{"empty", "", 100},
		{"lf", "{\"a\":1}\n{\"b\":2}\n", 100},
		{"crlf", "{\"a\":1}\r\n{\"b\":2}\r\n", 100},
		{"no final newline", "{\"a\":1}\n{\"b\":2}", 100},
		{"blank lines", "\n\n{}\n\n", 100},
		{"unicode separators stay inside a line", "{\"t\":\"a\u2028b\u2029c\"}\n{}\n", 100},
		{"bom", "\xef\xbb\xbf{}\n{}\n", 100},
		{"over-long in the middle", "{}\n" + strings.Repeat("x", 50) + "\n{}\n", 10},
		{"over-long at the end without newline", "{}\n" + strings.Repeat("x", 50), 10},
		{"exactly the cap", strings.Repeat("y", 10) + "\n" + strings.Repeat("z", 11) + "\n", 10},
		{"nul bytes", "{\"a\":\"\x00\"}\n", 100},
		{"many long lines", strings.Repeat(strings.Repeat("q", 30)+"\n", 20), 10},
	}
	for _, c := range cases {
		for _, wrap := range []struct {
			name string
			f    func(io.Reader) io.Reader
		}{{"whole", func(r io.Reader) io.Reader { return r }}, {"onebyte", iotest.OneByteReader}, {"half", iotest.HalfReader}} {
			t.Run(c.name+"/"+wrap.name, func(t *testing.T) {
				got, err := readAll(t, wrap.f(strings.NewReader(c.in)), c.max)
				if err != nil {
					t.Fatal(err)
				}
				want := model([]byte(c.in), c.max)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("got  %v\nwant %v", got, want)
				}
			})
		}
	}
}

// An over-long line is never held whole: memory stays near the cap even
// for a line a hundred times larger.
func TestReaderDoesNotHoldLongLine(t *testing.T) {
	const max = 1 << 16
	huge := io.MultiReader(strings.NewReader("{}\n"), io.LimitReader(infinite('x'), 100*max), strings.NewReader("\n{\"after\":true}\n"))
	c := NewChunker(huge, max)
	largest := 0
	var seen []string
	forChunks(t, c, func(ch *Chunk) {
		if cap(ch.buf) > largest {
			largest = cap(ch.buf)
		}
		if ch.Skipped != nil {
			seen = append(seen, fmt.Sprintf("skip %d", ch.Skipped.Size))
		}
		for rest := ch.Data; len(rest) > 0; {
			var line []byte
			line, rest = Cut(rest)
			seen = append(seen, string(line))
		}
	})
	if largest > max+1 || cap(c.carry) > 2*max {
		t.Errorf("held %d bytes (carry %d) for a cap of %d", largest, cap(c.carry), max)
	}
	if want := fmt.Sprint([]string{"{}", fmt.Sprintf("skip %d", 100*max), `{"after":true}`}); fmt.Sprint(seen) != want {
		t.Errorf("got %v, want %v", seen, want)
	}
}

type infinite byte

func (b infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("{}\n{\"x\":1}\n"), iotest.ErrReader(boom))
	got, err := readAll(t, r, 100)
	if !errors.Is(err, boom) || len(got) != 2 {
		t.Fatalf("got %v, %v; want two lines then boom", got, err)
	}
}

func TestWriterWholeLines(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if err := w.Encode(map[string]any{"g": g, "i": i, "pad": strings.Repeat("p", 100)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 1600 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if Check([]byte(l)) != Valid {
			t.Fatalf("torn line %q", l)
		}
	}
	if err := w.WriteLine([]byte("a\nb")); !errors.Is(err, ErrEmbeddedNewline) {
		t.Errorf("embedded newline: %v", err)
	}
}

func TestEachKeepsOrder(t *testing.T) {
	var in strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&in, "{\"i\":%d}\n", i)
	}
	c := NewChunker(iotest.HalfReader(strings.NewReader(in.String())), 0)
	var out bytes.Buffer
	err := Each(context.Background(), c, 4, func(ch *Chunk) []byte {
		return append([]byte(nil), ch.Data...)
	}, func(ch *Chunk, b []byte) error {
		out.Write(b)
		c.Release(ch)
		return nil
	})
	if err != nil || out.String() != in.String() {
		t.Fatalf("err %v, output differs: %d vs %d bytes", err, out.Len(), in.Len())
	}
}

func TestEachStopsOnContext(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		pw.Write([]byte("{}\n"))
	}()
	err := Each(ctx, NewChunker(pr, 0), 2, func(*Chunk) int { return 0 }, func(*Chunk, int) error {
		cancel() // the read after this one blocks forever
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// FuzzReader checks the Reader against the model, with tiny caps, reads
// of every size, and readers that say they have more ready or not.
func FuzzReader(f *testing.F) {
	f.Add([]byte("{}\n{\"a\":1}\r\n\xef\xbb\xbf\n"), uint8(4), uint8(1))
	f.Add([]byte("\xef\xbb\xbf{\"t\":\"\u2028\"}\nxxxxxxxxxxxxxxxx\nend"), uint8(8), uint8(3))
	f.Add([]byte("\n\n\r\n"), uint8(1), uint8(2))
	f.Add([]byte("{}\n{\"a\":1}\r\nxxxxxxxxxxxx\n\xef\xbb\xbf\nend"), uint8(6), uint8(255))
	f.Add([]byte("ab\ncd\nefghijklmnop\nq\n"), uint8(4), uint8(130))
	f.Fuzz(func(t *testing.T, data []byte, max, step uint8) {
		m := int(max%32) + 1
		var r io.Reader = bytes.NewReader(data)
		switch step % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		if step >= 128 {
			// A reader that says, now and then, that it has more ready:
			// the Chunker fills a chunk across its reads.
			r = &readyReader{r: r, pattern: step}
		}
		got, err := readAll(t, r, m)
		if err != nil {
			t.Fatal(err)
		}
		if want := model(data, m); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("max %d\ngot  %v\nwant %v", m, got, want)
		}
	})
}

func TestLinesSkipsOverLongLinesAndStopsWhenAsked(t *testing.T) {
	in := "one\n" + strings.Repeat("x", 100) + "\ntwo\nthree\nfour\n"
	var got []string
	var skipped []int64
	err := Lines(strings.NewReader(in), 64, func(e *TooLongError) { skipped = append(skipped, e.Line) }, func(l []byte) bool {
		got = append(got, string(l))
		return len(got) < 3
	})
	if err != nil || strings.Join(got, ",") != "one,two,three" || len(skipped) != 1 || skipped[0] != 2 {
		t.Fatalf("got %q, skipped %v, err %v", got, skipped, err)
	}
	if err := Lines(iotest.ErrReader(io.ErrUnexpectedEOF), 0, nil, func([]byte) bool { return true }); err != io.ErrUnexpectedEOF {
		t.Fatalf("a read error: %v", err)
	}
}

// readyReader reads r and says it has more ready by the bits of pattern,
// one a call, over and over.
type readyReader struct {
	r       io.Reader
	pattern uint8
	calls   int
}

func (r *readyReader) Read(p []byte) (int, error) { return r.r.Read(p) }

func (r *readyReader) Ready() bool {
	r.calls++
	return r.pattern>>(r.calls%8)&1 != 0
}

// TestChunkerFillsWhileReady: lines that come a few bytes a read make
// one chunk while the reader has more ready, and a chunk a read when it
// has not (a slow writer's lines are passed on as they come).
func TestChunkerFillsWhileReady(t *testing.T) {
	in := strings.Repeat("{\"a\":1}\n", 1000)
	for _, ready := range []bool{true, false} {
		var r io.Reader = iotest.OneByteReader(strings.NewReader(in))
		if ready {
			r = &readyReader{r: r, pattern: 0xff}
		} else {
			r = &readyReader{r: r}
		}
		c := NewChunker(r, 0)
		var chunks []int
		var got strings.Builder
		forChunks(t, c, func(ch *Chunk) {
			chunks = append(chunks, len(ch.Data))
			got.Write(ch.Data)
		})
		if got.String() != in {
			t.Fatalf("ready %v: the chunks do not add up to the input", ready)
		}
		if ready && len(chunks) != 1 || !ready && len(chunks) < 10 {
			t.Fatalf("ready %v: %d chunks, of %v bytes", ready, len(chunks), chunks[:min(len(chunks), 10)])
		}
	}
}

// oddReader reads data in pieces of random sizes, now and then returns
// 0, nil, may return the last piece with its final error, and says at
// random whether it has more ready.
type oddReader struct {
	data    []byte
	rnd     *rand.Rand
	piece   int
	final   error
	readyIn int // of 100
}

func (r *oddReader) Read(p []byte) (int, error) {
	if r.rnd.Intn(5) == 0 {
		return 0, nil
	}
	if len(r.data) == 0 {
		return 0, r.final
	}
	n := min(1+r.rnd.Intn(r.piece), len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	if len(r.data) == 0 && r.rnd.Intn(2) == 0 {
		return n, r.final
	}
	return n, nil
}

func (r *oddReader) Ready() bool { return r.rnd.Intn(100) < r.readyIn }

var errMidStream = errors.New("the disk went away")

// FuzzChunkerReads checks the framing against the model over readers
// that FuzzReader's do not cover: 0, nil reads, data and the end in one
// read, a read error in place of the end (it comes after every line
// before it), and Ready at random.
func FuzzChunkerReads(f *testing.F) {
	f.Add([]byte("ab\ncd\nefghijklmnop\nq"), uint8(4), int64(1), uint8(3), false)
	f.Add([]byte("\xef\xbb\xbf{}\n\r\n{\"a\":1}\r\nxxxxxxxxxxxxxxxxxxxx\n"), uint8(8), int64(7), uint8(40), true)
	f.Fuzz(func(t *testing.T, data []byte, max uint8, seed int64, piece uint8, fail bool) {
		m := int(max%40) + 1
		final := io.EOF
		if fail {
			final = errMidStream
		}
		rnd := rand.New(rand.NewSource(seed))
		r := &oddReader{data: data, rnd: rnd, piece: int(piece%64) + 1, final: final, readyIn: rnd.Intn(101)}
		got, err := readAll(t, r, m)
		if fail && err != errMidStream || !fail && err != nil {
			t.Fatalf("err %v", err)
		}
		if want := model(data, m); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("max %d\ngot  %v\nwant %v", m, got, want)
		}
	})
}

// forChunks runs fn on each chunk c reads, to the end of the stream.
func forChunks(t *testing.T, c *Chunker, fn func(*Chunk)) {
	t.Helper()
	for {
		ch, err := c.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(ch)
	}
}
