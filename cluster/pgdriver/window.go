package pgdriver

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// The window: the pending tasks of a node's partitions that fall due
// within its look-ahead, which the node keeps in memory, each waiting in
// its scheduler for its run time (the cluster package's sweep).

// PendingTask is a task of a window: enough to wait for it and claim it.
type PendingTask struct {
	ID, Kind  string
	Partition int
	// RunAt is when it is to run (its due time, later after a failure).
	RunAt time.Time
}

// loadWindowSQL is LoadWindow's statement, for all partitions or (some)
// those of $1: $2 until, $3 limit, $4 the paused kinds (a parameter, as
// in claimManySQL, so that the planner reads the due index in order).
func loadWindowSQL(some bool) string {
	where := "AND $1::integer[] IS NULL" // all: $1 is NULL, named so that its type is known
	if some {
		where = "AND t.partition = ANY($1::integer[])"
	}
	return `
SELECT t.id, t.kind, t.partition, t.run_at FROM stpe_tasks t
WHERE t.state = 'pending' AND t.run_at <= $2 ` + where + `
  AND t.kind <> ALL ($4::text[])
ORDER BY t.run_at
LIMIT $3`
}

var (
	loadWindowAll  = loadWindowSQL(false)
	loadWindowSome = loadWindowSQL(true)
)

// LoadWindow returns up to limit pending tasks of partitions (all if nil)
// to run at or before until, earliest first, but none of a paused kind.
// It reads the partial indexes of pending tasks by run time.
func (s *Store) LoadWindow(ctx context.Context, partitions []int, until time.Time, limit int) ([]PendingTask, error) {
	if limit < 1 {
		return nil, invalid("load window", "limit %d < 1", limit)
	}
	if until.IsZero() {
		return nil, invalid("load window", "zero until")
	}
	if err := s.validPartitions("load window", partitions); err != nil {
		return nil, err
	}
	paused, err := s.pausedKinds(ctx)
	if err != nil {
		return nil, failed("load window", err)
	}
	sql := loadWindowAll
	if partitions != nil {
		sql = loadWindowSome
	}
	rows, err := s.pool.Query(ctx, sql, partitionsArg(partitions), toTime(until), limit, paused)
	if err != nil {
		return nil, failed("load window", err)
	}
	tasks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PendingTask, error) {
		var p PendingTask
		err := r.Scan(&p.ID, &p.Kind, &p.Partition, &p.RunAt)
		return p, err
	})
	if err != nil {
		return nil, failed("load window", err)
	}
	return tasks, nil
}
