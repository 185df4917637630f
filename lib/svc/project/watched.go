package project

import (
	"cmp"
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
	for key, set := range map[string]bool{"health_every": h.HealthEvery != 0, "health_timeout": h.HealthTimeout != 0, "health_failures": h.HealthFailures != 0} {
		if set && len(given) == 0 {
			return f.errorf(at(key), "%s: %s is given without a health probe (health_url, health_port or health_cmd)", d.Name, key)
		}
	}
	if every := cmp.Or(h.HealthEvery, svc.DefaultHealthEvery); len(given) > 0 && h.HealthTimeout > every {
		return f.errorf(at("health_timeout"), "%s: health_timeout %s is longer than the time between probes (health_every, %s)", d.Name, h.HealthTimeout, every)
	}
	for key, set := range map[string]bool{"watch_exclude": len(w.WatchExclude) > 0, "debounce": w.Debounce > 0} {
		if set && len(w.Watch) == 0 {
			return f.errorf(at(key), "%s: %s is given without watch, the files whose changes restart the service", d.Name, key)
		}
	}
	if err := (svc.Spec{Command: []string{"x"}, WatchSpec: w}).Check(); err != nil {
		return f.errorf(at("watch"), "%s: %v", d.Name, err)
	}
	d.Health, d.Watch = h, w
	return nil
}
