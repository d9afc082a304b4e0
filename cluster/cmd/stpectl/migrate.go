package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl migrate: move the tasks an earlier version stored in its
// single-slot layout into the partitions (cluster.Migrate), once every node
// of that version is stopped; a node of this version refuses such a
// keyspace until then. Interrupted (a timeout, a crash), it is run again:
// nothing is lost or doubled. docs/cluster-upgrade.md tells the steps.

// migrateJSON is migrate's document: what cluster.Migrate moved.
type migrateJSON struct {
	Partitions int `json:"partitions"`
	Pending    int `json:"pending"`
	Running    int `json:"running"`
	Dead       int `json:"dead"`
	Done       int `json:"done"`
	// Unindexed counts the task hashes found in no state's set, moved as
	// they were.
	Unindexed int `json:"unindexed"`
	// Markers counts the done markers moved.
	Markers int `json:"markers"`
	// Dropped counts the old sets' entries whose task was gone.
	Dropped     int      `json:"dropped"`
	PausedKinds []string `json:"paused_kinds"`
	Seconds     float64  `json:"seconds"`
}

func migrateCommand() *command {
	return &command{
		name:     "migrate",
		synopsis: "[-partitions N] [-force]",
		summary:  "move the tasks of an earlier version's single-slot layout into the partitions (stop every node first)",
		// An earlier version's keyspace has no layout record.
		anyPrefix: true,
		define: func(fs *flag.FlagSet) runFunc {
			partitions := fs.Int("partitions", 0, "number of `partitions` to move the tasks into, as the nodes' cluster.WithPartitions; default the number recorded for the prefix, else 64")
			force := fs.Bool("force", false, "move even while nodes are registered as live (only when they are known to be gone)")
			return func(ctx context.Context, s *session, _ []string) error {
				prefix := s.prefix
				n := *partitions
				if n == 0 {
					recorded, err := cluster.RecordedPartitions(ctx, s.rdb, prefix)
					if err != nil {
						return err
					}
					n = cmp.Or(recorded, cluster.DefaultPartitions)
				}
				opts := []cluster.Option{cluster.WithPrefix(prefix), cluster.WithPartitions(n)}
				if *force {
					opts = append(opts, cluster.WithMigrateForce())
				}
				r, err := cluster.Migrate(ctx, s.rdb, opts...)
				if err != nil {
					if ctx.Err() != nil {
						return &hinted{err: err, hint: fmt.Sprintf("interrupted after %d task(s); nothing is lost: run it again, with a longer -timeout, to finish", r.Tasks())}
					}
					return err
				}
				if s.json {
					writeJSON(s.stdout, migrateJSON{Partitions: r.Partitions, Pending: r.Pending, Running: r.Running,
						Dead: r.Dead, Done: r.Done, Unindexed: r.Unindexed, Markers: r.Markers, Dropped: r.Dropped,
						PausedKinds: append([]string{}, r.PausedKinds...), Seconds: r.Elapsed.Seconds()})
					return nil
				}
				fmt.Fprintf(s.stdout, "moved %d task(s) into %d partitions in %v: %d pending, %d running, %d dead, %d done, %d unindexed; %d done marker(s)\n",
					r.Tasks(), r.Partitions, r.Elapsed.Round(time.Millisecond), r.Pending, r.Running, r.Dead, r.Done, r.Unindexed, r.Markers)
				if r.Dropped > 0 {
					fmt.Fprintf(s.stdout, "removed %d entries of the old sets whose task was gone\n", r.Dropped)
				}
				if len(r.PausedKinds) > 0 {
					fmt.Fprintf(s.stdout, "paused in every partition: %s\n", strings.Join(r.PausedKinds, ", "))
				}
				return nil
			}
		},
	}
}
