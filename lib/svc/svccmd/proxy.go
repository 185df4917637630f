package svccmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/proxy"
)

// ProxyArgs are svc proxy's flags.
type ProxyArgs struct {
	Port string // a number, or auto
	// Self is this program, which the proxy service runs as "svc proxy --serve".
	Self string
}

// Proxy makes sure the proxy runs, as the service svc-proxy: 0 when it
// is ready, 1 when it could not be started.
func (v *Verbs) Proxy(ctx context.Context, a ProxyArgs) error {
	d := svc.Dir{Home: v.Home, Name: svc.ProxyName}
	if l, err := svc.Look(d); err == nil && l.Status.Live() {
		return v.proxyRuns(l)
	}
	// It runs in /, which is always there: not in the home, which its
	// first start makes (after the spec is checked), nor in a worktree,
	// whose removal would take it along.
	spec := svc.Spec{Command: []string{a.Self, "proxy", "--serve"}, Cwd: "/", ReadyURL: "http://127.0.0.1:{port}/"}
	res, err := svc.Start(ctx, svc.StartOptions{Home: v.Home, Name: svc.ProxyName, Spec: spec, Port: a.Port})
	if res == nil {
		if pe := (*svc.PortError)(nil); errors.As(err, &pe) {
			return cli.WithHint(portTaken(pe), "give another with --port N, or --port auto")
		}
		return cli.WithCode(word(err), cli.ExitUsage)
	}
	if res.Status != svc.Ready {
		fmt.Fprint(v.Out, FormatStart(res))
		return cli.Failf("the proxy is %s, not ready (svc tail %s)", res.Status, svc.ProxyName)
	}
	l, err := svc.Look(d)
	if err != nil {
		return err
	}
	return v.proxyRuns(l)
}

// portTaken words a --port that is not free: another state home's svc
// proxy (this user's or another's) is named as such.
func portTaken(pe *svc.PortError) error {
	if pe.Service != "" {
		return cli.Usagef("--port %d is given to service %s", pe.Port, pe.Service)
	}
	switch h := proxy.Probe(pe.Port); {
	case h == nil:
		return cli.Usagef("--port %d is in use by %s", pe.Port, pe.Holder)
	case h.Home != "":
		return cli.Usagef("--port %d is held by another svc proxy: %s, of the state home %s", pe.Port, userOf(h.UID), h.Home)
	default:
		return cli.Usagef("--port %d is held by another svc proxy: %s", pe.Port, userOf(h.UID))
	}
}

// userOf names a user: "yours", or by name and uid.
func userOf(uid uint32) string {
	if int(uid) == os.Geteuid() {
		return "yours"
	}
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		return fmt.Sprintf("user %s's (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d's", uid)
}

func (v *Verbs) proxyRuns(l *svc.Listing) error {
	port := l.Spec.Port
	if v.JSON {
		cli.PrintJSON(v.Out, map[string]any{"name": l.Name, "status": l.Status, "pid": l.PID, "port": port,
			"url": "http://localhost:" + strconv.Itoa(port) + "/"})
		return nil
	}
	pid := fmt.Sprintf("pid %d", l.PID)
	if l.PID == 0 {
		pid = "waiting to restart"
	}
	fmt.Fprintf(v.Out, "svc proxy is %s on port %d (%s): a service is at http://NAME.localhost:%d/ (NAME.WORKTREE.localhost in a linked worktree, NAME.PROJECT.localhost when two projects have a NAME); svc ls shows each\n",
		l.Status, port, pid, port)
	return nil
}

// ServeProxy is the proxy itself, on loopback at $PORT, until ctx is done.
func (v *Verbs) ServeProxy(ctx context.Context) error {
	port := v.Getenv("PORT")
	if port == "" {
		return cli.Usagef("--serve is what svc proxy runs as a service: run svc proxy")
	}
	p := proxy.New(v.Home)
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return err
	}
	errs := make(chan error, 2)
	go func() { errs <- p.Serve(ctx, ln) }()
	n := 1
	// .localhost names may resolve to ::1 first: answer there too, when
	// the machine has it.
	if ln6, err := net.Listen("tcp", "[::1]:"+port); err == nil {
		n++
		go func() { errs <- p.Serve(ctx, ln6) }()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
