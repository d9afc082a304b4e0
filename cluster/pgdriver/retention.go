package pgdriver

import (
	"context"
)

// Retention: a done task is kept until its retention ends (Complete's
// argument), then PurgeDone deletes it, in batches, so that no one
// statement holds many row locks or leaves autovacuum a mountain of dead
// rows at once (River's job cleaner, which deletes completed jobs in
// batches too).

// PurgeDone deletes the done tasks whose retention ended by the
// database's clock, batch rows per statement (each its own transaction),
// until fewer than batch are left, skipping the rows others hold locked.
// It returns how many it deleted. A batch below 1 is an error wrapping
// scheduler.ErrInvalidArgument.
func (s *Store) PurgeDone(ctx context.Context, batch int) (int, error) {
	if batch < 1 {
		return 0, invalid("purge done", "batch %d < 1", batch)
	}
	total := 0
	for {
		tag, err := s.pool.Exec(ctx, `
DELETE FROM stpe_tasks WHERE id IN (
    SELECT id FROM stpe_tasks
    WHERE state = 'done' AND expires_at <= statement_timestamp()
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)`, batch)
		if err != nil {
			return total, failed("purge done", err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < batch {
			return total, nil
		}
	}
}
