package systemd

import "testing"

// What svc's monitor does after readiness is named, not expressed, and
// restart = "unhealthy" is a Restart= systemd has.
func TestWatchedNotes(t *testing.T) {
	u, x := units(t, "svc.toml", `[services.api]
command = "python3 -m http.server 8000"
health_url = "http://127.0.0.1:8000/"
restart = "unhealthy"
watch = ["src"]

[services.worker]
command = "python3 worker.py"
depends_on = ["api"]
cascade = true
`)
	has(t, "api", u["shop-api.service"], `^Restart=on-failure$`)
	var notes string
	for _, n := range x.Notes {
		notes += n.Service + ": " + n.Text + "\n"
	}
	has(t, "notes", notes, `^api: health_\* is not expressed: systemd does not probe it, and restart = "unhealthy" is Restart=on-failure$`)
	has(t, "notes", notes, `^api: watch = \[src\] is not expressed`)
	has(t, "notes", notes, `^worker: cascade is not expressed`)
}
