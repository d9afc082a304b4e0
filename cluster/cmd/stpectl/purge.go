package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl purge: remove the dead tasks that died, or the done records of
// the tasks that ended, before a time (asynq task deleteall archived or
// completed, River's job cleaner), a batch per script.

// purgeJSON is purge's document.
type purgeJSON struct {
	State string `json:"state"`
	// Before is the cut: tasks that died (or ended) before it were removed.
	Before time.Time `json:"before"`
	// Removed is how many were removed.
	Removed int `json:"removed"`
}

func purgeCommand() *command {
	return &command{
		name:     "purge",
		synopsis: "[-state dead|done] -before TIME | -older DURATION",
		summary:  "remove the dead tasks (or done records) from before TIME, or older than DURATION",
		define: func(fs *flag.FlagSet) runFunc {
			state := fs.String("state", string(cluster.Dead), "`state` to purge: dead, or done (the records kept by WithKeepDone)")
			before := fs.String("before", "", "remove those that died before this `time`: RFC 3339 or a duration from now (-24h)")
			older := fs.String("older", "", "remove those that died more than this `duration` ago (72h, 7d)")
			return func(ctx context.Context, s *session, _ []string) error {
				purge := s.node.Purge
				switch cluster.State(*state) {
				case cluster.Dead:
				case cluster.Done:
					purge = s.node.PurgeDone
				default:
					return usagef("purge: -state %q: want dead or done", *state)
				}
				now := time.Now()
				var cut time.Time
				switch {
				case (*before == "") == (*older == ""):
					return usagef("purge: want exactly one of -before and -older")
				case *before != "":
					t, err := parseTime(*before, now)
					if err != nil {
						return err
					}
					cut = t
				default:
					d, err := parseDuration(*older)
					if err != nil {
						return err
					}
					cut = now.Add(-d)
				}
				n, err := purge(ctx, cut)
				if err != nil {
					return err
				}
				if s.json {
					writeJSON(s.stdout, purgeJSON{State: *state, Before: cut.UTC().Truncate(time.Microsecond), Removed: n})
				} else {
					fmt.Fprintf(s.stdout, "purged %d %s task(s) from before %s\n", n, *state, formatTime(cut, now))
				}
				return nil
			}
		},
	}
}
