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

// LoadWindow returns up to limit pending tasks of partitions (all if nil)
// to run at or before until, earliest first, but none of a paused kind.
// It reads the partial index of pending tasks by partition and run time.
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
	rows, err := s.pool.Query(ctx, `
SELECT t.id, t.kind, t.partition, t.run_at FROM stpe_tasks t
WHERE t.state = 'pending' AND t.run_at <= $2
  AND ($1::integer[] IS NULL OR t.partition = ANY($1::integer[]))
  AND `+notPaused+`
ORDER BY t.run_at, t.id
LIMIT $3`, partitionsArg(partitions), toTime(until), limit)
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
