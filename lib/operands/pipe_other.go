//go:build !linux

package operands

import "io"

// pipeBuffer cannot tell a pipe's buffer here: none is grown.
func pipeBuffer(f io.Reader) int { return 0 }

// growPipe leaves a pipe as it is where its buffer cannot be asked for.
func growPipe(f io.Reader) {}

// waiting cannot tell here: a pipe's lines are passed on read by read.
func waiting(f io.Reader) bool { return false }
