package pgdriver

import (
	"context"
	"errors"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// The Operations group's reads of tasks: one task, a page of a state, the
// counts. Each is one statement, so it reads every partition at one
// instant.

// Get reads task id with its run history and whether its kind is paused,
// in one statement (Store.Get's); ok is false if none is stored (a done
// record past its age is not). A pending task's NextRun is its run time.
// asynq's Inspector.GetTaskInfo, River's JobGet.
func (d *Driver) Get(ctx context.Context, id string) (driver.TaskInfo, bool, error) {
	if id == "" {
		return driver.TaskInfo{}, false, invalid("get", "empty task ID")
	}
	var paused bool
	t, err := scanTask(d.st.pool.QueryRow(ctx, `
SELECT `+taskColumns+`, `+pausedColumn("t")+` FROM stpe_tasks t
WHERE id = $1 AND NOT (state = 'done' AND expires_at <= statement_timestamp())`, id), &paused)
	if errors.Is(err, pgx.ErrNoRows) {
		return driver.TaskInfo{}, false, nil
	}
	if err != nil {
		return driver.TaskInfo{}, false, failed("get "+id, err)
	}
	return infoOf(t, paused), true, nil
}

// countsSQL counts the tasks of each state, each from its state's partial
// index; a done record past its age is not counted.
const countsSQL = `
SELECT (SELECT count(*) FROM stpe_tasks WHERE state = 'pending'),
    (SELECT count(*) FROM stpe_tasks WHERE state = 'running'),
    (SELECT count(*) FROM stpe_tasks WHERE state = 'dead'),
    (SELECT count(*) FROM stpe_tasks WHERE state = 'done' AND expires_at > statement_timestamp())`

// Counts counts the stored tasks by state in one statement, so every
// partition at one instant (by the database's clock for the done records'
// age); a paused kind's pending tasks count as pending. asynq's
// Inspector.GetQueueInfo.
func (d *Driver) Counts(ctx context.Context) (driver.Counts, error) {
	var c driver.Counts
	if err := d.st.pool.QueryRow(ctx, countsSQL).Scan(&c.Pending, &c.Running, &c.Dead, &c.Done); err != nil {
		return driver.Counts{}, failed("counts", err)
	}
	return c, nil
}

// CountsByKind counts the stored tasks by kind and state in one statement,
// with the paused kinds (those with no task too), sorted by kind. A kind
// is only its tasks' column, so a kind left with no task is forgotten as
// soon as its last task goes: nothing is left to forget.
func (d *Driver) CountsByKind(ctx context.Context) (driver.Counts, []driver.KindCounts, error) {
	rows, err := d.st.pool.Query(ctx, `
WITH counted AS (
    SELECT kind, count(*) FILTER (WHERE state = 'pending') AS pending,
        count(*) FILTER (WHERE state = 'running') AS running,
        count(*) FILTER (WHERE state = 'dead') AS dead,
        count(*) FILTER (WHERE state = 'done' AND expires_at > statement_timestamp()) AS done
    FROM stpe_tasks GROUP BY kind
)
SELECT coalesce(c.kind, p.kind), coalesce(c.pending, 0), coalesce(c.running, 0), coalesce(c.dead, 0),
    coalesce(c.done, 0), p.kind IS NOT NULL
FROM counted c FULL JOIN stpe_paused_kinds p ON p.kind = c.kind
ORDER BY 1`)
	if err != nil {
		return driver.Counts{}, nil, failed("counts by kind", err)
	}
	var (
		total driver.Counts
		out   []driver.KindCounts
		k     driver.KindCounts
	)
	_, err = pgx.ForEachRow(rows, []any{&k.Kind, &k.Pending, &k.Running, &k.Dead, &k.Done, &k.Paused}, func() error {
		total = total.Plus(k.Counts)
		if k.Counts != (driver.Counts{}) || k.Paused {
			out = append(out, k)
		}
		return nil
	})
	if err != nil {
		return driver.Counts{}, nil, failed("counts by kind", err)
	}
	return total, out, nil
}

// List reads a page of q.State (of q.Kind) after q.After in one statement,
// the tasks and their records at one instant, in the listing's order from
// the state's index: pending ones by run time (a paused kind's too),
// running ones by lease expiry, soonest first, dead and done ones newest
// first, ties by ID. Page.Next is the last task's position when the page
// is full. River's JobList with a cursor.
func (d *Driver) List(ctx context.Context, q driver.ListQuery) (driver.ListPage, error) {
	if err := validState("list", q.State); err != nil {
		return driver.ListPage{}, err
	}
	if q.Limit < 1 {
		return driver.ListPage{}, invalid("list", "limit %d < 1", q.Limit)
	}
	sql, args := listStatement(q)
	rows, err := d.st.pool.Query(ctx, sql, args...)
	if err != nil {
		return driver.ListPage{}, failed("list "+string(q.State), err)
	}
	defer rows.Close()
	var page driver.ListPage
	var last StoredTask
	for rows.Next() {
		var paused bool
		if last, err = scanTask(rows, &paused); err != nil {
			return driver.ListPage{}, failed("list "+string(q.State), err)
		}
		page.Tasks = append(page.Tasks, infoOf(last, paused))
	}
	if err := rows.Err(); err != nil {
		return driver.ListPage{}, failed("list "+string(q.State), err)
	}
	if len(page.Tasks) == q.Limit {
		page.Next = positionOf(last)
	}
	return page, nil
}

// listStatement is the statement of List and its parameters.
func listStatement(q driver.ListQuery) (string, []any) {
	var st statement
	o := stateOrders[q.State]
	where := st.selection(driver.Selection{State: q.State, Kind: q.Kind}, "t")
	if q.After != (driver.Position{}) {
		where += " AND " + st.after(o, "t", q.After)
	}
	return `
SELECT ` + taskColumns + `, ` + pausedColumn("t") + ` FROM stpe_tasks t
WHERE ` + where + `
ORDER BY ` + o.orderBy("t", false) + `
LIMIT ` + st.arg(q.Limit, "integer"), st.args
}
