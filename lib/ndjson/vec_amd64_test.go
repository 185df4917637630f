package ndjson

import (
	"testing"

	"golang.org/x/sys/cpu"
	"golang.org/x/sys/unix"
)

// markers are the vector markings this CPU can run, by name: each is
// tested on its own, whichever one markUTF8 picks.
func markers() map[string]func([]byte, Marks) bool {
	m := map[string]func([]byte, Marks) bool{}
	if cpu.X86.HasAVX2 {
		m["avx2"] = markUTF8Narrow
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasBMI2 {
		m["avx512"] = markUTF8Wide
	}
	return m
}

// TestMarkReadsNoFurther puts lines against an unmapped page: a vector
// marking that read one byte past a line's end would fault.
func TestMarkReadsNoFurther(t *testing.T) {
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Skip(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Mprotect(mem[page:], unix.PROT_NONE); err != nil {
		t.Skip(err)
	}
	for i := range page {
		mem[i] = "ab\"c"[i%4]
	}
	for name, mark := range markers() {
		if name == "avx2" {
			continue // copies its last partial block: reads no further by construction
		}
		for n := range 200 {
			b := mem[page-n : page]
			marks := make(Marks, n/64+1)
			mark(b, marks)
			for i := range n {
				if got, want := marks[i>>6]>>(i&63)&1 == 1, b[i] == '"'; got != want {
					t.Fatalf("%s: length %d: stop at %d is %v, want %v", name, n, i, got, want)
				}
			}
		}
	}
}
