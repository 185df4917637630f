package ndjson

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// fastUTF8 says whether the AVX2 routines below can run, and wideUTF8
// whether the AVX-512 ones can: with VBMI too, which Ice Lake, Zen 4 and
// later have and Skylake-SP and Cascade Lake do not, because there 512-bit
// instructions lower the clock of the whole core, the scalar walk's time
// included. Both are set once, from what the CPU and the OS support (and
// GODEBUG=cpu.avx512f=off or cpu.avx2=off), and never change.
var (
	fastUTF8 = cpu.X86.HasAVX2
	wideUTF8 = fastUTF8 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI && cpu.X86.HasBMI2
)

// markUTF8 tells whether b is valid UTF-8, and fills marks (see Marks)
// with the stops of b, one word per 64 bytes and one for the bytes after
// the last whole 64. Bits past the end of b may be set or left as they
// were: they stand for positions after the end, past a stop that is
// always there. marks must hold len(b)/64+1 words.
func markUTF8(b []byte, marks Marks) bool {
	if wideUTF8 {
		return markUTF8Wide(b, marks)
	}
	return markUTF8Narrow(b, marks)
}

// markUTF8Narrow is markUTF8 with AVX2, 32 bytes at a step: one 32-bit
// mask per 32 bytes, two to a word, in little-endian order.
func markUTF8Narrow(b []byte, marks Marks) bool {
	n := len(b) &^ 31
	_ = marks[len(b)>>6]
	var tail [32]byte
	copy(tail[:], b[n:])
	return markAVX2(b[:n], &tail, (*uint32)(unsafe.Pointer(&marks[0])))
}

// markUTF8Wide is markUTF8 with AVX-512, 64 bytes at a step.
func markUTF8Wide(b []byte, marks Marks) bool {
	_ = marks[len(b)>>6]
	return markAVX512(b, &marks[0])
}

//go:noescape
func markAVX2(b []byte, tail *[32]byte, stops *uint32) bool

//go:noescape
func markAVX512(b []byte, stops *uint64) bool
