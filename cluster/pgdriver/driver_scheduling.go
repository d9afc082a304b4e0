package pgdriver

import (
	"context"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// The Scheduling group of driver.Driver (cluster/driver/scheduling.go):
// storing tasks, canceling them, and
// trimming the done records, on the Store's statements.

// Schedule stores t unless its ID is taken, in one statement (or, when
// the ID is taken, a few on fresh snapshots, Store.Schedule), pending at
// t.Due; the insert notifies its partition's channel. It answers
// StoredCreated, StoredExists (the same task by kind, payload and due
// time; the metadata is not part of its identity) or StoredAlreadyDone
// (the done marker of the same task holds the ID), and an error wrapping
// driver.ErrIDConflict when the ID holds a different task. A done record
// no marker holds is replaced by a task of its kind. River's Insert,
// asynq's Client.Enqueue.
func (d *Driver) Schedule(ctx context.Context, t NewTask) (Stored, error) {
	r, err := d.st.Schedule(ctx, taskOf(t))
	if err != nil {
		return 0, err
	}
	return storedOf(t, r)
}

// ScheduleMany stores each of tasks as Schedule does, all in one
// transaction (so every task of the call shares its outcome: on an error
// of the store, each result has it), and returns one result per task, in
// order; a conflict is that task's alone. A task under an ID given twice
// is stored once; a different task under an ID used earlier in tasks is
// a conflict. River's InsertMany.
func (d *Driver) ScheduleMany(ctx context.Context, tasks []NewTask) []ScheduleManyResult {
	out := make([]ScheduleManyResult, len(tasks))
	all := make([]Task, len(tasks))
	for i, t := range tasks {
		all[i] = taskOf(t)
	}
	rs, err := d.st.ScheduleMany(ctx, all)
	for i, t := range tasks {
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i].Stored, out[i].Err = storedOf(t, rs[i])
	}
	return out
}

// Cancel removes task id in whatever state, in one statement
// (Store.Cancel): a periodic occurrence (kind "@...") keeps its done
// marker for retention, so that no node stores it again; with keep.Max
// above 0 the task becomes a done record stamped by the database's clock,
// its last run record saying canceled (a done record itself is removed).
// It tells the partition's channel "removed" (a done record's removal
// tells nothing). removed is false for a missing task; wasRunning is
// true if it was claimed. kind is not needed: the row holds the kind.
// River's JobCancel, asynq's Inspector.DeleteTask.
func (d *Driver) Cancel(ctx context.Context, id, kind string, retention time.Duration, keep driver.KeepDone) (removed, wasRunning bool, err error) {
	c, err := d.st.Cancel(ctx, id, Ending{Retention: retention, Keep: keep})
	return c.Removed, c.WasRunning, err
}

// DoneToTrim lists, by partition index, the done records past the bounds
// of KeepDone: those finished (by the database's clock, when the record
// was made) before olderThan (the caller's time), and, of the rest, the
// oldest past the newest max across all partitions; at most batch per
// partition of the aged, and batch in all of the rest (as the Redis
// driver lists them). full is true if there was more to trim than it
// listed. It only reads: RemoveDone removes them. River's job
// cleaner, asynq's janitor.
func (d *Driver) DoneToTrim(ctx context.Context, olderThan time.Time, max, batch int) (victims map[int][]string, full bool, err error) {
	if max < 0 || batch < 1 {
		return nil, false, invalid("done to trim", "max %d < 0 or batch %d < 1", max, batch)
	}
	rows, err := d.st.pool.Query(ctx, `
WITH aged AS (
    SELECT partition, id, row_number() OVER (PARTITION BY partition ORDER BY finished_at, id) AS n
    FROM stpe_tasks WHERE state = 'done' AND finished_at < $1
), past_max AS (
    SELECT partition, id, row_number() OVER (ORDER BY finished_at, id) AS n
    FROM (
        SELECT partition, id, finished_at FROM stpe_tasks
        WHERE state = 'done' AND finished_at >= $1
        ORDER BY finished_at DESC, id DESC
        OFFSET $2
    ) AS rest
)
SELECT partition, id, n FROM aged WHERE n <= $3 + 1
UNION ALL
SELECT partition, id, n FROM past_max WHERE n <= $3 + 1`, toTime(olderThan), max, batch)
	if err != nil {
		return nil, false, failed("done to trim", err)
	}
	victims, full, err = byPartition(rows, batch)
	if err != nil {
		return nil, false, failed("done to trim", err)
	}
	return victims, full, nil
}

// byPartition reads rows of (partition, id, rank of the row in its
// partition) into the IDs of each partition, those ranked up to limit;
// full is true if a row is ranked past it.
func byPartition(rows pgx.Rows, limit int) (ids map[int][]string, full bool, err error) {
	ids = make(map[int][]string)
	var (
		part int
		id   string
		rank int64
	)
	_, err = pgx.ForEachRow(rows, []any{&part, &id, &rank}, func() error {
		if rank > int64(limit) {
			full = true
		} else {
			ids[part] = append(ids[part], id)
		}
		return nil
	})
	return ids, full, err
}

// RemoveDone removes the done records victims (by partition index) in one
// statement, leaving any that is no longer a done record (stored again,
// or removed meanwhile), or not of the partition it is listed under; it
// returns how many it removed.
func (d *Driver) RemoveDone(ctx context.Context, victims map[int][]string) (int, error) {
	ids, parts := listedIDs(victims)
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := d.st.pool.Exec(ctx, `
DELETE FROM stpe_tasks t USING unnest($1::text[], $2::integer[]) AS v(id, partition)
WHERE t.id = v.id AND t.partition = v.partition AND t.state = 'done'`, ids, parts)
	if err != nil {
		return 0, failed("remove done", err)
	}
	return int(tag.RowsAffected()), nil
}

// listedIDs flattens IDs listed by partition index into the IDs and, at
// the same index, their partitions, as a statement's arrays.
func listedIDs(byPartition map[int][]string) (ids []string, parts []int32) {
	for p, list := range byPartition {
		for _, id := range list {
			ids, parts = append(ids, id), append(parts, int32(p))
		}
	}
	return ids, parts
}

// taskOf is t as the Store takes it.
func taskOf(t NewTask) Task {
	return Task{ID: t.ID, Kind: t.Kind, Payload: t.Payload, Due: t.Due, MaxRetries: t.MaxRetries,
		Metadata: t.Metadata, Fixed: t.FixedID}
}

// storedOf is the Store's result r of storing t as the driver answers
// it: Conflict is an error wrapping driver.ErrIDConflict.
func storedOf(t NewTask, r ScheduleResult) (Stored, error) {
	switch r {
	case Created:
		return StoredCreated, nil
	case Exists:
		return StoredExists, nil
	case AlreadyDone:
		return StoredAlreadyDone, nil
	}
	return 0, fmt.Errorf("cluster: schedule %s: %q: %w", t.Kind, t.ID, driver.ErrIDConflict)
}
