package svc

import (
	"slices"
	"strconv"
	"strings"
)

// ProxyNames are the names svc proxy answers for, one for each service of
// a home: svc ls, svc env, svc mcp and the proxy itself all take a
// service's name from here, so that it is the same wherever it is shown
// and is where the proxy sends it.
//
// A service's own name mirrors its svc name: NAME.PROJECT.localhost for
// a project's (or a scope's) PROJECT/NAME, NAME.localhost for a plain
// one; no two services have the same. Its short name leaves the project
// out: NAME.localhost in a main checkout or outside git,
// NAME.WORKTREE.localhost in a linked worktree. A service is given its
// short name when no other service would have that name too (short or
// its own) — the one web of the projects of the home stays
// web.localhost — and else its own. A short name two or more services
// would share is Shared: it is none's, and the proxy answers it with a
// page that lists theirs.
//
// Every service the home lists counts, whatever its state and whether it
// answers HTTP or not: a name changes when a service is made or removed,
// never when one starts, stops or becomes ready.
type ProxyNames struct {
	hosts  map[string]string   // service → its name
	shared map[string][]string // a short name → the services that would share it, sorted
}

// NameProxied names the services of rows, which are every service of a
// home (LookAll's).
func NameProxied(rows []*Listing) ProxyNames {
	n := ProxyNames{hosts: map[string]string{}, shared: map[string][]string{}}
	own := map[string][]string{}   // a service's own name → the services it is of
	wants := map[string][]string{} // a short name → the services it is of
	for _, l := range rows {
		if l.Name == ProxyName {
			continue
		}
		o, s := ownHost(l.Name), ProxyHost(l.Name, l.Spec.Worktree)
		own[o] = append(own[o], l.Name)
		if s != o {
			wants[s] = append(wants[s], l.Name)
		}
	}
	for _, l := range rows {
		if l.Name == ProxyName {
			continue
		}
		o, s := ownHost(l.Name), ProxyHost(l.Name, l.Spec.Worktree)
		switch {
		case len(own[o]) > 1:
			// Names that differ only in case or in '_' and '.' against
			// '-': neither is given it.
			n.share(o, own[o])
		case s != o && len(wants[s]) == 1 && len(own[s]) == 0:
			n.hosts[l.Name] = s
		default:
			n.hosts[l.Name] = o
			if s != o && len(wants[s]) > 1 && len(own[s]) == 0 {
				n.share(s, wants[s])
			}
		}
	}
	return n
}

func (n ProxyNames) share(host string, names []string) {
	if _, ok := n.shared[host]; !ok {
		n.shared[host] = slices.Sorted(slices.Values(names))
	}
}

// Host is the name of a service (by its full svc name); "" when it has
// none (ProxyName, or one whose name another shares).
func (n ProxyNames) Host(service string) string { return n.hosts[service] }

// Shared are the short names two or more services would have, each with
// those services' svc names, sorted.
func (n ProxyNames) Shared() map[string][]string { return n.shared }

// ownHost is a service's own name: NAME.PROJECT.localhost for a
// project's or scope's, NAME.localhost for a plain one.
func ownHost(name string) string {
	if p, short, ok := strings.Cut(name, "/"); ok {
		return hostLabel(short) + "." + hostLabel(p) + ".localhost"
	}
	return hostLabel(name) + ".localhost"
}

// hostLabel is a name as part of a host name: lower case, with '_' and
// '.' as '-'.
func hostLabel(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '.' {
			return '-'
		}
		return r
	}, strings.ToLower(name))
}

// ProxyHost is a service's short name (ProxyNames): NAME.WORKTREE.localhost
// for a service of a linked worktree, NAME.localhost for one of a main
// checkout or outside git, NAME being its name within its project or
// scope.
func ProxyHost(name string, wt *WorktreeTag) string {
	if _, short, ok := strings.Cut(name, "/"); ok {
		name = short
	}
	if wt != nil && !wt.Main {
		return hostLabel(name) + "." + wt.Slug + ".localhost"
	}
	return hostLabel(name) + ".localhost"
}

// Proxied is how svc proxy reaches a home's services: its port (0: it is
// not ready) and their names.
type Proxied struct {
	Port  int
	Names ProxyNames
}

// LookProxied is the proxy of home, and when it is ready, the names of
// every service of home.
func LookProxied(home string) Proxied {
	return ProxiedAmong(home, nil)
}

// ProxiedAmong is LookProxied for a caller that has read every service
// of home already (all; nil: it has not).
func ProxiedAmong(home string, all []*Listing) Proxied {
	p := Proxied{Port: ProxyPort(home)}
	if p.Port > 0 {
		if all == nil {
			all, _ = LookAll(home)
		}
		p.Names = NameProxied(all)
	}
	return p
}

// URL is a service's URL through the proxy, when the proxy runs and the
// service is reached over HTTP and has a name there; else "".
func (p Proxied) URL(l *Listing) string {
	if p.Port == 0 || !l.IsHTTP() {
		return ""
	}
	return p.HostURL(p.Names.Host(l.Name))
}

// HostURL is the proxy's URL for a name of it ("" for "").
func (p Proxied) HostURL(host string) string {
	if p.Port == 0 || host == "" {
		return ""
	}
	return "http://" + host + ":" + strconv.Itoa(p.Port) + "/"
}
