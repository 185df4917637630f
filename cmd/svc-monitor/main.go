// Command svc-monitor supervises one service for its whole life: svc start
// runs "svc-monitor HOME NAME" in a new session and hands it the service's
// spec on a descriptor (lib/svc/wire.go), never on the command line. It is
// not for use by hand. See svc-monitor(1).
//
// It is a program of its own, found beside svc or on PATH (as containerd
// finds its shims), because there is one monitor per service for as long
// as the service runs: it links only what a monitor uses. That is why it
// reads its arguments by hand and speaks without lib/cli: the command
// grammar's packages cost memory, and one of them (os/user) links cgo,
// which starts the C runtime in every monitor of a cgo build.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/monitor"
	"github.com/agentry/agentry/lib/version"
)

const usage = `Usage: svc-monitor HOME NAME

The monitor of one svc service. svc start runs it and hands it the service
on a descriptor; it is not for use by hand. See svc-monitor(1).

Flags:
  -h, --help       Show context-sensitive help.
      --version    Print the version and exit.
`

func main() {
	// What svc start's caller leaked to it goes no further, and the
	// monitor's own descriptors 3-5 not to its service.
	proc.CloseOnExecFrom(3)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the monitor's command line; its exit status is svc(1)'s: 2 for
// a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 {
		switch args[0] {
		case "-h", "--help":
			fmt.Fprint(stdout, usage)
			return 0
		case "--version":
			fmt.Fprintln(stdout, svc.MonitorProgram, version.String())
			return 0
		}
	}
	d, err := svc.ParseMonitorArgs(args)
	if err == nil {
		var code int
		if code, err = monitor.Run(d); err == nil {
			return code
		}
	}
	fmt.Fprintf(stderr, "%s: error: %v\n%s: hint: svc start runs the monitor; it is not for use by hand\n", svc.MonitorProgram, err, svc.MonitorProgram)
	return 2
}
