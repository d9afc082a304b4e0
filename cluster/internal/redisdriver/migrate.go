package redisdriver

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Migrate: the upgrade from the single-slot layout of the versions before
// partitions (OldLayout) to the partitions. Every task is copied into its
// partition (its hash with every field, its place in its state's set and
// its kind's index, with the same score), in one MULTI/EXEC per partition
// and round, and only then deleted from the old keys. A task is thus
// always in the old keys, or in its partition, or (between the two steps)
// in both with the same content; a rerun after an interruption copies
// again what is still in the old keys, overwriting the copy exactly, so
// nothing is lost and nothing doubled. The order is: the paused kinds
// first (so that a paused kind's pending task lands paused), then the
// tasks by state, then the task hashes found in no state's set and the
// done markers, then the old sets of kinds, and last the layout record,
// which lets nodes of this version start.

// migrateBatch is how many tasks Migrate moves per round: a round reads
// their hashes in one pipeline, copies them in one transaction per
// partition (run side by side) and deletes the old keys in one pipeline.
const migrateBatch = 5000

// migrateScanCount is the COUNT of the SCAN that finds the keys of the old
// layout outside its sets.
const migrateScanCount = 10000

// migrateParallel is how many partitions' transactions a round runs at
// once.
const migrateParallel = 16

// MigrateReport says what Migrate moved (driver.MigrateReport).
type MigrateReport = driver.MigrateReport

// MigrateOptions say what Migrate moves, and how.
type MigrateOptions struct {
	// Prefix and Partitions name the keyspace and the partitions to
	// move its tasks into.
	Prefix     string
	Partitions int
	// Force moves even while nodes are registered as live.
	Force bool
	// Batch is how many tasks a round moves; 0 is migrateBatch.
	Batch int
}

// MigrateError is a step of Migrate that failed: Step says which.
type MigrateError struct {
	Step string
	Err  error
}

func (e *MigrateError) Error() string { return "migrate: " + e.Step + ": " + e.Err.Error() }

func (e *MigrateError) Unwrap() error { return e.Err }

// LiveNodesError is Migrate's refusal while nodes are registered as live
// under the prefix; it wraps driver.ErrLayout.
type LiveNodesError struct{ Names []string }

func (e *LiveNodesError) Error() string {
	return "migrate: live nodes: " + strings.Join(e.Names, ", ")
}

func (e *LiveNodesError) Unwrap() error { return driver.ErrLayout }

// Migrate moves every task stored under o.Prefix in the single-slot layout
// of the versions before partitions into o.Partitions partitions, in
// rounds of o.Batch tasks, the paused kinds first; it refuses, with a
// *LiveNodesError, while nodes are registered as live (unless o.Force).
// It leaves the layout record to the caller's CheckLayout, which is the
// last step. A failed step is a *MigrateError; the report says what was
// moved until then (but its Elapsed, which the caller measures).
func Migrate(ctx context.Context, rdb redis.UniversalClient, o MigrateOptions) (MigrateReport, error) {
	m := &migration{rdb: rdb, prefix: o.Prefix, parts: PartitionsOf(o.Prefix, o.Partitions),
		old: OldLayout{Prefix: o.Prefix}, batch: o.Batch}
	if m.batch <= 0 {
		m.batch = migrateBatch
	}
	m.report.Partitions = o.Partitions
	err := m.run(ctx, o.Force)
	return m.report, err
}

// migration is one run of Migrate.
type migration struct {
	rdb    redis.UniversalClient
	prefix string
	parts  []Partition
	old    OldLayout
	batch  int
	paused map[string]bool // the kinds paused in the old layout
	report MigrateReport
}

// step is the error of a failed step of the migration.
func step(what string, err error) error { return &MigrateError{Step: what, Err: err} }

// run does the migration's steps in order.
func (m *migration) run(ctx context.Context, force bool) error {
	if !force {
		if err := m.checkNoLiveNodes(ctx); err != nil {
			return err
		}
	}
	if err := m.pauseKinds(ctx); err != nil {
		return step("pause the paused kinds in every partition", err)
	}
	kinds, err := m.kinds(ctx)
	if err != nil {
		return step("read the kinds", err)
	}
	for _, state := range driver.States {
		sources := []string{m.old.StateSet(string(state))}
		for _, k := range kinds {
			sources = append(sources, m.old.KindIndex(string(state), k))
		}
		for _, src := range sources {
			if err := m.drain(ctx, state, src); err != nil {
				return step("move the "+string(state)+" tasks of "+src, err)
			}
		}
	}
	if err := m.scan(ctx, globEscape(m.old.Prefix)+":*", m.moveStrays); err != nil {
		return step("move the task hashes and done markers", err)
	}
	if err := m.rdb.Del(ctx, m.old.Kinds()).Err(); err != nil {
		return step("delete the old set of kinds", err)
	}
	if err := m.rdb.Del(ctx, m.old.Paused()).Err(); err != nil {
		return step("delete the old set of paused kinds", err)
	}
	return nil
}

// checkNoLiveNodes refuses while nodes are registered as live: their
// registration (prefix:nodes) expires after Redis's now.
func (m *migration) checkNoLiveNodes(ctx context.Context) error {
	now, err := m.rdb.Time(ctx).Result()
	if err != nil {
		return step("read Redis's clock", err)
	}
	live, err := m.rdb.ZRangeByScore(ctx, Keys{Prefix: m.prefix}.Nodes(), &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(now.UnixMicro(), 10), Max: "+inf"}).Result()
	if err != nil {
		return step("read the live nodes", err)
	}
	if len(live) > 0 {
		return &LiveNodesError{Names: live}
	}
	return nil
}

// pauseKinds pauses the old layout's paused kinds in every partition.
func (m *migration) pauseKinds(ctx context.Context) error {
	kinds, err := m.rdb.SMembers(ctx, m.old.Paused()).Result()
	if err != nil {
		return err
	}
	slices.Sort(kinds)
	m.paused = make(map[string]bool, len(kinds))
	for _, k := range kinds {
		m.paused[k] = true
	}
	m.report.PausedKinds = kinds
	if len(kinds) == 0 {
		return nil
	}
	pipe := m.rdb.Pipeline()
	for _, p := range m.parts {
		pipe.SAdd(ctx, p.Paused(), anys(kinds)...)
	}
	_, err = pipe.Exec(ctx)
	return err
}

// kinds are every kind the old layout has an index of: those its sets of
// kinds name, and those of the index keys found by a scan (a kind index
// whose kind the set no longer names holds no task in a sound keyspace,
// but nothing is left behind).
func (m *migration) kinds(ctx context.Context) ([]string, error) {
	kinds, err := oldKinds(ctx, m.rdb, m.old)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(kinds))
	for _, k := range kinds {
		seen[k] = true
	}
	prefix := m.old.IndexPrefix()
	err = m.scan(ctx, globEscape(prefix)+"*", func(_ context.Context, keys []string) error {
		for _, key := range keys {
			rest, ok := strings.CutPrefix(key, prefix)
			if !ok {
				continue
			}
			for _, st := range driver.States {
				if k, ok := strings.CutPrefix(rest, string(st)+":"); ok && !seen[k] {
					seen[k] = true
					kinds = append(kinds, k)
				}
			}
		}
		return nil
	})
	return kinds, err
}
