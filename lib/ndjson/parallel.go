package ndjson

import (
	"context"
	"io"
	"runtime"
)

// Each hands every chunk the Chunker reads to work, on up to workers
// goroutines at once (GOMAXPROCS when workers <= 0), and passes each chunk
// with its result to emit on the calling goroutine, in input order. Memory
// stays bounded: at most a few chunks per worker are in flight.
//
// Each returns when the stream ends (nil), when emit returns an error (that
// error), when a read fails (the read error, after every chunk before it
// was emitted), or when ctx is done (its error) — at once, even if a read is
// blocked; that read's goroutine then ends when the read returns.
// emit should Release the chunk when done with it.
func Each[R any](ctx context.Context, c *Chunker, workers int, work func(*Chunk) R, emit func(*Chunk, R) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type job struct {
		ch  *Chunk
		res chan R
	}
	jobs := make(chan job, workers)
	order := make(chan job, 2*workers+2)
	quit := make(chan struct{})
	defer close(quit)
	readErr := make(chan error, 1)

	go func() {
		defer close(jobs)
		defer close(order)
		for {
			ch, err := c.Next()
			if ch != nil {
				j := job{ch: ch, res: make(chan R, 1)}
				select {
				case order <- j:
				case <-quit:
					return
				}
				select {
				case jobs <- j:
				case <-quit:
					return
				}
			}
			if err != nil {
				if err != io.EOF {
					readErr <- err
				}
				return
			}
		}
	}()
	for range workers {
		go func() {
			for j := range jobs {
				j.res <- work(j.ch)
			}
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case j, ok := <-order:
			if !ok {
				select {
				case err := <-readErr:
					return err
				default:
					return nil
				}
			}
			var r R
			select {
			case r = <-j.res:
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := emit(j.ch, r); err != nil {
				return err
			}
		}
	}
}
