package pgdriver

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// loadDueSQL is LoadDue's statement: for each pair of kind ($1) and
// partition ($2) whose kind is not paused, up to $4 of its pending tasks
// pending for no later than $3, earliest first (or, with newest, latest
// first), each pair read from the partition's pending tasks by run_at
// (the index stpe_tasks_pending), in its order, up to $3: the tasks of
// the kinds not asked are passed over in the range, a cost the window
// pays rather than every insert paying one index more.
func loadDueSQL(newest bool) string {
	order := "t.run_at"
	if newest {
		order = "t.run_at DESC"
	}
	return `
SELECT p.kind, p.partition, t.id, t.run_at
FROM unnest($1::text[], $2::integer[]) AS p(kind, partition)
CROSS JOIN LATERAL (
    SELECT t.id, t.run_at FROM stpe_tasks t
    WHERE t.state = 'pending' AND t.partition = p.partition AND t.kind = p.kind AND t.run_at <= $3
    ORDER BY ` + order + `
    LIMIT $4
) AS t
WHERE NOT EXISTS (SELECT 1 FROM stpe_paused_kinds k WHERE k.kind = p.kind)`
}

var (
	loadDueEarliest = loadDueSQL(false)
	loadDueNewest   = loadDueSQL(true)
)

// LoadDue reads, in one statement, the pending tasks of the given kinds
// and partitions (kinds[kind][i] is true to read partition i of kind)
// pending for no later than until, at most limit in all, shared evenly
// among the pairs of kind and partition (at least one each); newest reads
// each pair's latest first, else its earliest. A paused kind is left out.
// full is true if some pair had as many tasks as its share. It is a read:
// until is the caller's time, and whether a task is due is decided by the
// claim, by the database's clock. River's scheduler and asynq's forwarder
// read the same range.
func (d *Driver) LoadDue(ctx context.Context, kinds map[string][]bool, until time.Time, newest bool, limit int) (tasks []driver.PendingTask, full bool, err error) {
	var pairKinds []string
	var pairParts []int32
	for kind, parts := range kinds {
		if len(parts) > d.st.partitions {
			return nil, false, invalid("load due", "kind %q: %d partitions asked of %d", kind, len(parts), d.st.partitions)
		}
		for i, ok := range parts {
			if ok {
				pairKinds, pairParts = append(pairKinds, kind), append(pairParts, int32(i))
			}
		}
	}
	if len(pairKinds) == 0 {
		return nil, false, nil
	}
	share := max(limit/len(pairKinds), 1)
	sql := loadDueEarliest
	if newest {
		sql = loadDueNewest
	}
	rows, err := d.st.pool.Query(ctx, sql, pairKinds, pairParts, toTime(until), share)
	if err != nil {
		return nil, false, failed("load due", err)
	}
	type pair struct {
		kind string
		part int32
	}
	read := make(map[pair]int)
	var (
		p    driver.PendingTask
		part int32
	)
	_, err = pgx.ForEachRow(rows, []any{&p.Kind, &part, &p.ID, &p.Due}, func() error {
		tasks = append(tasks, p)
		read[pair{p.Kind, part}]++
		full = full || read[pair{p.Kind, part}] >= share
		return nil
	})
	if err != nil {
		return nil, false, failed("load due", err)
	}
	return tasks, full, nil
}
