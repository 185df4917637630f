package project

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// portRef is {port:NAME} in a command or an environment value: the port
// of the service NAME, which the service must depend on.
var portRef = regexp.MustCompile(`\{port:([^{}]*)\}`)

// blockRef is {port+K}: the K-th port of the worktree's block
// (port_block), from 0.
var blockRef = regexp.MustCompile(`\{port\+([0-9]+)\}`)

// check is what holds across services: every dependency exists, its
// condition fits what it names, {port:NAME} names a dependency, and there
// is no cycle.
func (f *File) check() error {
	for _, d := range f.Services {
		for i := range d.Needs {
			n := &d.Needs[i]
			dep := f.Lookup(n.Name)
			if dep == nil {
				return f.errorf(n.Line, "%s depends on %s, which is not defined", d.Name, n.Name)
			}
			if err := f.checkCond(d, n, dep); err != nil {
				return err
			}
		}
		if err := f.checkPortRefs(d); err != nil {
			return err
		}
	}
	if cycle := f.cycle(); cycle != nil {
		first := f.Lookup(cycle[0])
		return f.errorf(first.Needs[0].Line, "dependency cycle: %s", strings.Join(cycle, " -> "))
	}
	return nil
}

func (f *File) checkCond(d *Def, n *Need, dep *Def) error {
	switch {
	case n.Name == d.Name:
		return f.errorf(n.Line, "dependency cycle: %s -> %s", d.Name, d.Name)
	case n.Cond == "" && dep.Oneshot:
		n.Cond = Succeeded
	case n.Cond == "":
		n.Cond = Ready
	case dep.Oneshot && (n.Cond == Ready):
		return f.errorf(n.Line, "%s waits for %s to be ready, but %s is a one-shot: wait for it to have succeeded or completed", d.Name, dep.Name, dep.Name)
	case !dep.Oneshot && (n.Cond == Succeeded || n.Cond == Completed):
		return f.errorf(n.Line, "%s waits for %s to have %s, but %s is not a one-shot (oneshot = true)", d.Name, dep.Name, n.Cond, dep.Name)
	}
	return nil
}

func (f *File) checkPortRefs(d *Def) error {
	for _, kv := range []struct {
		key    string
		values []string
	}{{"command", d.Command}, {"env", d.Env}, {"ready_url", []string{d.ReadyURL}}, {"ready_cmd", []string{d.ReadyCmd}}} {
		key := kv.key
		for _, s := range kv.values {
			for _, m := range blockRef.FindAllStringSubmatch(s, -1) {
				if k, _ := strconv.Atoi(m[1]); k >= f.PortBlock {
					if f.PortBlock == 0 {
						return f.errorf(d.at(key), "%s uses %s but the file reserves no ports (port_block = N)", d.Name, m[0])
					}
					return f.errorf(d.at(key), "%s uses %s but port_block is %d: {port+0} to {port+%d}", d.Name, m[0], f.PortBlock, f.PortBlock-1)
				}
			}
			for _, m := range portRef.FindAllStringSubmatch(s, -1) {
				if !slices.ContainsFunc(d.Needs, func(n Need) bool { return n.Name == m[1] }) {
					return f.errorf(d.at(key), "%s uses %s but does not depend on %s", d.Name, m[0], m[1])
				}
			}
		}
	}
	return nil
}

// cycle is one dependency cycle, as names from a service back to itself,
// or nil when there is none.
func (f *File) cycle() []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(d *Def) []string
	visit = func(d *Def) []string {
		state[d.Name] = onPath
		path = append(path, d.Name)
		for _, n := range d.Needs {
			switch state[n.Name] {
			case onPath:
				i := slices.Index(path, n.Name)
				return append(slices.Clone(path[i:]), n.Name)
			case unseen:
				if c := visit(f.Lookup(n.Name)); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[d.Name] = done
		return nil
	}
	for _, d := range f.Services {
		if state[d.Name] == unseen {
			if c := visit(d); c != nil {
				return c
			}
		}
	}
	return nil
}

// Closure is the named services and everything they depend on, in the
// file's order; no names is every service.
func (f *File) Closure(names []string) ([]*Def, error) {
	if len(names) == 0 {
		return f.Services, nil
	}
	want := map[string]bool{}
	var add func(name string) error
	add = func(name string) error {
		d := f.Lookup(name)
		if d == nil {
			return fmt.Errorf("%s defines no service called %s", f.Path, name)
		}
		if want[name] {
			return nil
		}
		want[name] = true
		for _, n := range d.Needs {
			if err := add(n.Name); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range names {
		if err := add(n); err != nil {
			return nil, err
		}
	}
	var out []*Def
	for _, d := range f.Services {
		if want[d.Name] {
			out = append(out, d)
		}
	}
	return out, nil
}

// Levels orders services for starting: each level needs only what is in
// the levels before it. Stopping goes through them backwards.
func Levels(defs []*Def, needs func(*Def) []string) [][]*Def {
	level := map[string]int{}
	in := map[string]*Def{}
	for _, d := range defs {
		in[d.Name] = d
	}
	var depth func(d *Def) int
	depth = func(d *Def) int {
		if l, ok := level[d.Name]; ok {
			return l
		}
		level[d.Name] = 0 // cycles were refused; this only stops recursion
		l := 0
		for _, n := range needs(d) {
			if dep, ok := in[n]; ok {
				l = max(l, depth(dep)+1)
			}
		}
		level[d.Name] = l
		return l
	}
	var out [][]*Def
	for _, d := range defs {
		l := depth(d)
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], d)
	}
	return out
}

// NeedNames are the names a definition depends on.
func NeedNames(d *Def) []string {
	out := make([]string, len(d.Needs))
	for i, n := range d.Needs {
		out[i] = n.Name
	}
	return out
}
