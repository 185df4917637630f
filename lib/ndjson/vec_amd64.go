package ndjson

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// fastUTF8 says whether the AVX2 routines below can run. It is set once,
// from what the CPU and the OS support, and never changes.
var fastUTF8 = cpu.X86.HasAVX2

// validUTF8 tells whether b is valid UTF-8, 32 bytes at a step. Call it
// only when fastUTF8 is true.
func validUTF8(b []byte) bool {
	n := len(b) &^ 31
	var tail [32]byte // zeros after the end: ASCII, so a cut-off sequence shows
	copy(tail[:], b[n:])
	return validUTF8AVX2(b[:n], &tail)
}

// markUTF8 is validUTF8 that also fills marks (see Marks) with one 32-bit
// mask per 32 bytes of b, and one for the bytes after the last whole 32 —
// two to a word, in little-endian order, so that word w covers bytes 64w
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

// validUTF8AVX2 checks b, whose length is a multiple of 32, then the 32
// bytes of tail as if they followed it.
//
//go:noescape
func validUTF8AVX2(b []byte, tail *[32]byte) bool

// scanString returns the index of the first byte at or after i that is
// '"', a control byte, or a backslash that does not start a two-byte escape,
// stepping over two-byte escapes; len(b) when there is none. len(b) must be
// at least 32. Call it only when fastUTF8 is true.
//
//go:noescape
func scanString(b []byte, i int) int
