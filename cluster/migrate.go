package cluster

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"github.com/redis/go-redis/v9"
)

// Migrate: the upgrade from the single-slot layout of the versions before
// partitions to the partitions. The Redis driver moves the tasks
// (redisdriver.Migrate); this file holds the options, the checks before
// and after, and the words of its errors.

// MigrateReport says what Migrate moved (see driver.MigrateReport for
// its fields).
type MigrateReport = driver.MigrateReport

// migrateOption is an Option that Migrate alone reads; a Node ignores it.
type migrateOption struct {
	force bool // move even while live nodes are registered
	batch int  // tasks per round, if not 0 (tests)
}

func (migrateOption) apply(*config) {}

// WithMigrateForce lets Migrate run while nodes are registered as live
// under the prefix (prefix:nodes). Use it only when those nodes are known
// to be gone (their registrations expire a lease after they stopped): a
// node of the earlier version that still runs would go on writing the old
// layout, and its running tasks would be moved under it. A Node ignores
// this option.
func WithMigrateForce() Option { return migrateOption{force: true} }

// Migrate moves every task stored under the prefix (WithPrefix) in the
// single-slot layout of the versions before partitions into the
// partitions (WithPartitions), and then writes the layout record, so that
// nodes of this version, made with the same WithPartitions, start on the
// keyspace. Each task keeps its state, its score (due time, lease expiry,
// time of death or completion), every field of its hash (payload, attempts,
// history, owner...) and its kind's index entries; the done markers of
// tasks that ran (kept for WithRetention) keep the time they have left;
// the paused kinds are paused in every partition. The other options are
// ignored. Like a database migration (River's rivermigrate, Flyway), it
// runs once, with every node stopped: it refuses, with an error wrapping
// ErrLayout, while nodes are registered as live under the prefix (unless
// WithMigrateForce), and when the keyspace is recorded with another number
// of partitions or an unknown layout version.
//
// It is idempotent and resumable: each task is copied into its partition
// (one MULTI/EXEC) before its old keys are deleted, so if Migrate is
// interrupted (ctx canceled, a crash, Redis unreachable), nothing is lost
// and running it again finishes the job without doubling anything. On a
// keyspace with nothing to move it only writes the layout record. The
// work goes in rounds of thousands of tasks, a few round trips each (see
// docs/cluster-upgrade.md for the measured speed). A bad option is an
// error wrapping scheduler.ErrInvalidArgument; a Redis error is returned
// wrapped, with the report of what was moved until then.
func Migrate(ctx context.Context, rdb redis.UniversalClient, opts ...Option) (MigrateReport, error) {
	start := time.Now()
	cfg := defaultConfig()
	var mo migrateOption
	for _, o := range opts {
		if o == nil {
			return MigrateReport{}, invalid("migrate", "nil option")
		}
		if m, ok := o.(migrateOption); ok {
			mo.force = mo.force || m.force
			if m.batch > 0 {
				mo.batch = m.batch
			}
		}
		o.apply(&cfg)
	}
	if rdb == nil {
		return MigrateReport{}, invalid("migrate", "nil Redis client")
	}
	if err := cfg.validate(); err != nil {
		return MigrateReport{}, err
	}
	report := MigrateReport{Partitions: cfg.partitions}
	err := checkRecord(ctx, rdb, cfg.prefix, cfg.partitions)
	if err == nil {
		report, err = redisdriver.Migrate(ctx, rdb, redisdriver.MigrateOptions{Prefix: cfg.prefix,
			Partitions: cfg.partitions, Force: mo.force, Batch: mo.batch})
		err = migrateFailed(err, cfg.prefix)
	}
	if err == nil {
		drv := redisdriver.New(rdb, redisdriver.Options{Prefix: cfg.prefix, Partitions: cfg.partitions})
		err = checkedLayout(drv.CheckLayout(ctx), cfg.prefix, cfg.partitions)
	}
	report.Elapsed = time.Since(start)
	return report, err
}

// checkRecord refuses a keyspace recorded with another number of
// partitions or an unknown version.
func checkRecord(ctx context.Context, rdb redis.UniversalClient, prefix string, parts int) error {
	n, err := RecordedPartitions(ctx, rdb, prefix)
	if err != nil {
		return err
	}
	if n != 0 && n != parts {
		return &layoutError{why: "the keyspace under prefix " + strconv.Quote(prefix) + " is recorded with " +
			strconv.Itoa(n) + " partitions (" + redisdriver.LayoutKey(prefix) + "), not " + strconv.Itoa(parts) +
			": migrate with -partitions " + strconv.Itoa(n)}
	}
	return nil
}

// migrateFailed words the error of the driver's migration.
func migrateFailed(err error, prefix string) error {
	var step *redisdriver.MigrateError
	var live *redisdriver.LiveNodesError
	switch {
	case errors.As(err, &step):
		return failed("migrate: "+step.Step, step.Err)
	case errors.As(err, &live):
		return &layoutError{why: "migrate: " + strconv.Itoa(len(live.Names)) + " node(s) registered as live under prefix " +
			strconv.Quote(prefix) + " (" + strings.Join(live.Names, ", ") + "): stop every node first" +
			" (a stopped node's registration expires within a lease), or force it (WithMigrateForce, stpectl migrate -force)"}
	}
	return err
}
