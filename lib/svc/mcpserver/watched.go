package mcpserver

import (
	"time"

	"github.com/agentry/agentry/lib/svc"
)

// ChangeOut is the change of files that caused a service's last restart
// on change.
type ChangeOut struct {
	File        string    `json:"file" jsonschema:"the file that changed, relative to the service's directory when under it"`
	At          time.Time `json:"at" jsonschema:"when it changed"`
	Files       int       `json:"files,omitempty" jsonschema:"how many files changed in that burst"`
	Via         string    `json:"via,omitempty" jsonschema:"the service depended on whose restart this one followed (cascade)"`
	RestartedAt time.Time `json:"restarted_at" jsonschema:"when the restart began"`
}

// watched adds what the health probes and the watch of files found.
func watched(out *StartOut, l *svc.Listing) {
	if r := l.Restarted; r.Unhealthy > 0 || r.Change > 0 {
		out.Restarted = &r
	}
	if h := l.Health; h != nil && l.Status == svc.Unhealthy && h.Last != nil {
		out.Unhealthy = h.Last.Said(l.Spec.HealthSpec)
	}
	if c := l.Change; c != nil {
		out.Change = &ChangeOut{File: c.File, At: c.At, Files: c.Files, Via: c.Via, RestartedAt: c.RestartedAt}
	}
}
