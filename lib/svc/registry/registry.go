// Package registry is the one reader and writer of a state home's
// registries: what svc keeps of places rather than of services.
//
//   - HOME/.worktrees.json, changed only under HOME/.worktrees.lock: each
//     git worktree svc has met, with its slot (unique among the live
//     worktrees of its repository: the main checkout 0, the others from
//     1), its slug (a DNS label unique among all it holds) and the block
//     of ports it reserved. An entry lives until svc gc forgets it, so
//     the slot, slug and block stay the worktree's while it exists.
//   - HOME/.projects/NAME, one file a claimed name: a project's directory
//     (svc up's), or "scope:OWNER" for a scope of svc mcp. A name's file
//     appears whole or not at all.
//
// It knows nothing of services: lib/svc decides what a name may be, when
// the home may be written in (Home.Ready) and when an entry is forgotten
// (svc gc); this package keeps the files and their formats, which
// existing homes have, as they are.
package registry

// Home is one state home's registries.
type Home struct {
	Dir string
	// Ready is called before anything is written in Dir: it makes the
	// directory when need be and refuses one that may not be used
	// (lib/svc's check of the home). Nil: Dir is used as it is.
	Ready func() error
}

func (h Home) ready() error {
	if h.Ready == nil {
		return nil
	}
	return h.Ready()
}
