// Package proxy is svc proxy's server: an HTTP reverse proxy on loopback
// that answers each service's name (svc.ProxyNames: NAME.localhost,
// NAME.WORKTREE.localhost in a linked worktree, NAME.PROJECT.localhost
// when two projects have a NAME) with that service, WebSocket upgrades
// included, so that a service's URL stays the same whichever port it was
// given; a name two services would share lists theirs. Its routes
// are the state home's services, read again when a name is unknown or
// not ready, and at most every half second otherwise; a service that is
// not ready is answered at once with a page that says so, never held.
//
// It is on loopback, where every local user reaches it, so it keeps to
// this user's: a backend connection whose far end is another user's
// socket (a port the service let go of, taken) is closed before a byte
// is sent, and answered 502; a user's connections are capped (Limits),
// and its list of names is served only to a loopback Host, never to a
// page that a rebound DNS name brought here.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/svc"
)

// Proxy routes requests by their host name to the services under Home.
type Proxy struct {
	Home string
	// Limits are those of the connections it takes; New gives the
	// defaults.
	Limits Limits

	euid      uint32 // this user: whose connections count only in all, whose sockets (or root's) a backend's may be
	transport *http.Transport
	mu        sync.Mutex
	routes    map[string]*route
	read      time.Time // when routes were read
	reading   bool      // a background read is under way
}

// route is one service the proxy answers for.
type route struct {
	host    string
	service string
	status  svc.Status
	target  *url.URL // nil when not ready
	rp      *httputil.ReverseProxy
	// A name two or more services would share is none's: shared are
	// their svc names, choices their own names (ProxyNames).
	shared, choices []string
}

// The ages of the routes: read again in the background past stale, and
// at once for an unknown or not-ready name, at most every minRead.
const (
	stale   = 500 * time.Millisecond
	minRead = 100 * time.Millisecond
)

// Limits bound what the proxy's clients hold: connections, and how long
// one may sit idle or take to send its header.
type Limits struct {
	// MaxConns is the most connections open at once; one more is closed
	// as soon as it is accepted.
	MaxConns int
	// MaxConnsPerPeer is the most open at once from one other user of
	// this machine (by the uid of the socket it connects from), or from
	// one address when its user cannot be known; this user's own count
	// only toward MaxConns.
	MaxConnsPerPeer int
	// IdleTimeout closes a kept-alive connection with no request for
	// that long.
	IdleTimeout time.Duration
	// ReadHeaderTimeout is how long a request's header may take to come.
	ReadHeaderTimeout time.Duration
}

// DefaultLimits are New's: well over what a browser opens (Chrome holds
// at most 256 sockets, 6 a host), well under a process's descriptors
// (each connection may hold one to its service too).
func DefaultLimits() Limits {
	return Limits{MaxConns: 1024, MaxConnsPerPeer: 128, IdleTimeout: time.Minute, ReadHeaderTimeout: 10 * time.Second}
}

// New is a proxy for the services under home.
func New(home string) *Proxy {
	p := &Proxy{Home: home, Limits: DefaultLimits(), euid: uint32(os.Geteuid())}
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	p.transport = &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if err := p.checkBackend(c); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		},
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}
	return p
}

// StrangerError is a backend connection that reached a socket of another
// user: the service's port is held by someone else's listener now.
type StrangerError struct {
	Addr string
	UID  uint32 // the listener's user
}

func (e *StrangerError) Error() string {
	return fmt.Sprintf("%s is another user's (uid %d), not this service's", e.Addr, e.UID)
}

// checkBackend lets a new backend connection be used only when its far
// end is this user's socket, or root's; a pooled connection was checked
// when it was made.
func (p *Proxy) checkBackend(c net.Conn) error {
	uid, err := peerUID(c)
	if err != nil {
		return fmt.Errorf("%s: whose listener it is cannot be told (%w)", c.RemoteAddr(), err)
	}
	if uid != p.euid && uid != 0 {
		return &StrangerError{Addr: c.RemoteAddr().String(), UID: uid}
	}
	return nil
}

// Serve answers on ln until ctx is done.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: p.Limits.ReadHeaderTimeout, IdleTimeout: p.Limits.IdleTimeout}
	ln = p.limit(ln)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// hostOf is a request's host name, lower case, without the port.
func hostOf(r *http.Request) string {
	h := r.Host
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := hostOf(r)
	if !strings.HasSuffix(host, ".localhost") {
		if !loopbackHost(host) {
			page(w, http.StatusMisdirectedRequest, "Not a name of this proxy",
				"svc proxy answers for NAME.localhost names, and for localhost itself.")
			return
		}
		p.index(w, host)
		return
	}
	rt := p.lookup(host, false)
	if rt == nil || rt.target == nil {
		rt = p.lookup(host, true)
	}
	switch {
	case rt == nil:
		page(w, http.StatusNotFound, "No service is called "+host, "svc knows no service by that name. "+p.known())
	case rt.shared != nil:
		choose(w, r, rt)
	case rt.target == nil:
		w.Header().Set("Retry-After", "1")
		page(w, http.StatusServiceUnavailable, rt.service+" is not ready",
			fmt.Sprintf("%s is %s, not ready: svc status %s says more; this page answers at once rather than wait.", rt.service, rt.status, rt.service))
	default:
		rt.rp.ServeHTTP(w, r)
	}
}

// choose answers a name that services of several projects would share
// with the names of each: 300 Multiple Choices, never one of them.
func choose(w http.ResponseWriter, r *http.Request, rt *route) {
	_, port, _ := net.SplitHostPort(r.Host)
	title := rt.host + " is not one service's"
	text := strings.Join(rt.shared, " and ") + " would all have this name, so each has its own instead:"
	if len(rt.choices) == 0 {
		// Names that are one host name, and so have none.
		text = strings.Join(rt.shared, " and ") + " would all have this name, and have no other: svc status NAME says where each is."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p><ul>\n", html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
	for _, h := range rt.choices {
		u := "http://" + h
		if port != "" {
			u += ":" + port
		}
		u += r.URL.RequestURI()
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a>\n", html.EscapeString(u), html.EscapeString(u))
	}
	b.WriteString("</ul>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusMultipleChoices)
	io.WriteString(w, b.String())
}

// loopbackHost reports whether a request's host (hostOf's) names this
// machine's loopback: localhost, 127.0.0.0/8 or ::1, bracketed or not.
// Only these get the proxy's own page: a page a rebound DNS name brought
// here has its own name as its Host.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && a.Unmap().IsLoopback()
}

// lookup is the route for host; fresh: read the services first (unless
// they were read in the last minRead).
func (p *Proxy) lookup(host string, fresh bool) *route {
	p.mu.Lock()
	age := time.Since(p.read)
	switch {
	case p.routes == nil || fresh && age > minRead:
		p.mu.Unlock()
		p.refresh()
		p.mu.Lock()
	case age > stale && !p.reading:
		p.reading = true
		go func() {
			p.refresh()
			p.mu.Lock()
			p.reading = false
			p.mu.Unlock()
		}()
	}
	defer p.mu.Unlock()
	return p.routes[host]
}

// refresh reads the services again; a ready one keeps its reverse proxy
// (and so its idle connections) while its target stays the same.
func (p *Proxy) refresh() {
	rows, _ := svc.LookAll(p.Home)
	names := svc.NameProxied(rows)
	p.mu.Lock()
	old := p.routes
	p.mu.Unlock()
	routes := map[string]*route{}
	for _, l := range rows {
		host := names.Host(l.Name)
		if host == "" || !l.IsHTTP() {
			continue
		}
		rt := &route{host: host, service: l.Name, status: l.Status}
		if l.Status == svc.Ready {
			rt.target = targetOf(l)
		}
		if o := old[host]; o != nil && rt.target != nil && o.target != nil && *o.target == *rt.target {
			rt.rp = o.rp
		} else if rt.target != nil {
			rt.rp = p.reverse(rt)
		}
		routes[host] = rt
	}
	// A short name two services would share is answered with theirs.
	for host, services := range names.Shared() {
		var hosts []string
		for _, s := range services {
			if h := names.Host(s); h != "" {
				hosts = append(hosts, h)
			}
		}
		routes[host] = &route{host: host, shared: services, choices: hosts}
	}
	p.mu.Lock()
	p.routes, p.read = routes, time.Now()
	p.mu.Unlock()
}

// targetOf is where a ready service is reached: its URL's scheme and
// host, else loopback at its port.
func targetOf(l *svc.Listing) *url.URL {
	if u, err := url.Parse(l.URL); err == nil && u.Scheme == "http" && u.Host != "" {
		return &url.URL{Scheme: "http", Host: u.Host}
	}
	port := l.Spec.Port
	if l.Port > 0 {
		port = l.Port
	}
	if port == 0 {
		return nil
	}
	return &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", port)}
}

// reverse is the reverse proxy of one route: the request's own Host
// goes on (dev servers check it), with X-Forwarded-Host and -Proto.
func (p *Proxy) reverse(rt *route) *httputil.ReverseProxy {
	target := rt.target
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		Transport:     p.transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if se := (*StrangerError)(nil); errors.As(err, &se) {
				// Its port is another user's listener now (a server
				// between workers let it go): nothing was sent there.
				page(w, http.StatusBadGateway, rt.service+" is not ready",
					fmt.Sprintf("%s's port %s is held by another user's process (uid %d), not %s: nothing was sent to it. svc status %s says more.",
						rt.service, target.Host, se.UID, rt.service, rt.service))
				return
			}
			// It may have stopped since the routes were read: read them
			// again and say what is true now.
			p.refresh()
			now := p.lookup(rt.host, false)
			switch {
			case now == nil:
				page(w, http.StatusNotFound, "No service is called "+rt.host, rt.service+" is gone. "+p.known())
			case now.target == nil:
				w.Header().Set("Retry-After", "1")
				page(w, http.StatusServiceUnavailable, rt.service+" is not ready",
					fmt.Sprintf("%s is %s, not ready: svc status %s says more.", rt.service, now.status, rt.service))
			case *now.target != *target && now.rp != nil && noBody(r):
				// It was started again on another port since the routes
				// were read: the request goes there (one with no body,
				// so nothing of it was lost on the way to the old port).
				now.rp.ServeHTTP(w, r)
			default:
				page(w, http.StatusBadGateway, rt.service+" does not answer",
					fmt.Sprintf("%s is ready at %s but does not answer (%v): svc status %s says more.", rt.service, target.Host, err, rt.service))
			}
		},
	}
}

// noBody tells whether a request has no body, and so can be sent again
// whole.
func noBody(r *http.Request) bool {
	return r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 && r.Header.Get("Transfer-Encoding") == ""
}

// known lists the names the proxy answers for, as a sentence.
func (p *Proxy) known() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var hosts []string
	for h, rt := range p.routes {
		if rt.shared == nil {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	if len(hosts) == 0 {
		return "No service that answers HTTP runs now."
	}
	return "It knows: " + strings.Join(hosts, ", ") + "."
}

// index answers a request for the proxy itself (localhost, an address):
// the names it answers for.
func (p *Proxy) index(w http.ResponseWriter, host string) {
	p.lookup(host, true)
	w.Header().Set(homeHeader, p.Home)
	page(w, http.StatusOK, "svc proxy", "Services are reached as http://NAME.localhost:PORT/ (NAME.WORKTREE.localhost in a linked worktree, NAME.PROJECT.localhost when two projects have a NAME). "+p.known())
}

// page answers with a short HTML page.
func page(w http.ResponseWriter, code int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p>\n", html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}
