package systemd

import (
	"strings"

	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/project"
)

// watched notes what svc's monitor does after readiness that a unit
// does not: health probes (and restart = "unhealthy"), the watch of
// files, cascade.
func (x *exporter) watched(d *project.Def) {
	switch {
	case d.Restart == svc.RestartUnhealthy:
		x.note(d.Name, "health_* is not expressed: systemd does not probe it, and restart = \"unhealthy\" is Restart=on-failure")
	case d.Health.Probes():
		x.note(d.Name, "health_* is not expressed: systemd does not probe it")
	}
	if len(d.Watch.Watch) > 0 {
		x.note(d.Name, "watch = [%s] is not expressed: a unit does not restart on a change of files", strings.Join(d.Watch.Watch, ", "))
	}
	if d.Watch.Cascade {
		x.note(d.Name, "cascade is not expressed: it is not restarted after what it depends on restarts on a change")
	}
}
