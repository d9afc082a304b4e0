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

// stpectl migrate: on Redis, move the tasks an earlier version stored in
// its single-slot layout into the partitions (cluster.Migrate), once every
// node of that version is stopped; a node of this version refuses such a
// keyspace until then. Interrupted (a timeout, a crash), it is run again:
// nothing is lost or doubled. docs/cluster-upgrade.md tells the steps. On
// PostgreSQL, apply the schema migrations this version has and the
// database lacks (pgdriver.Migrate; migrate_postgres.go).

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
		summary:  "Redis: move the tasks of an earlier version's single-slot layout into the partitions (stop every node first); PostgreSQL: apply the schema migrations",
		// An earlier version's keyspace has no layout record; a database
		// without the tables is what migrate is for. Neither needs a node.
		anyPrefix: true,
		storeOnly: true,
		define: func(fs *flag.FlagSet) runFunc {
			partitions := fs.Int("partitions", 0, "Redis only: number of `partitions` to move the tasks into, as the nodes' cluster.WithPartitions; default the number recorded for the prefix, else 64")
			force := fs.Bool("force", false, "Redis only: move even while nodes are registered as live (only when they are known to be gone)")
			return func(ctx context.Context, s *session, _ []string) error {
				rs, ok := s.store.(*redisStore)
				if !ok {
					if *partitions != 0 || *force {
						return usagef("migrate: -partitions and -force are for the layout migration of Redis; on PostgreSQL migrate applies the schema migrations, and the nodes record their partitions")
					}
					return migratePostgres(ctx, s, s.store.(*pgStore))
				}
				prefix := s.prefix
				n := *partitions
				if n == 0 {
					recorded, err := cluster.RecordedPartitions(ctx, rs.rdb, prefix)
					if err != nil {
						return err
					}
					n = cmp.Or(recorded, cluster.DefaultPartitions)
				}
				opts := []cluster.Option{cluster.WithPrefix(prefix), cluster.WithPartitions(n)}
				if *force {
					opts = append(opts, cluster.WithMigrateForce())
				}
				rep, err := cluster.Migrate(ctx, rs.rdb, opts...)
				if err != nil {
					if ctx.Err() != nil {
						return &hinted{err: err, hint: fmt.Sprintf("interrupted after %d task(s); nothing is lost: run it again, with a longer -timeout, to finish", rep.Tasks())}
					}
					return err
				}
				if s.json {
					writeJSON(s.stdout, migrateJSON{Partitions: rep.Partitions, Pending: rep.Pending, Running: rep.Running,
						Dead: rep.Dead, Done: rep.Done, Unindexed: rep.Unindexed, Markers: rep.Markers, Dropped: rep.Dropped,
						PausedKinds: append([]string{}, rep.PausedKinds...), Seconds: rep.Elapsed.Seconds()})
					return nil
				}
				fmt.Fprintf(s.stdout, "moved %d task(s) into %d partitions in %v: %d pending, %d running, %d dead, %d done, %d unindexed; %d done marker(s)\n",
					rep.Tasks(), rep.Partitions, rep.Elapsed.Round(time.Millisecond), rep.Pending, rep.Running, rep.Dead, rep.Done, rep.Unindexed, rep.Markers)
				if rep.Dropped > 0 {
					fmt.Fprintf(s.stdout, "removed %d entries of the old sets whose task was gone\n", rep.Dropped)
				}
				if len(rep.PausedKinds) > 0 {
					fmt.Fprintf(s.stdout, "paused in every partition: %s\n", strings.Join(rep.PausedKinds, ", "))
				}
				return nil
			}
		},
	}
}
