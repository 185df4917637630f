package svccmd

import (
	"errors"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/svc"
)

// wordWatched is a bad value of the health and watch flags, named by
// its flag.
func wordWatched(e *svc.FieldError) error {
	switch {
	case errors.Is(e.Err, svc.ErrNoHealth):
		return cli.Usagef("--restart unhealthy needs a health probe: --health-url, --health-port or --health-cmd")
	case errors.Is(e.Err, svc.ErrManyHealth):
		return cli.Usagef("give at most one of --health-url, --health-port and --health-cmd")
	case errors.Is(e.Err, svc.ErrBadGlob):
		flag := map[string]string{"watch": "--watch", "watchExclude": "--watch-exclude"}[e.Field]
		return cli.Usagef("%s %q is not a pattern (*, ?, [...], ** for any directories)", flag, e.Value)
	}
	flag := map[string]string{"healthPort": "--health-port", "healthFailures": "--health-failures", "healthEvery": "--health-every",
		"healthTimeout": "--health-timeout", "debounce": "--debounce", "restart": "--restart", "watchExclude": "--watch-exclude"}[e.Field]
	switch {
	case errors.Is(e.Err, svc.ErrNoProbe):
		return cli.Usagef("%s %s is given without a health probe: --health-url, --health-port or --health-cmd", flag, e.Value)
	case errors.Is(e.Err, svc.ErrOverEvery):
		return cli.Usagef("%s %s is longer than the time between probes (--health-every, 5s unless given)", flag, e.Value)
	case errors.Is(e.Err, svc.ErrNoWatch):
		return cli.Usagef("%s %s is given without --watch, the files whose changes restart the service", flag, e.Value)
	}
	return cli.Usagef("%s %s: %v", flag, e.Value, e.Err)
}
