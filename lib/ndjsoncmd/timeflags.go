package ndjsoncmd

import (
	"time"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/linetime"
	"github.com/agentry/agentry/lib/ndjsontool"
)

// timeFlags are the flags of a verb that reads each line's time: where
// and stats.
type timeFlags struct {
	Time  string `help:"The gjson path of each line's time: an RFC 3339 string or an epoch number (seconds, or ms, µs, ns by magnitude)." placeholder:"PATH"`
	Since string `help:"Only lines at or after this: a duration back from now (24h, 7d) or a time (2026-12-01T00:00:00Z, 2026-12-01). Needs --time." placeholder:"WHEN"`
	Until string `help:"Only lines before this: a duration back from now or a time. Needs --time." placeholder:"WHEN"`
	TZ    string `name:"tz" help:"The zone of buckets and of times without an offset: UTC, Local, an IANA name or an offset such as +02:00." default:"UTC" placeholder:"ZONE"`
}

// window sets st's time window from the flags, now being the clock's
// reading, and returns the zone.
func (f *timeFlags) window(st *ndjsontool.Stream, now time.Time) (*time.Location, error) {
	loc, err := linetime.Zone(f.TZ, time.Local)
	if err != nil {
		return nil, cli.Usagef("--tz: %s", err)
	}
	if f.Time == "" {
		if f.Since != "" || f.Until != "" {
			return nil, cli.Usagef("--since and --until need --time PATH, where each line's time is")
		}
		return loc, nil
	}
	var since, until time.Time
	if f.Since != "" {
		if since, err = linetime.Bound(f.Since, now, loc); err != nil {
			return nil, cli.Usagef("--since: %s", err)
		}
	}
	if f.Until != "" {
		if until, err = linetime.Bound(f.Until, now, loc); err != nil {
			return nil, cli.Usagef("--until: %s", err)
		}
	}
	st.Time = ndjsontool.NewTimeWindow(f.Time, since, until)
	return loc, nil
}
