package pgdriver

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// Leases: Extend renews the leases a node holds, and ReapExpired returns
// the tasks whose lease expired, by the database's clock, to pending,
// counting a lost run (not a failed attempt), or makes them dead past the
// limit of lost runs.

// Lease names a claimed task and the token that claimed it.
type Lease struct {
	ID, Token string
}

// Extend pushes back, to the database's now plus lease, the lease of each
// of held that its token still holds, in one statement, and returns the
// IDs whose lease is lost (reaped, canceled or claimed by another token),
// one for each element of held whose token does not hold its task.
// An expired lease not yet reaped is renewed, as in the Redis store. The
// rows are locked in ID order, so two calls never deadlock.
func (s *Store) Extend(ctx context.Context, held []Lease, lease time.Duration) (lost []string, err error) {
	if lease < time.Millisecond {
		return nil, invalid("extend", "lease %v shorter than a millisecond", lease)
	}
	if len(held) == 0 {
		return nil, nil
	}
	ids, tokens := make([]string, len(held)), make([]string, len(held))
	for i, h := range held {
		if err := validOwner("extend", h.ID, h.Token); err != nil {
			return nil, err
		}
		ids[i], tokens[i] = h.ID, h.Token
	}
	rows, err := s.pool.Query(ctx, `
WITH held AS (
    SELECT t.id FROM stpe_tasks t
    JOIN unnest($1::text[], $2::text[]) AS h(id, token) ON t.id = h.id AND t.lease_token = h.token -- so running (completeOne)
    ORDER BY t.id
    FOR UPDATE OF t
)
UPDATE stpe_tasks t SET lease_expires = statement_timestamp() + $3::bigint * interval '1 microsecond'
FROM held WHERE t.id = held.id
RETURNING t.id, t.lease_token`, ids, tokens, micros(lease))
	if err != nil {
		return nil, failed("extend", err)
	}
	renewed, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Lease])
	if err != nil {
		return nil, failed("extend", err)
	}
	kept := make(map[Lease]bool, len(renewed))
	for _, l := range renewed {
		kept[l] = true
	}
	for _, h := range held {
		if !kept[h] {
			lost = append(lost, h.ID)
		}
	}
	return lost, nil
}

// LostRun is a run whose lease expired, as ReapExpired returned its task:
// driver.LostRun.
type LostRun = driver.LostRun

// LeaseExpiredError is the last error ReapExpired writes on a task.
const LeaseExpiredError = "cluster: lease expired: the node running the task stopped, stalled or lost the database"

// reapSQL is the statement that takes back the expired runs of the rows
// picked (a condition on the row t, and the rest of its SELECT: order and
// limit), whose lease is still expired by the database's clock, skipping
// the rows another step holds (so two reapers never take a run back
// twice): $3 max lost runs, $4 the error, $5 and $6 the timeline's minute
// and TTL (µs). It returns the ID, kind and whether the task is dead of
// each run taken back.
func reapSQL(picked string) string {
	return `
WITH expired AS (
    SELECT t.id, t.partition, t.kind, t.run_at, t.claimed_at, t.lost_runs + 1 > $3 AS dead FROM stpe_tasks t
    WHERE t.state = 'running' AND t.lease_expires <= statement_timestamp() AND ` + picked + `
    FOR UPDATE SKIP LOCKED
), ` + countRun("expired", "'l'", "$5", "$6") + `
UPDATE stpe_tasks t SET ` + endedAs("'lost'", "$4") + `, lost_runs = t.lost_runs + 1, last_error = $4,
    state = CASE WHEN expired.dead THEN 'dead' ELSE 'pending' END,
    run_at = CASE WHEN expired.dead THEN t.run_at ELSE statement_timestamp() END,
    finished_at = CASE WHEN expired.dead THEN statement_timestamp() END
FROM expired WHERE t.id = expired.id AND t.state = 'running'
RETURNING t.id, t.kind, expired.dead`
}

var (
	// reapSome picks up to $2 rows of the partitions $1 (all if NULL),
	// earliest expiry first.
	reapSome = reapSQL(`($1::integer[] IS NULL OR t.partition = ANY($1::integer[]))
    ORDER BY t.lease_expires
    LIMIT $2`)
	// reapListed picks the rows of the IDs $1, each in the partition of
	// the same index of $2.
	reapListed = reapSQL(`(t.id, t.partition) IN (SELECT * FROM unnest($1::text[], $2::integer[]))`)
)

// ReapExpired returns up to limit tasks of partitions (all if nil) whose
// lease expired by the database's clock: each lost run is counted in the
// task's LostRuns, not as a failed attempt, and the task is pending again,
// due now (it was due when claimed), or dead once it lost more than
// maxLost runs (River's JobRescue, the cluster package's reaper). Rows
// another reaper holds are skipped, so reapers never return a task twice.
// Call it again while it returns limit runs. Each lost run is counted in
// the timeline tl (its lateness bucket and "lost").
func (s *Store) ReapExpired(ctx context.Context, partitions []int, limit, maxLost int, tl driver.Timeline) ([]LostRun, error) {
	if limit < 1 || maxLost < 0 {
		return nil, invalid("reap", "limit %d < 1 or max lost runs %d < 0", limit, maxLost)
	}
	if err := s.validPartitions("reap", partitions); err != nil {
		return nil, err
	}
	return s.reap(ctx, reapSome, partitionsArg(partitions), limit, maxLost, tl)
}

// reap runs sql, a reapSQL, with the picked rows' arguments a1 and a2.
func (s *Store) reap(ctx context.Context, sql string, a1, a2 any, maxLost int, tl driver.Timeline) ([]LostRun, error) {
	minute, ttl := timelineArgs(tl)
	rows, err := s.pool.Query(ctx, sql, a1, a2, maxLost, LeaseExpiredError, minute, ttl)
	if err != nil {
		return nil, failed("reap", err)
	}
	lost, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LostRun, error) {
		var l LostRun
		err := r.Scan(&l.ID, &l.Kind, &l.Dead)
		return l, err
	})
	if err != nil {
		return nil, failed("reap", err)
	}
	return lost, nil
}
