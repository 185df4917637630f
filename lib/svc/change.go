package svc

import (
	"path"
	"time"
)

// WatchSpec restarts a service when a file it watches changes: Watch's
// patterns (relative to Spec.Cwd; a directory stands for everything
// under it, a pattern without a slash matches a file's name at any
// depth, ** any number of directories) less WatchExclude's, after
// Debounce of quiet. With Cascade, the service restarts as well once a
// service it depends on (ProjectTag.DependsOn) is ready again after a
// restart on change.
type WatchSpec struct {
	Watch        []string      `json:"watch,omitempty"`
	WatchExclude []string      `json:"watchExclude,omitempty"`
	Debounce     time.Duration `json:"debounceNs,omitempty"`
	Cascade      bool          `json:"cascade,omitempty"`
}

// DefaultDebounce is how long the files watched are to be quiet before a
// restart: a burst of changes (a save, a checkout) is one restart.
const DefaultDebounce = 500 * time.Millisecond

func (w WatchSpec) withDefaults() WatchSpec {
	if len(w.Watch) > 0 && w.Debounce <= 0 {
		w.Debounce = DefaultDebounce
	}
	return w
}

func (w WatchSpec) check() error {
	for field, ps := range map[string][]string{"watch": w.Watch, "watchExclude": w.WatchExclude} {
		for _, p := range ps {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				return &FieldError{Field: field, Value: p, Err: ErrBadGlob}
			}
		}
	}
	if w.Debounce < 0 {
		return &FieldError{Field: "debounce", Value: w.Debounce.String(), Err: ErrNegative}
	}
	if len(w.Watch) == 0 && len(w.WatchExclude) > 0 {
		return &FieldError{Field: "watchExclude", Value: w.WatchExclude[0], Err: ErrNoWatch}
	}
	if len(w.Watch) == 0 && w.Debounce > 0 {
		return &FieldError{Field: "debounce", Value: w.Debounce.String(), Err: ErrNoWatch}
	}
	return nil
}

// Change is what caused a service's last restart on change: the file
// that changed (relative to Spec.Cwd when under it) and when, with how
// many files changed in that burst; for a cascade, Via is the service
// depended on whose restart it followed.
type Change struct {
	File  string    `json:"file"`
	At    time.Time `json:"at"`
	Files int       `json:"files,omitempty"`
	Via   string    `json:"via,omitempty"`
	// RestartedAt is when the restart it caused began.
	RestartedAt time.Time `json:"restartedAt"`
}
