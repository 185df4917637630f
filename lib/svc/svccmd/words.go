package svccmd

import (
	"errors"
	"fmt"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/svc"
)

// word is an operation's error as the command line says it: in terms of
// its flags and commands, with a hint where a command fixes it, and exit
// status 2 for what was asked that cannot be (a name, a value, a port,
// the state home), so that nothing started. Any other error is returned
// as it is.
func word(err error) error {
	var (
		taken   *svc.TakenError
		field   *svc.FieldError
		port    *svc.PortError
		name    *svc.NameError
		home    *svc.HomeError
		restart *svc.RestartError
		noPort  *svc.NoPortError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &taken) && taken.PID != 0:
		return cli.WithHint(cli.Usagef("%v", err), "svc stop "+taken.Name)
	case errors.As(err, &taken):
		return cli.WithHint(cli.Usagef("%v", err), fmt.Sprintf("svc stop %s, or choose another --name", taken.Name))
	case errors.As(err, &field):
		return wordField(field)
	case errors.As(err, &port) && port.Field == "command" && port.Same:
		return cli.Usagef("%v: svc restart %s?", err, port.Service)
	case errors.As(err, &port) && port.Field == "command":
		return cli.WithHint(cli.Usagef("%v", err), fmt.Sprintf("svc stop %s, or give the command another port", port.Service))
	case errors.As(err, &port) && port.Field == "readyPort":
		return cli.WithHint(cli.Usagef("%v", err), "stop that process, choose another port, or svc start --force to start anyway")
	case errors.As(err, &port) && port.Service == "":
		return cli.WithHint(cli.Usagef("%v", err), "use --port auto to have svc pick a free one")
	case errors.As(err, &port), errors.As(err, &name):
		return cli.Usagef("%v", err)
	case errors.As(err, &home):
		return cli.WithCode(err, cli.ExitUsage)
	case errors.As(err, &restart):
		return cli.Usagef("cannot restart %s: %v", restart.Name, say(restart.Err))
	case errors.As(err, &noPort):
		return cli.Failf("%s has no port: it was started without --port and is not listening (%s)", noPort.Name, noPort.Status)
	case errors.Is(err, svc.ErrNoMonitor):
		return cli.WithHint(err, "go install "+svc.MonitorPackage+"@latest puts it on PATH; make install puts it beside svc")
	}
	return say(err)
}

// say is the text of an error about a service as the command line says
// it, its exit status left as it is.
func say(err error) error {
	var (
		damaged    *svc.DamagedError
		live       *svc.LiveError
		notMonitor *svc.NotMonitorError
	)
	switch {
	case errors.As(err, &damaged):
		return fmt.Errorf("%v; svc rm --force %s forgets it", err, damaged.Name)
	case errors.As(err, &live):
		return fmt.Errorf("%s is running; svc stop it first, or svc rm --force", live.Name)
	case errors.As(err, &notMonitor) && notMonitor.OtherUser:
		return fmt.Errorf("cannot reach the monitor of %s: another user's process (pid %d, uid %d) holds its socket, and svc talks to no monitor but its own; nothing was sent (svc(1), SECURITY CONSIDERATIONS)",
			notMonitor.Name, notMonitor.PID, notMonitor.UID)
	case errors.As(err, &notMonitor):
		return fmt.Errorf("cannot reach the monitor of %s: process %d holds its socket, not the monitor (pid %d); nothing was sent",
			notMonitor.Name, notMonitor.PID, notMonitor.MonitorPID)
	}
	return err
}

// wordField is a bad value, named by the flag that gives it.
func wordField(e *svc.FieldError) error {
	switch e.Field {
	case "command":
		return cli.Usagef("no command to start (svc start -- CMD ARGS...)")
	case "cwd":
		return cli.Usagef("--cwd %s is not a directory", e.Value)
	case "env":
		return cli.Usagef("--env %q has no name", e.Value)
	case "logKeep":
		return cli.Usagef("--log-keep must be at least 1")
	case "maxRestarts":
		return cli.Usagef("--max-restarts cannot be negative")
	case "port":
		return cli.Usagef("--port takes auto or a port number, not %q", e.Value)
	case "stopSignal":
		return cli.Usagef("--stop-signal %s is not a signal that stops a process (TERM, INT, QUIT, HUP, USR1, USR2, KILL, or a number)", e.Value)
	case "stopKeys":
		return cli.Usagef("--stop-keys needs --pty: the keys are typed into the service's terminal")
	case "untilExit":
		return cli.Usagef("--until-exit %s: %v", e.Value, e.Err)
	case "readyPort":
		return cli.Usagef("--ready-port %s is not a port number", e.Value)
	case "logMax":
		return cli.Usagef("--log-max cannot be negative")
	case "restart", "health", "healthPort", "healthFailures", "healthEvery", "healthTimeout", "watch", "watchExclude", "debounce":
		return wordWatched(e)
	}
	return cli.Usagef("%v", e)
}
