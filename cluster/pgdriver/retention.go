package pgdriver

import (
	"context"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Retention: done records are bounded by age and number (driver.KeepDone,
// the cluster's WithKeepDone), and TrimDone deletes those past the
// bounds; done markers and timeline minutes are kept for their time, and
// PurgeExpired deletes them after (the driver runs it by itself:
// driver_purge.go). Both delete in batches, so that no one statement
// holds many row locks or leaves autovacuum a mountain of dead rows at
// once (River's job cleaner, which deletes completed jobs in batches too).

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
	aged, _, err := deleteBatches(ctx, s.pool, "trim done", `
DELETE FROM stpe_tasks WHERE id IN (
    SELECT id FROM stpe_tasks
    WHERE state = 'done' AND (expires_at <= statement_timestamp()
        OR finished_at <= statement_timestamp() - $2::bigint * interval '1 microsecond')
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)`, batch, 0, micros(keep.Age))
	if err != nil {
		return aged, err
	}
	over, _, err := deleteBatches(ctx, s.pool, "trim done", `
DELETE FROM stpe_tasks WHERE id IN (
    SELECT id FROM stpe_tasks
    WHERE state = 'done'
    ORDER BY finished_at DESC, id DESC
    OFFSET $2
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)`, batch, 0, keep.Max)
	return aged + over, err
}

// PurgeExpired deletes what expired by the database's clock: the done
// markers and the timeline minutes whose time ran out, and the done
// records past the age they were kept for (hidden already, as if gone),
// batch rows per statement (each its own transaction), skipping the rows
// others hold locked, until none is left; it returns how many rows it
// deleted. A Driver runs it by itself, in bounded runs (Driver.Expired,
// Options.PurgeEvery); a program calls it only with that purge turned
// off. A batch below 1 is an error wrapping scheduler.ErrInvalidArgument.
func (s *Store) PurgeExpired(ctx context.Context, batch int) (int, error) {
	if batch < 1 {
		return 0, invalid("purge expired", "batch %d < 1", batch)
	}
	n, _, err := purgeExpired(ctx, s.pool, batch, 0)
	return n, err
}

// expiredDeletes are the statements of the purge, each deleting at most
// its first argument of expired rows, found by an index on expires_at:
// done records, done markers, timeline minutes.
var expiredDeletes = []string{`
DELETE FROM stpe_tasks WHERE id IN (
    SELECT id FROM stpe_tasks WHERE state = 'done' AND expires_at <= statement_timestamp()
    LIMIT $1 FOR UPDATE SKIP LOCKED
)`, `
DELETE FROM stpe_done_marks WHERE id IN (
    SELECT id FROM stpe_done_marks WHERE expires_at <= statement_timestamp()
    LIMIT $1 FOR UPDATE SKIP LOCKED
)`, `
DELETE FROM stpe_timeline WHERE (minute, partition, kind, field) IN (
    SELECT minute, partition, kind, field FROM stpe_timeline WHERE expires_at <= statement_timestamp()
    LIMIT $1 FOR UPDATE SKIP LOCKED
)`}

// purgeExpired runs expiredDeletes on q, batch rows per statement, at
// most maxBatches statements of each (no bound if 0), and returns the
// rows deleted; more is true if a statement stopped at the bound, rows
// perhaps left.
func purgeExpired(ctx context.Context, q querier, batch, maxBatches int) (deleted int, more bool, err error) {
	for _, sql := range expiredDeletes {
		n, left, err := deleteBatches(ctx, q, "purge expired", sql, batch, maxBatches)
		deleted += n
		more = more || left
		if err != nil {
			return deleted, more, err
		}
	}
	return deleted, more, nil
}

// deleteBatches runs sql (a DELETE of at most its first argument, batch,
// rows) on q until it deletes fewer than batch, or maxBatches times (no
// bound if 0), and returns the rows deleted; more is true if it stopped
// at maxBatches after a full batch.
func deleteBatches(ctx context.Context, q querier, what, sql string, batch, maxBatches int, args ...any) (total int, more bool, err error) {
	for runs := 0; maxBatches == 0 || runs < maxBatches; runs++ {
		tag, err := q.Exec(ctx, sql, append([]any{batch}, args...)...)
		if err != nil {
			return total, false, failed(what, err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < batch {
			return total, false, nil
		}
	}
	return total, true, nil
}
