package ndjson

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// fastUTF8 says whether the AVX2 routines below can run. It is set once,
// from what the CPU and the OS support, and never changes.
var fastUTF8 = cpu.X86.HasAVX2

// markUTF8 tells whether b is valid UTF-8, 32 bytes at a step, and fills
// marks (see Marks) with one 32-bit mask per 32 bytes of b, and one for
// the bytes after the last whole 32 — two to a word, in little-endian order, so that word w covers bytes 64w
// to 64w+63. Bits past those of the last block are left as they were: they
// stand for positions after the end, past a stop that is always there.
// marks must hold len(b)/64+1 words.
func markUTF8(b []byte, marks Marks) bool {
	n := len(b) &^ 31
	_ = marks[len(b)>>6]
	var tail [32]byte
	copy(tail[:], b[n:])
	return markAVX2(b[:n], &tail, (*uint32)(unsafe.Pointer(&marks[0])))
}

//go:noescape
func markAVX2(b []byte, tail *[32]byte, stops *uint32) bool
