//go:build !linux

package extsort

// newArena makes nothing here: the arena is made on the heap.
func newArena(n int) (mem []byte, free func()) { return nil, nil }
