// Package mcpserver is svc mcp: svc's operations as seven MCP tools for an
// agent — run (a command that never hangs), start (a background service),
// output (its new rows, by a row cursor), stop, status, list (what there
// is) and who (which process and service hold a port) — over stdio or
// streamable HTTP on loopback. With a scope, the tools see only the
// services they started themselves.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/svc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is one svc mcp.
type Server struct {
	Home string
	// Scope, when set, is the name every service started here is under
	// (SCOPE/NAME); the tools then see and touch only those services, and
	// take and show names without the scope. Empty: every service, by its
	// full name.
	Scope string
	// UntilExit, when set, ties every service started here to that
	// process: it is stopped when the process exits, however it exits.
	UntilExit int
	// Version is what the server says it is.
	Version string
}

// The bounds of what a tool answers with: a tool result goes into the
// model's context, so no tool ever returns a whole log.
const (
	defaultRows  = 100
	maxRows      = 1000
	defaultBytes = 8 << 10
	maxBytes     = 64 << 10
	maxLine      = 2 << 10 // a row longer than this is cut, and says so
	runTail      = 8 << 10 // the last of a foreground command's output
	maxRunTime   = 10 * time.Minute
)

// plainText has a tool's result carry its output as JSON text without
// HTML escapes (the SDK's text is encoding/json's, where a log line's
// "<div>" or "&&" reads \u003cdiv\u003e and \u0026\u0026 to a model that
// reads the text, not the structured content).
func plainText[In, Out any](h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		res, out, err := h(ctx, req, in)
		if err != nil || res != nil {
			return res, out, err
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(out) == nil {
			res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.TrimSuffix(b.String(), "\n")}}}
		}
		return res, out, nil
	}
}

// MCP is the MCP server with svc's tools.
func (s *Server) MCP() *mcp.Server {
	m := mcp.NewServer(&mcp.Implementation{Name: "svc", Version: s.Version}, &mcp.ServerOptions{
		Instructions: instructions,
	})
	mcp.AddTool(m, &mcp.Tool{Name: "run", Description: "Run a shell command in the foreground and return its exit status and the tail of its output. " +
		"It never hangs: stdin is empty, it is stopped after timeout_seconds, and a command that looks long-running (a dev server, a watcher) is started as a background service instead (use output and stop for it)."}, plainText(s.run))
	mcp.AddTool(m, &mcp.Tool{Name: "start", Description: "Start a long-running shell command (a dev server, a database, a watcher) as a background service, " +
		"and return the first true thing about it: ready at a URL or port, running, or exited with the tail of its log. Read its output with output; stop it with stop."}, plainText(s.start))
	mcp.AddTool(m, &mcp.Tool{Name: "output", Description: "Return a service's output rows after cursor (0: from the start), at most max_rows rows and max_bytes bytes, " +
		"with next_cursor to pass back next time and whether the service has ended."}, plainText(s.output))
	mcp.AddTool(m, &mcp.Tool{Name: "stop", Description: "Stop a service and everything it started."}, plainText(s.stop))
	mcp.AddTool(m, &mcp.Tool{Name: "send", Description: "Type text into the terminal of a service started with pty (a REPL, a debugger): " +
		"what it prints in answer comes in output."}, plainText(s.send))
	mcp.AddTool(m, &mcp.Tool{Name: "status", Description: "Return one service's status: ready, running, exited (with its exit code) or stopped, its URL and ports, and how many output rows it has."}, plainText(s.status))
	mcp.AddTool(m, &mcp.Tool{Name: "list", Description: "List the services, with their status, URL and number of output rows."}, plainText(s.list))
	mcp.AddTool(m, &mcp.Tool{Name: "who", Description: "Say which process holds a TCP port and which service (and git worktree) it belongs to, or that it belongs to none: ask before freeing a port, so as never to kill what is not a service of yours."}, plainText(s.who))
	return m
}

const instructions = "svc runs commands for you without blocking. Use start for anything that keeps running " +
	"(dev servers, databases, watchers): it returns once a server is ready, with its URL, and a watcher as soon as it is known not to listen. Read new output with output, " +
	"passing back next_cursor; stop a service with stop. Use run for commands that finish."

// ServeStdio serves one client on r and w until it goes or ctx is done.
// At the end of r, the requests already read are answered first.
func (s *Server) ServeStdio(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	d := newDrain()
	dw := drainWriter{w: w, d: d, mu: &sync.Mutex{}}
	t := &mcp.IOTransport{Reader: newDrainReader(ctx, r, d, dw.parseError), Writer: dw}
	err := s.MCP().Run(ctx, t)
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// AddrError is an address ServeHTTP will not listen on: not host:port,
// or not loopback (ErrNotLoopback).
type AddrError struct {
	Addr string
	Err  error
}

func (e *AddrError) Error() string { return e.Addr + ": " + e.Err.Error() }
func (e *AddrError) Unwrap() error { return e.Err }

// ErrNotLoopback is an address that is not a loopback one.
var ErrNotLoopback = errors.New("svc mcp listens only on a loopback address, such as 127.0.0.1:0")

// ServeHTTP serves streamable HTTP on addr, a loopback address, until ctx
// is done, to the processes of this user only (ownerListener). ready is
// called with the server's URL once it listens.
func (s *Server) ServeHTTP(ctx context.Context, addr string, ready func(url string)) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return &AddrError{addr, err}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return &AddrError{addr, ErrNotLoopback}
	}
	// Everything is built before the socket listens, so the URL is printed
	// the moment it does: a supervisor that sees the listening socket
	// before the line takes the port's root for the address (svc waits
	// only a moment for a printed URL), and building the tools' schemas
	// takes milliseconds on a loaded machine.
	m := s.MCP()
	mux := http.NewServeMux()
	mux.Handle("/mcp", checkOrigin(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m }, nil)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ln := newOwnerListener(tcp, os.Geteuid())
	ready("http://" + ln.Addr().String() + "/mcp")
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		return nil
	}
}

// dir is the service a tool names, within the scope.
func (s *Server) dir(name string) (svc.Dir, error) {
	if name == "" {
		return svc.Dir{}, errors.New("name a service (list shows them)")
	}
	full := name
	if s.Scope != "" {
		if err := svc.ValidPlainName(name); err != nil {
			return svc.Dir{}, err
		}
		full = s.Scope + "/" + name
	} else if err := svc.ValidName(name); err != nil {
		return svc.Dir{}, err
	}
	d := svc.Dir{Home: s.Home, Name: full}
	if _, err := svc.Look(d); err != nil {
		// The same words whether it does not exist or is out of scope: a
		// scope does not say what lies outside it.
		return svc.Dir{}, fmt.Errorf("no service called %s", name)
	}
	return d, nil
}

// short is a service's name as the tools show it.
func (s *Server) short(full string) string {
	if s.Scope != "" {
		return strings.TrimPrefix(full, s.Scope+"/")
	}
	return full
}

// names are the services the tools see.
func (s *Server) names() ([]string, error) {
	if s.Scope != "" {
		return svc.Members(s.Home, s.Scope)
	}
	return svc.List(s.Home)
}
