package pgdriver

import (
	"context"
	"slices"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The bulk actions: a statement per batch reads the next bulkBatch tasks
// of the selection in its state's order after the last batch (or the
// next chunk of the IDs given), locks those still selected in ID order
// (the order Extend locks in, so two bulk actions, or one and an Extend,
// never deadlock), re-checking each against the selection as it locks it,
// and applies the single action's steps to them. A task that moved on
// since it was read is matched, not changed; a task is changed whole or
// not at all; a running task is only ever canceled, as the single Cancel
// does (its holder then finds it lost).

// bulkBatch is how many tasks one statement of a bulk action reads.
const bulkBatch = 500

// bulkIDChunk is how many of the IDs of a selection by IDs one statement
// reads.
const bulkIDChunk = 4096

// bulkStates are the states each action may select, as the single
// action allows them.
var bulkStates = map[driver.BulkAction][]State{
	driver.BulkRetry:  {Dead},
	driver.BulkDelete: {Dead, Done},
	driver.BulkRunNow: {Pending},
	driver.BulkCancel: {Pending, Running, Dead, Done},
}

// CountSelected counts the tasks sel picks now in one statement, each ID
// of sel.IDs once.
func (d *Driver) CountSelected(ctx context.Context, sel driver.Selection) (int, error) {
	if err := validState("count selected", sel.State); err != nil {
		return 0, err
	}
	var st statement
	where := st.selection(sel, "t")
	if len(sel.IDs) > 0 {
		where += " AND t.id = ANY(" + st.arg(sel.IDs, "text[]") + ")"
	}
	var n int
	if err := d.st.pool.QueryRow(ctx, `SELECT count(*) FROM stpe_tasks t WHERE `+where, st.args...).Scan(&n); err != nil {
		return 0, failed("count selected", err)
	}
	return n, nil
}

// Bulk applies r.Action to what r.Selection picks, a batch per statement
// (see above): by the database's clock for BulkRunNow (a task due already
// when locked is matched, not changed). An action on a state it does not
// act on (a retry of pending tasks) is an error wrapping
// scheduler.ErrInvalidArgument. asynq's Inspector batch operations,
// River's JobDeleteMany.
func (d *Driver) Bulk(ctx context.Context, r driver.BulkRequest) (driver.BulkResult, error) {
	sel := r.Selection
	states, ok := bulkStates[r.Action]
	if !ok {
		return driver.BulkResult{}, invalid("bulk", "unknown action %d", r.Action)
	}
	if !slices.Contains(states, sel.State) {
		return driver.BulkResult{}, invalid("bulk", "action %d on %q tasks", r.Action, sel.State)
	}
	if r.Action == driver.BulkCancel {
		if err := validEnding("bulk cancel", Ending{Retention: r.Retention, Keep: r.Keep}); err != nil {
			return driver.BulkResult{}, err
		}
	}
	var res driver.BulkResult
	if len(sel.IDs) > 0 {
		ids := slices.Clone(sel.IDs)
		slices.Sort(ids)
		for chunk := range slices.Chunk(slices.Compact(ids), bulkIDChunk) {
			if _, _, err := d.bulkBatch(ctx, r, chunk, driver.Position{}, &res); err != nil {
				return res, err
			}
		}
		return res, nil
	}
	var after driver.Position
	for {
		picked, last, err := d.bulkBatch(ctx, r, nil, after, &res)
		if err != nil || picked < bulkBatch {
			return res, err
		}
		after = last
	}
}

// bulkBatch runs one statement of r on the IDs given, or on the next
// bulkBatch tasks of the selection after the position after, adds what
// it did to res, and returns how many tasks it read and the position of
// the last.
func (d *Driver) bulkBatch(ctx context.Context, r driver.BulkRequest, ids []string, after driver.Position, res *driver.BulkResult) (int, driver.Position, error) {
	var st statement
	o := stateOrders[r.Selection.State]
	selected := st.selection(r.Selection, "t")
	read := selected
	limit := ""
	switch {
	case ids != nil:
		read += " AND t.id = ANY(" + st.arg(ids, "text[]") + ")"
	default:
		if r.Action == driver.BulkRunNow {
			// only the tasks not due yet, by the caller's reckoning
			read += " AND t.run_at > " + st.arg(toTime(r.Now), "timestamptz")
		}
		if after != (driver.Position{}) {
			read += " AND " + st.after(o, "t", after)
		}
		limit = " LIMIT " + st.arg(bulkBatch, "integer")
	}
	locked := selected
	var steps string
	switch r.Action {
	case driver.BulkRetry:
		steps = retrySteps("victim")
	case driver.BulkDelete:
		steps = deleteSteps("victim")
	case driver.BulkRunNow:
		locked += " AND t.run_at > statement_timestamp()"
		steps = moveSteps("victim", "statement_timestamp()", false)
	case driver.BulkCancel:
		steps = cancelSteps(st.arg(micros(r.Retention), "bigint"), st.arg(micros(r.Keep.Age), "bigint"),
			st.arg(r.Keep.Max, "integer")) + `, changed AS (SELECT id FROM victim)`
	}
	var (
		picked  int
		changed []string
		lastAt  *time.Time
		lastID  *string
	)
	err := d.st.pool.QueryRow(ctx, `
WITH picked AS (
    SELECT t.id, t.`+o.col+` FROM stpe_tasks t
    WHERE `+read+`
    ORDER BY `+o.orderBy("t", false)+limit+`
), victim AS (
    SELECT t.id, t.kind, t.partition, t.due, md5(t.payload) AS sum, t.state FROM stpe_tasks t
    WHERE t.id IN (SELECT id FROM picked) AND `+locked+`
    ORDER BY t.id
    FOR UPDATE OF t
), `+steps+`
SELECT (SELECT count(*) FROM picked), (SELECT coalesce(array_agg(id), '{}') FROM changed),
    (SELECT count(*) FROM told), last.`+o.col+`, last.id
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (SELECT * FROM picked p ORDER BY `+o.orderBy("p", true)+` LIMIT 1) AS last ON true`,
		st.args...).Scan(&picked, &changed, new(int64), &lastAt, &lastID)
	if err != nil {
		return 0, driver.Position{}, failed("bulk "+string(r.Selection.State), err)
	}
	res.Matched += picked
	res.Changed += len(changed)
	if r.Action == driver.BulkCancel && r.Canceled != nil {
		for _, id := range changed {
			r.Canceled(id)
		}
	}
	return picked, driver.Position{At: deref(lastAt), ID: deref(lastID)}, nil
}
