package registry

import (
	"fmt"
	"hash/fnv"
)

// The range port blocks are taken from: below lib/svc's PortAuto picks
// (BlockPortHigh on), so that a block and a port picked alone never
// meet.
const (
	BlockPortLow  = 10000
	BlockPortHigh = 20000
)

// ReservePorts gives the worktree of dir (or dir itself, outside git) a
// block of n consecutive ports (lib/svc checks n, and words it), the
// same for as long as it is listed, and returns it. Ports another
// worktree reserved, or that free says cannot be listened on now, are
// not given; a block reserved before with another size is given again.
func (h Home) ReservePorts(dir string, n int, free func(port int) bool) (*Worktree, error) {
	if n < 1 || n > BlockPortHigh-BlockPortLow {
		return nil, fmt.Errorf("a block of %d ports cannot be given", n)
	}
	top, repo, main, ok := FindGit(dir)
	if !ok {
		top, main = dir, true
	}
	var out *Worktree
	err := h.editWorktrees(func(ws []Worktree) ([]Worktree, error) {
		ws, i := claimWorktree(ws, top, repo, main)
		if ws[i].PortBlock != n {
			base, err := pickBlock(ws, i, n, free)
			if err != nil {
				return nil, err
			}
			ws[i].PortBase, ws[i].PortBlock = base, n
		}
		w := ws[i]
		out = &w
		return ws, nil
	})
	return out, err
}

// pickBlock finds n free ports in a row for ws[i]: from a place its top
// directory hashes to, on by whole blocks.
func pickBlock(ws []Worktree, i, n int, free func(int) bool) (int, error) {
	h := fnv.New32a()
	h.Write([]byte(ws[i].Top))
	count := (BlockPortHigh - BlockPortLow) / n
	first := int(h.Sum32() % uint32(count))
	for k := range count {
		base := BlockPortLow + ((first+k)%count)*n
		if blockFree(ws, i, base, n, free) {
			return base, nil
		}
	}
	return 0, fmt.Errorf("no %d free ports in a row between %d and %d", n, BlockPortLow, BlockPortHigh)
}

// blockFree reports whether the n ports from base are no other
// worktree's and free now.
func blockFree(ws []Worktree, i, base, n int, free func(int) bool) bool {
	for j, o := range ws {
		if j != i && o.PortBlock > 0 && base < o.PortBase+o.PortBlock && o.PortBase < base+n {
			return false
		}
	}
	for p := base; p < base+n; p++ {
		if !free(p) {
			return false
		}
	}
	return true
}
