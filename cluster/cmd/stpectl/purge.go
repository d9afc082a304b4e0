package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl purge: remove the dead tasks that died before a time (asynq task
// deleteall archived, River's job cleaner), a batch per script.

// purgeJSON is purge's document.
type purgeJSON struct {
	State string `json:"state"`
	// Before is the cut: tasks that died before it were removed.
	Before time.Time `json:"before"`
	// Removed is how many were removed.
	Removed int `json:"removed"`
}

func purgeCommand() *command {
	return &command{
		name:     "purge",
		synopsis: "[-state dead] -before TIME | -older DURATION",
		summary:  "remove the dead tasks that died before TIME, or more than DURATION ago",
		define: func(fs *flag.FlagSet) runFunc {
			state := fs.String("state", string(cluster.Dead), "`state` to purge: dead")
			before := fs.String("before", "", "remove those that died before this `time`: RFC 3339 or a duration from now (-24h)")
			older := fs.String("older", "", "remove those that died more than this `duration` ago (72h, 7d)")
			return func(ctx context.Context, s *session, _ []string) error {
				if *state != string(cluster.Dead) {
					return usagef("purge: -state %q: want dead", *state)
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
				n, err := s.node.Purge(ctx, cut)
				if err != nil {
					return err
				}
				if s.json {
					writeJSON(s.stdout, purgeJSON{State: *state, Before: cut.UTC().Truncate(time.Microsecond), Removed: n})
				} else {
					fmt.Fprintf(s.stdout, "purged %d dead task(s) that died before %s\n", n, formatTime(cut, now))
				}
				return nil
			}
		},
	}
}
