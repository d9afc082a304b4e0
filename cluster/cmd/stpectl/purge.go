package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl purge: remove the dead tasks that died, or the done records of
// the tasks that ended, before a time, of every kind or one (asynq task
// deleteall archived or completed, River's job cleaner): Node.DeleteAll of
// the selection, a batch per script; -dry-run counts it (CountSelected).

// purgeJSON is purge's document.
type purgeJSON struct {
	State string `json:"state"`
	// Kind is the kind purged, "" for every kind.
	Kind string `json:"kind"`
	// Before is the cut: tasks that died (or ended) before it were removed.
	Before time.Time `json:"before"`
	// DryRun is true when nothing was removed: Matched is what would be.
	DryRun bool `json:"dry_run"`
	// Matched is how many the cut picked; Removed can be fewer when
	// some were retried or removed meanwhile.
	Matched int `json:"matched"`
	// Removed is how many were removed.
	Removed int `json:"removed"`
}

func purgeCommand() *command {
	return &command{
		name:     "purge",
		synopsis: "[-state dead|done] [-kind K] [-dry-run] -before TIME | -older DURATION",
		summary:  "remove the dead tasks (or done records) from before TIME, or older than DURATION, of every kind or one",
		define: func(fs *flag.FlagSet) runFunc {
			state := fs.String("state", string(cluster.Dead), "`state` to purge: dead, or done (the records kept by WithKeepDone)")
			before := fs.String("before", "", "remove those that died before this `time`: RFC 3339 or a duration from now (-24h)")
			older := fs.String("older", "", "remove those that died more than this `duration` ago (72h, 7d)")
			kind := fs.String("kind", "", "only the tasks of this `kind`")
			dryRun := fs.Bool("dry-run", false, "count what it would remove and remove nothing")
			return func(ctx context.Context, s *session, _ []string) error {
				switch cluster.State(*state) {
				case cluster.Dead, cluster.Done:
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
				doc := purgeJSON{State: *state, Kind: *kind, Before: cut.UTC().Truncate(time.Microsecond), DryRun: *dryRun}
				sel := cluster.Selection{State: cluster.State(*state), Kind: *kind, Before: cut}
				if *dryRun {
					n, err := s.node.CountSelected(ctx, sel)
					if err != nil {
						return err
					}
					doc.Matched = n
				} else {
					res, err := s.node.DeleteAll(ctx, sel) // Purge and PurgeDone, of one kind or all
					if err != nil {
						return err
					}
					doc.Matched, doc.Removed = res.Matched, res.Changed
				}
				if s.json {
					writeJSON(s.stdout, doc)
					return nil
				}
				what := *state + " task(s)"
				if *kind != "" {
					what += " of kind " + cell(*kind)
				}
				if *dryRun {
					fmt.Fprintf(s.stdout, "would purge %d %s from before %s (dry run: nothing removed)\n", doc.Matched, what, formatTime(cut, now))
				} else {
					fmt.Fprintf(s.stdout, "purged %d %s from before %s\n", doc.Removed, what, formatTime(cut, now))
				}
				return nil
			}
		},
	}
}
