// Command svc-mcp serves svc to an agent as MCP tools; svc mcp runs it.
// It is a binary of its own because the MCP SDK costs every process that
// links it about 5 MB of memory at start, and every svc monitor is the svc
// binary. See svc-mcp(1).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/mcpserver"
)

func main() {
	proc.CloseOnExecFrom(3)
	os.Exit(cli.Main(cli.App{
		Name:        "svc-mcp",
		Description: "Serve svc to an agent as MCP tools (run, start, output, stop, status, list), over stdio or streamable HTTP on loopback.",
		Grammar:     &grammar{},
	}))
}

type grammar struct {
	cli.Globals
	HTTP      string `name:"http" help:"Serve streamable HTTP on this loopback address (127.0.0.1:0 picks a port) and print its URL first, instead of stdio." placeholder:"ADDR"`
	Scope     string `help:"Start every service as SCOPE/NAME, and see and stop only those." placeholder:"SCOPE"`
	UntilExit int    `help:"Stop every service started here when process PID exits." placeholder:"PID"`
	Svc       string `help:"The svc binary, which runs the services' monitors (default: svc beside this one, else on PATH)." placeholder:"PATH" type:"path"`
}

func (g *grammar) Run(ctx context.Context, env *cli.Env) error {
	home, err := svc.Home(env.Getenv)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	exe, err := svcBinary(g.Svc)
	if err != nil {
		return err
	}
	if g.Scope != "" {
		if err := svc.ClaimScope(home, g.Scope, g.Scope); err != nil {
			return cli.Usagef("--scope %v", err)
		}
	}
	s := &mcpserver.Server{Home: home, Executable: exe, Scope: g.Scope, UntilExit: g.UntilExit, Version: cli.Version()}
	if g.HTTP == "" {
		return s.ServeStdio(ctx, io.NopCloser(env.Stdin), nopWriteCloser{env.Stdout})
	}
	err = s.ServeHTTP(ctx, g.HTTP, func(url string) { fmt.Fprintln(env.Stdout, url) })
	if err != nil && strings.HasPrefix(err.Error(), "--http") {
		return cli.Usagef("%v", err)
	}
	return err
}

// svcBinary is the svc that starts monitors: given, else beside this
// binary or on PATH.
func svcBinary(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if p, err := proc.Sibling("svc"); err == nil {
		return p, nil
	}
	return "", cli.Usagef("no svc binary beside svc-mcp or on PATH (give --svc PATH)")
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
