package pgdriver

import (
	"context"
)

// Pausing kinds: no node claims or loads the pending tasks of a paused
// kind until it is resumed (River's QueuePause, asynq's PauseQueue, the
// cluster package's Pause). Tasks already running go on.

// Pause pauses kind; pausing it again does nothing.
func (s *Store) Pause(ctx context.Context, kind string) error {
	if kind == "" {
		return invalid("pause", "empty kind")
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO stpe_paused_kinds (kind) VALUES ($1) ON CONFLICT (kind) DO NOTHING`, kind); err != nil {
		return failed("pause "+kind, err)
	}
	return nil
}

// Resume resumes kind and, in the same transaction, tells every
// partition's channel ("resumed <kind>"), so that the nodes load its
// tasks again. Resuming a kind not paused does nothing.
func (s *Store) Resume(ctx context.Context, kind string) error {
	if kind == "" {
		return invalid("resume", "empty kind")
	}
	_, err := s.pool.Exec(ctx, `
WITH gone AS (DELETE FROM stpe_paused_kinds WHERE kind = $1 RETURNING kind)
SELECT pg_notify('stpe_p' || p, 'resumed ' || gone.kind)
FROM gone, generate_series(0, $2::integer - 1) AS p`, kind, s.partitions)
	if err != nil {
		return failed("resume "+kind, err)
	}
	return nil
}

// Paused reports whether kind is paused.
func (s *Store) Paused(ctx context.Context, kind string) (bool, error) {
	var paused bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM stpe_paused_kinds WHERE kind = $1)`, kind).Scan(&paused); err != nil {
		return false, failed("paused "+kind, err)
	}
	return paused, nil
}

// pausedKinds lists the paused kinds, for the statements that scan many
// pending tasks (claimManySQL, LoadWindow).
func (s *Store) pausedKinds(ctx context.Context) ([]string, error) {
	var kinds []string
	err := s.pool.QueryRow(ctx, `SELECT coalesce(array_agg(kind), '{}') FROM stpe_paused_kinds`).Scan(&kinds)
	return kinds, err
}
