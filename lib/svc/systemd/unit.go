package systemd

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/project"
)

// unit is one service's unit, everything in it resolved.
type unit struct {
	name     string
	def      *project.Def
	argv     []string
	env      []string // svc's own: in Environment=
	envFile  string   // absolute; "" for none
	readyCmd string
	deps     []dep
	notes    []string
	project  string
	source   string // the file that defines it
	target   string
	user     bool
	runAs    string
}

// The settings svc's defaults become.
const oneshotStart = "infinity" // svc waits for a one-shot to end, however long

func (u *unit) render() []byte {
	d := u.def
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("# %s of svc project %s, made by svc export systemd from %s.", d.Name, u.project, u.source)
	line("# Export again after changing the project file: the unit does not follow it.")
	for _, n := range u.notes {
		line("# svc: %s", oneLine(n))
	}
	line("[Unit]")
	line("Description=%s: %s", u.project, oneLine(d.Name))
	line("PartOf=%s", u.target)
	for _, dp := range u.deps {
		line("After=%s", dp.unit)
		if dp.required {
			line("Requires=%s", dp.unit)
		} else {
			line("Wants=%s", dp.unit)
		}
	}
	if d.MaxRestarts > 0 {
		line("StartLimitIntervalSec=infinity")
		line("StartLimitBurst=%d", d.MaxRestarts+1)
	}
	line("")
	line("[Service]")
	if d.Oneshot {
		line("Type=oneshot")
		line("RemainAfterExit=yes")
		line("TimeoutStartSec=%s", oneshotStart)
	} else {
		line("Type=exec")
	}
	line("WorkingDirectory=%s", pathValue(d.Cwd))
	if len(u.env) > 0 {
		words := make([]string, len(u.env))
		for i, kv := range u.env {
			words[i] = quoted(kv, false)
		}
		line("Environment=%s", strings.Join(words, " "))
	}
	if u.envFile != "" {
		line("EnvironmentFile=%s", pathValue(u.envFile))
	}
	line("ExecStart=%s", ExecWords(u.argv))
	if u.readyCmd != "" {
		// Ready as svc finds it: the command exits 0, tried every 100ms.
		line("ExecStartPost=%s", ExecWords([]string{"/bin/sh", "-c", "until " + u.readyCmd + "\ndo sleep 0.1; done"}))
		if !d.Oneshot {
			line("TimeoutStartSec=%s", ms(d.ReadyTimeout, svc.DefaultReadyTimeout))
		}
	}
	line("KillSignal=%s", killSignal(d))
	line("TimeoutStopSec=%s", ms(d.StopGrace, svc.DefaultStopGrace))
	line("Restart=%s", restart(d.Restart))
	if !u.user && u.runAs != "" {
		line("User=%s", u.runAs)
	}
	return []byte(b.String())
}

// target is the unit that groups the project: starting it starts every
// service; stopping it stops them (PartOf=).
func (x *exporter) target(wants []string) []byte {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("# svc project %s (%s), made by svc export systemd.", x.o.Project, x.f.Dir)
	line("[Unit]")
	line("Description=svc project %s", x.o.Project)
	line("Wants=%s", strings.Join(wants, " "))
	line("")
	line("[Install]")
	if x.o.User {
		line("WantedBy=default.target")
	} else {
		line("WantedBy=multi-user.target")
	}
	return []byte(b.String())
}

// killSignal is the service's stop signal by name, as svc's default
// picks it when the file names none.
func killSignal(d *project.Def) string {
	spec := svc.Spec{Command: d.Command, StopSignal: d.StopSignal}.WithDefaults()
	return spec.StopSignal
}

func restart(r string) string {
	if r == "" {
		return "no"
	}
	if r == svc.RestartUnhealthy {
		return "on-failure" // and a note (watched)
	}
	return r // no, on-failure and always are systemd's words too
}

// ms is d (def when zero) as a systemd time span.
func ms(d, def time.Duration) string {
	if d <= 0 {
		d = def
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
