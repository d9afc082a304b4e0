package pgdriver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// The actions on one task: each is one statement that locks the task's
// row, checks its state and changes it, so it never races a claim (the
// claim either took the row first, and the action finds it running, or
// finds it changed after). A change that makes a task pending is told on
// its partition's channel ("pending <µs> <kind> <id>") by the trigger of
// migration 001, a deletion by the statement ("removed <kind> <id>"),
// both heard on commit only. The steps (the CTEs changed and told, on the
// rows of a CTE with columns id, kind, partition) serve the bulk actions
// too.

// moveSteps make the rows of src pending at the time at (an SQL
// expression), their due time too when setDue.
func moveSteps(src, at string, setDue bool) string {
	set := "run_at = " + at
	if setDue {
		set += ", due = " + at
	}
	return `changed AS (
    UPDATE stpe_tasks t SET ` + set + `, updated_at = statement_timestamp()
    FROM ` + src + ` v WHERE t.id = v.id
    RETURNING t.id
), told AS (SELECT 1 WHERE false)`
}

// retrySteps give the rows of src (dead tasks) their retries and lost
// runs again and make them pending, due now by the database's clock.
func retrySteps(src string) string {
	return `changed AS (
    UPDATE stpe_tasks t SET state = 'pending', attempts = 0, lost_runs = 0, run_at = statement_timestamp(),
        finished_at = NULL, expires_at = NULL, updated_at = statement_timestamp()
    FROM ` + src + ` v WHERE t.id = v.id
    RETURNING t.id
), told AS (SELECT 1 WHERE false)`
}

// deleteSteps delete the rows of src (dead tasks and done records) and
// tell their partitions "removed <kind> <id>".
func deleteSteps(src string) string {
	return `changed AS (
    DELETE FROM stpe_tasks t USING ` + src + ` v WHERE t.id = v.id
    RETURNING t.id, t.partition, t.kind
), told AS MATERIALIZED (
    SELECT pg_notify('stpe_p' || partition, 'removed ' || kind || ' ' || id) FROM changed
)`
}

// RunNow makes pending task id due now by the database's clock, keeping
// its due time, in one statement. A missing task is an error wrapping
// driver.ErrNotFound, one not pending a *driver.StateError. asynq's
// Inspector.RunTask.
func (d *Driver) RunNow(ctx context.Context, id string) error {
	return d.act(ctx, "run now", id, []State{Pending}, moveSteps("allowed", "statement_timestamp()", false))
}

// Reschedule makes pending task id due at due, which becomes its due time
// too, in one statement; its refusals are RunNow's.
func (d *Driver) Reschedule(ctx context.Context, id string, due time.Time) error {
	return d.act(ctx, "reschedule", id, []State{Pending}, moveSteps("allowed", "$2::timestamptz", true), toTime(due))
}

// Retry gives dead task id its retries again and makes it pending, due
// now by the database's clock, in one statement. A missing task is an
// error wrapping driver.ErrNotFound, one not dead a *driver.StateError.
// asynq's RunTask on an archived task, River's JobRetry.
func (d *Driver) Retry(ctx context.Context, id string) error {
	return d.act(ctx, "retry", id, []State{Dead}, retrySteps("allowed"))
}

// Delete removes dead task id or done record id in one statement. A
// missing task is an error wrapping driver.ErrNotFound, a pending or
// running one a *driver.StateError. River's JobDelete.
func (d *Driver) Delete(ctx context.Context, id string) error {
	return d.act(ctx, "delete", id, []State{Dead, Done}, deleteSteps("allowed"))
}

// act runs steps on task id, locked, if it is in one of the states
// allowed, with args after the ID ($2 on); a done record past its age is
// missing, as Get has it.
func (d *Driver) act(ctx context.Context, what, id string, allowed []State, steps string, args ...any) error {
	if id == "" {
		return invalid(what, "empty task ID")
	}
	names := make([]string, len(allowed))
	for i, s := range allowed {
		names[i] = "'" + string(s) + "'"
	}
	var state State
	err := d.st.pool.QueryRow(ctx, `
WITH victim AS (
    SELECT id, kind, partition, state FROM stpe_tasks
    WHERE id = $1 AND NOT (state = 'done' AND expires_at <= statement_timestamp())
    FOR UPDATE
), allowed AS (
    SELECT * FROM victim WHERE state IN (`+strings.Join(names, ", ")+`)
), `+steps+`
SELECT state, (SELECT count(*) FROM told) FROM victim`, append([]any{id}, args...)...).Scan(&state, new(int64))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return &notFoundError{what: what + " " + id}
	case err != nil:
		return failed(what+" "+id, err)
	}
	for _, s := range allowed {
		if s == state {
			return nil
		}
	}
	return &driver.StateError{ID: id, State: state}
}
