package main

import (
	"time"

	"github.com/agentry/agentry/lib/svc"
)

// healthFlags are svc start's health probes after readiness.
type healthFlags struct {
	HealthURL      string        `help:"Once ready, probe this URL: healthy when it answers 2xx or 3xx." placeholder:"URL" xor:"health"`
	HealthCmd      string        `help:"Once ready, probe with this shell command: healthy when it exits 0." placeholder:"CMD" xor:"health"`
	HealthPort     int           `help:"Once ready, probe this port: healthy when it accepts." placeholder:"PORT" xor:"health"`
	HealthEvery    time.Duration `help:"Probe health this often (default 5s)." placeholder:"DUR"`
	HealthTimeout  time.Duration `help:"Give each probe this long (default 2s, at most --health-every)." placeholder:"DUR"`
	HealthFailures int           `help:"This many failed probes in a row make the service unhealthy (default 3)." placeholder:"N"`
}

func (f healthFlags) spec() svc.HealthSpec {
	return svc.HealthSpec{HealthURL: f.HealthURL, HealthCmd: f.HealthCmd, HealthPort: f.HealthPort, HealthEvery: f.HealthEvery,
		HealthTimeout: f.HealthTimeout, HealthFailures: f.HealthFailures}
}

// watchFlags are svc start's restarts on a change of files.
type watchFlags struct {
	Watch        []string      `help:"Restart when a file matching GLOB changes (relative to --cwd; a directory is everything under it; ** any depth; repeatable)." placeholder:"GLOB"`
	WatchExclude []string      `help:"Not the files matching GLOB (a GLOB without a slash: a name at any depth; repeatable)." placeholder:"GLOB"`
	Debounce     time.Duration `help:"Restart once the files watched have been quiet this long (default 500ms)." placeholder:"DUR"`
}

func (f watchFlags) spec() svc.WatchSpec {
	return svc.WatchSpec{Watch: f.Watch, WatchExclude: f.WatchExclude, Debounce: f.Debounce}
}
