package project

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/agentry/agentry/lib/svc"
)

// watched reads a service's health_* keys and watch, watch_exclude,
// debounce and cascade.
func (f *File) watched(d *Def, t tomlService, at func(string) int) error {
	h := svc.HealthSpec{HealthURL: t.HealthURL, HealthCmd: t.HealthCmd, HealthPort: t.HealthPort, HealthFailures: t.HealthFailures}
	var err error
	for key, v := range map[string]struct {
		s string
		d *time.Duration
	}{"health_every": {t.HealthEvery, &h.HealthEvery}, "health_timeout": {t.HealthTimeout, &h.HealthTimeout}} {
		if *v.d, err = duration(v.s); err != nil {
			return f.errorf(at(key), "%s: %s: %v", d.Name, key, err)
		}
	}
	w := svc.WatchSpec{Cascade: t.Cascade}
	if w.Watch, err = stringOrList(t.Watch); err != nil {
		return f.errorf(at("watch"), "%s: watch is a pattern or an array of them", d.Name)
	}
	if w.WatchExclude, err = stringOrList(t.WatchExclude); err != nil {
		return f.errorf(at("watch_exclude"), "%s: watch_exclude is a pattern or an array of them", d.Name)
	}
	if w.Debounce, err = duration(t.Debounce); err != nil {
		return f.errorf(at("debounce"), "%s: debounce: %v", d.Name, err)
	}
	var given []string
	for key, set := range map[string]bool{"health_url": h.HealthURL != "", "health_port": h.HealthPort != 0, "health_cmd": h.HealthCmd != ""} {
		if set {
			given = append(given, key)
		}
	}
	slices.SortFunc(given, func(a, b string) int { return at(a) - at(b) })
	switch {
	case len(given) > 1:
		return f.errorf(at(given[1]), "%s: give at most one of health_url, health_port and health_cmd", d.Name)
	case h.HealthFailures < 0:
		return f.errorf(at("health_failures"), "%s: health_failures cannot be negative", d.Name)
	case d.Restart == svc.RestartUnhealthy && len(given) == 0:
		return f.errorf(at("restart"), "%s: restart = \"unhealthy\" needs a health probe (health_url, health_port or health_cmd)", d.Name)
	}
	// The rules of svc's own check, worded with the file's keys.
	if err := (svc.Spec{Command: []string{"x"}, HealthSpec: h, WatchSpec: w}).Check(); err != nil {
		return f.specError(d.Name, h, err, at)
	}
	d.Health, d.Watch = h, w
	return nil
}

// keyOf is the svc.toml key of a spec's field.
var keyOf = map[string]string{"healthEvery": "health_every", "healthTimeout": "health_timeout", "healthFailures": "health_failures",
	"debounce": "debounce", "watchExclude": "watch_exclude"}

// specError words what svc's check of a service's health and watch keys
// found, at the line of the key it names (watch's, else).
func (f *File) specError(name string, h svc.HealthSpec, err error, at func(string) int) error {
	var fe *svc.FieldError
	if !errors.As(err, &fe) || keyOf[fe.Field] == "" {
		return f.errorf(at("watch"), "%s: %v", name, err)
	}
	key := keyOf[fe.Field]
	switch {
	case errors.Is(fe.Err, svc.ErrNoProbe):
		return f.errorf(at(key), "%s: %s is given without a health probe (health_url, health_port or health_cmd)", name, key)
	case errors.Is(fe.Err, svc.ErrOverEvery):
		return f.errorf(at(key), "%s: health_timeout %s is longer than the time between probes (health_every, %s)", name, h.HealthTimeout, cmp.Or(h.HealthEvery, svc.DefaultHealthEvery))
	case errors.Is(fe.Err, svc.ErrNoWatch):
		return f.errorf(at(key), "%s: %s is given without watch, the files whose changes restart the service", name, key)
	}
	return f.errorf(at("watch"), "%s: %v", name, err)
}
