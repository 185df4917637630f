package extsort

import "golang.org/x/sys/unix"

// newArena is memory for the records held, n bytes of capacity, outside
// the Go heap: anonymous pages, asked to be huge ones. A sort holds the
// whole budget's worth of records at once, and touching it a 4 KiB page
// at a time cost a page fault each (66,000 for a 256 MiB sort, a third of
// its time in a virtual machine); nothing in it is a pointer, so the
// collector need not see it. free gives it back; nil when it could not be
// had, and the caller makes it on the heap.
func newArena(n int) (mem []byte, free func()) {
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, nil
	}
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // a hint: without it, small pages
	return mem[:0], func() { _ = unix.Munmap(mem) }
}
