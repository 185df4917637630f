package svc

import (
	"slices"
	"strconv"
	"strings"

	"github.com/agentry/agentry/lib/svc/registry"
)

// ProxyName is the service svc proxy runs as: one per state home.
const ProxyName = "svc-proxy"

// DefaultProxyPort is the port svc proxy listens on unless told.
const DefaultProxyPort = 7780

// ProxyPort is the port of the proxy when it is ready, else 0.
func ProxyPort(home string) int {
	l, err := Look(Dir{Home: home, Name: ProxyName})
	if err != nil || l.Status != Ready {
		return 0
	}
	if l.Spec.Port > 0 {
		return l.Spec.Port
	}
	return l.Port
}

// IsHTTP reports whether a service is reached over HTTP: it was found
// ready at an http URL, or its readiness is one.
func (l *Listing) IsHTTP() bool {
	return strings.HasPrefix(l.URL, "http://") || strings.HasPrefix(l.Spec.ReadyURL, "http://")
}

// EnvVar is one line of svc env.
type EnvVar struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Env is what svc env prints: SVC_WORKTREE and SVC_SLOT for the worktree
// (when wt is not nil), then for each service that has a port, PORT_NAME
// and, for one reached over HTTP, NAME_URL — the proxy's URL when it
// runs, else the service's own. NAME is the service's name within its
// project, upper case, other characters than letters and digits '_'.
func Env(home string, wt *registry.Worktree, rows []*Listing) []EnvVar {
	var out []EnvVar
	if wt != nil {
		out = append(out, EnvVar{"SVC_WORKTREE", wt.Slug}, EnvVar{"SVC_SLOT", strconv.Itoa(wt.Slot)})
		if wt.PortBlock > 0 {
			out = append(out, EnvVar{"SVC_PORT_BASE", strconv.Itoa(wt.PortBase)})
		}
	}
	proxy := LookProxied(home)
	for _, l := range rows {
		port, err := Port(Dir{Home: home, Name: l.Name})
		if err != nil || !l.Status.Live() {
			continue
		}
		key := envKey(l.Name)
		out = append(out, EnvVar{"PORT_" + key, strconv.Itoa(port)})
		if u := proxy.URL(l); u != "" {
			out = append(out, EnvVar{key + "_URL", u})
		} else if l.IsHTTP() && l.URL != "" {
			out = append(out, EnvVar{key + "_URL", l.URL})
		}
	}
	return out
}

// reachedOn is the port a program reaches a service on: the one it was
// given, unless it was found listening elsewhere only (a dev server that
// reads no $PORT), where it listens.
func reachedOn(l *Listing, given int) int {
	if l.Port > 0 && !l.PortPreoccupied && !slices.Contains(l.Ports, given) {
		return l.Port
	}
	return given
}

// envKey is a service's name as part of a variable's name.
func envKey(name string) string {
	if _, short, ok := strings.Cut(name, "/"); ok {
		name = short
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}
