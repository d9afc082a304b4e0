package pgdriver

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The Claims group of driver.Driver (cluster/driver/claims.go), so far renewing leases, listing the expired
// ones, and recording a completion or a hand-back. Every time they stamp
// or compare is the database's clock.

// Extend renews, to the database's now plus lease, the leases of held
// whose owner still holds them, all in one statement (rows locked in ID
// order, so two calls never deadlock), and returns the IDs of the others
// (reaped, canceled or claimed by another owner since). River's and
// asynq's heartbeats.
func (d *Driver) Extend(ctx context.Context, lease time.Duration, held []Held) (lost []string, err error) {
	leases := make([]Lease, len(held))
	for i, h := range held {
		leases[i] = Lease{ID: h.ID, Token: h.Owner}
	}
	return d.st.Extend(ctx, leases, lease)
}

// Expired lists, by partition index, the running tasks of partitions
// (all if nil) whose lease expired by the database's clock, at most limit
// per partition, earliest expiry first; full is true if some partition
// had more. It only reads: the reaper takes them back.
func (d *Driver) Expired(ctx context.Context, partitions []int, limit int) (expired map[int][]string, full bool, err error) {
	if limit < 1 {
		return nil, false, invalid("expired", "limit %d < 1", limit)
	}
	if err := d.st.validPartitions("expired", partitions); err != nil {
		return nil, false, err
	}
	rows, err := d.st.pool.Query(ctx, `
SELECT partition, id, n FROM (
    SELECT partition, id, row_number() OVER (PARTITION BY partition ORDER BY lease_expires, id) AS n
    FROM stpe_tasks
    WHERE state = 'running' AND lease_expires <= statement_timestamp()
      AND ($1::integer[] IS NULL OR partition = ANY($1::integer[]))
) AS due WHERE n <= $2 + 1`, partitionsArg(partitions), limit)
	if err != nil {
		return nil, false, failed("expired", err)
	}
	expired, full, err = byPartition(rows, limit)
	if err != nil {
		return nil, false, failed("expired", err)
	}
	return expired, full, nil
}

// Complete records the successful run of task id held by owner, in one
// statement (Store.Complete): the task is deleted, or kept as a done
// record by keep; a fixed ID keeps its done marker for retention; the run
// is counted in tl. It answers RecordedDone, or RecordedLost when owner
// no longer holds the task (nothing is changed). kind is not needed: the
// row holds it. River's JobSetStateIfRunning (completed), asynq's
// MarkAsComplete.
func (d *Driver) Complete(ctx context.Context, id, kind, owner string, retention time.Duration, keep driver.KeepDone, tl driver.Timeline) (Recorded, error) {
	out, err := d.st.Complete(ctx, id, owner, Ending{Retention: retention, Keep: keep, Timeline: tl})
	return Recorded(out), err
}

// Release hands task id held by owner back to pending, for the time it
// was pending for, without counting an attempt (RecordedReleased); the
// change notifies its partition, and the run is recorded as handed back.
// RecordedLost when owner no longer holds the task. asynq's Requeue on
// shutdown.
func (d *Driver) Release(ctx context.Context, id, kind, owner string) (Recorded, error) {
	out, err := d.st.Release(ctx, id, owner)
	return Recorded(out), err
}
