package registry

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The files are as homes have them: a project's directory, or "scope:"
// and an owner, each a line; a claim being made is passed over.
func TestClaims(t *testing.T) {
	h := Home{Dir: t.TempDir()}
	name, err := h.ClaimProject("/src/shop", "shop")
	must(t, err)
	must(t, h.ClaimScope("agent", "run-1"))
	must(t, h.ClaimScope("agent", "run-1")) // its owner again
	must(t, os.WriteFile(filepath.Join(h.Dir, ".projects", ".claim-123"), []byte("/half"), 0o600))
	b, _ := os.ReadFile(filepath.Join(h.Dir, ".projects", "agent"))
	if name != "shop" || string(b) != "scope:run-1\n" {
		t.Errorf("claimed %q; the scope's file %q", name, b)
	}
	var taken *ScopeTakenError
	if err := h.ClaimScope("agent", "run-2"); !errors.As(err, &taken) || taken.Holder != "run-1" {
		t.Errorf("another owner: %v", err)
	}
	if err := h.ClaimScope("shop", "run-2"); !errors.As(err, &taken) || taken.Holder != "/src/shop" {
		t.Errorf("a project's name: %v", err)
	}
	cs, err := h.Claims()
	must(t, err)
	want := []Claim{{Name: "agent", Scope: true, Owner: "run-1"}, {Name: "shop", Dir: "/src/shop"}}
	if len(cs) != 2 || cs[0] != want[0] || cs[1] != want[1] {
		t.Errorf("claims %+v", cs)
	}
	must(t, h.Release("agent"))
	if _, ok := h.Lookup("agent"); ok {
		t.Error("a released scope is still claimed")
	}
}

// A port that cannot be listened on now is not in a block.
func TestReservePortsSkipsBusy(t *testing.T) {
	h := Home{Dir: t.TempDir()}
	busy := -1
	w, err := h.ReservePorts(t.TempDir(), 10, func(p int) bool {
		if busy < 0 {
			busy = p // the first port tried
		}
		return p != busy
	})
	must(t, err)
	if busy >= w.PortBase && busy < w.PortBase+10 {
		t.Errorf("block %d+10 holds the busy port %d", w.PortBase, busy)
	}
}
