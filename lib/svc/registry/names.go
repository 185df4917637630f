package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A project is a directory whose services svc up started, named (by
// lib/svc) the first time: a base name, or that with -2, -3 … when
// another directory already has it — so two checkouts of one project
// (worktrees) never share a service. A scope of svc mcp is a name its
// owner claimed. Both are files of HOME/.projects, one a name: a
// project's holds its directory, a scope's "scope:" and its owner, each
// with a newline.

// scopePrefix starts the file of a scope's name.
const scopePrefix = "scope:"

// Claim is one name the home has given.
type Claim struct {
	Name  string
	Scope bool   // a scope's; else a project's
	Dir   string // a project's directory
	Owner string // a scope's owner
}

// holder is who has the claim: a project's directory, or a scope's owner.
func (c Claim) holder() string {
	if c.Scope {
		return c.Owner
	}
	return c.Dir
}

// ScopeTakenError is a scope's name that a project's directory or another
// owner's scope holds.
type ScopeTakenError struct {
	Name   string
	Holder string // a project's directory, or the other scope's owner
}

func (e *ScopeTakenError) Error() string {
	return fmt.Sprintf("the name %s is taken by %s", e.Name, e.Holder)
}

func (h Home) namesDir() string { return filepath.Join(h.Dir, ".projects") }

// parseClaim reads a name's file.
func parseClaim(name string, b []byte) Claim {
	s := strings.TrimSuffix(string(b), "\n")
	if owner, ok := strings.CutPrefix(s, scopePrefix); ok {
		return Claim{Name: name, Scope: true, Owner: owner}
	}
	return Claim{Name: name, Dir: s}
}

// Lookup is the claim of name; ok is false when it has none, or its file
// cannot be read.
func (h Home) Lookup(name string) (c Claim, ok bool) {
	b, err := os.ReadFile(filepath.Join(h.namesDir(), name))
	if err != nil {
		return Claim{}, false
	}
	return parseClaim(name, b), true
}

// Claims are every name the home has given, in the order of their files'
// names; a file that cannot be read is passed over.
func (h Home) Claims() ([]Claim, error) {
	entries, err := os.ReadDir(h.namesDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Claim
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // a claim being made (claimName's temporary file)
		}
		if c, ok := h.Lookup(e.Name()); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// FindProject is the name dir's project has, or "" when none was
// claimed for it. dir must be absolute.
func (h Home) FindProject(dir string) (string, error) {
	claims, err := h.Claims()
	for _, c := range claims {
		if !c.Scope && c.Dir == dir {
			return c.Name, nil
		}
	}
	return "", err
}

// ClaimProject is the name of the project in dir (absolute), claimed for
// it on first use: base, else base-2, base-3 … the first no other
// directory or scope has.
func (h Home) ClaimProject(dir, base string) (string, error) {
	if name, err := h.FindProject(dir); err != nil || name != "" {
		return name, err
	}
	if err := h.makeNamesDir(); err != nil {
		return "", err
	}
	for i := 1; i < 10000; i++ {
		name := base
		if i > 1 {
			name = base + "-" + strconv.Itoa(i)
		}
		ok, err := h.claimName(name, dir)
		if err != nil || ok {
			return name, err
		}
	}
	return "", fmt.Errorf("no free project name for %s", dir)
}

// ClaimScope claims name for a scope owned by owner, unless a project's
// directory or another owner's scope has it (a *ScopeTakenError); the
// same owner may claim it again. lib/svc checks the name.
func (h Home) ClaimScope(name, owner string) error {
	if err := h.makeNamesDir(); err != nil {
		return err
	}
	ok, err := h.claimName(name, scopePrefix+owner)
	if err == nil && !ok {
		c, _ := h.Lookup(name)
		err = &ScopeTakenError{Name: name, Holder: c.holder()}
	}
	return err
}

// Release gives a project's or scope's name back.
func (h Home) Release(name string) error {
	return os.Remove(filepath.Join(h.namesDir(), name))
}

// makeNamesDir makes .projects, the home made ready first.
func (h Home) makeNamesDir() error {
	if err := h.ready(); err != nil {
		return err
	}
	return os.MkdirAll(h.namesDir(), 0o700)
}

// claimName gives name to whoever held says (a directory, or a scope's
// owner) unless another has it. The name's file appears whole or not at
// all (a hard link of a written file), so a concurrent claim never reads
// half of it.
func (h Home) claimName(name, held string) (bool, error) {
	f, err := os.CreateTemp(h.namesDir(), ".claim-")
	if err != nil {
		return false, err
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(held + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	err = os.Link(f.Name(), filepath.Join(h.namesDir(), name))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return false, err
	}
	was, err := os.ReadFile(filepath.Join(h.namesDir(), name))
	return err == nil && strings.TrimSuffix(string(was), "\n") == held, err
}
