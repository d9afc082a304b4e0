package pgdriver

import (
	"context"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Retention: done records are bounded by age and number (driver.KeepDone,
// the cluster's WithKeepDone), and TrimDone deletes those past the
// bounds; done markers and timeline minutes are kept for their time, and
// PurgeExpired deletes them after. Both delete in batches, so that no one
// statement holds many row locks or leaves autovacuum a mountain of dead
// rows at once (River's job cleaner, which deletes completed jobs in
// batches too).

// TrimDone deletes the done records past keep's bounds: those older than
// keep.Age by the database's clock (or past the age they were kept for),
// then the oldest past the newest keep.Max, batch rows per statement (each
// its own transaction), skipping the rows others hold locked, until fewer
// than batch are left each way; the Redis store's trim of done records.
// It returns how many it deleted. A batch below 1, an age of zero or less
// or a max below 1 is an error wrapping scheduler.ErrInvalidArgument.
func (s *Store) TrimDone(ctx context.Context, keep driver.KeepDone, batch int) (int, error) {
	if batch < 1 || keep.Age <= 0 || keep.Max < 1 {
		return 0, invalid("trim done", "batch %d, age %v and max %d must be > 0", batch, keep.Age, keep.Max)
	}
	aged, err := s.deleteBatches(ctx, "trim done", `
DELETE FROM stpe_tasks WHERE id IN (
    SELECT id FROM stpe_tasks
    WHERE state = 'done' AND (expires_at <= statement_timestamp()
        OR finished_at <= statement_timestamp() - $2::bigint * interval '1 microsecond')
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)`, batch, micros(keep.Age))
	if err != nil {
		return aged, err
	}
	over, err := s.deleteBatches(ctx, "trim done", `
DELETE FROM stpe_tasks WHERE id IN (
    SELECT id FROM stpe_tasks
    WHERE state = 'done'
    ORDER BY finished_at DESC, id DESC
    OFFSET $2
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)`, batch, keep.Max)
	return aged + over, err
}

// PurgeExpired deletes the done markers and the timeline minutes whose
// time ran out by the database's clock, batch rows per statement, and
// returns how many rows it deleted. A batch below 1 is an error wrapping
// scheduler.ErrInvalidArgument.
func (s *Store) PurgeExpired(ctx context.Context, batch int) (int, error) {
	if batch < 1 {
		return 0, invalid("purge expired", "batch %d < 1", batch)
	}
	marks, err := s.deleteBatches(ctx, "purge expired", `
DELETE FROM stpe_done_marks WHERE id IN (
    SELECT id FROM stpe_done_marks WHERE expires_at <= statement_timestamp()
    LIMIT $1 FOR UPDATE SKIP LOCKED
)`, batch)
	if err != nil {
		return marks, err
	}
	minutes, err := s.deleteBatches(ctx, "purge expired", `
DELETE FROM stpe_timeline WHERE (minute, partition, kind, field) IN (
    SELECT minute, partition, kind, field FROM stpe_timeline WHERE expires_at <= statement_timestamp()
    LIMIT $1 FOR UPDATE SKIP LOCKED
)`, batch)
	return marks + minutes, err
}

// deleteBatches runs sql (a DELETE of at most its first argument, batch,
// rows) until it deletes fewer than batch, and returns the rows deleted.
func (s *Store) deleteBatches(ctx context.Context, what, sql string, batch int, args ...any) (int, error) {
	total := 0
	for {
		tag, err := s.pool.Exec(ctx, sql, append([]any{batch}, args...)...)
		if err != nil {
			return total, failed(what, err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < batch {
			return total, nil
		}
	}
}
