// Command svc-monitor supervises one service for its whole life: svc start
// runs "svc-monitor HOME NAME" in a new session and hands it the service's
// spec on a descriptor (lib/svc/wire.go), never on the command line. It is
// not for use by hand. See svc-monitor(1).
//
// It is a program of its own, found beside svc or on PATH (as containerd
// finds its shims), because there is one monitor per service for as long
// as the service runs: it links only what a monitor uses, and its
// arguments are parsed by hand, without the command grammar every other
// program builds.
package main

import (
	"fmt"
	"os"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/monitor"
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
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 1 {
		switch args[0] {
		case "-h", "--help":
			fmt.Print(usage)
			return cli.ExitOK
		case "--version":
			fmt.Println(svc.MonitorProgram, cli.Version())
			return cli.ExitOK
		}
	}
	d, err := svc.ParseMonitorArgs(args)
	if err != nil {
		err = cli.WithHint(cli.Usagef("%v", err), "svc start runs the monitor; it is not for use by hand")
	} else {
		err = monitor.Run(d)
	}
	return cli.Report(svc.MonitorProgram, os.Stderr, err)
}
