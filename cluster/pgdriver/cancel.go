package pgdriver

import (
	"context"
	"errors"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// Canceling and reading one task.

// Cancellation is what Cancel did.
type Cancellation struct {
	// Removed is true if a task was stored under the ID and is now
	// removed: no node claims it again, and the ID is free.
	Removed bool
	// WasRunning is true if a claim was held on it (a run in flight);
	// that run's Complete, Fail, Release and Extend find it lost.
	WasRunning bool
}

// Cancel removes task id in whatever state (River's JobCancel, the
// cluster package's Cancel) and says whether there was one and whether a
// run of it was in flight, with the Redis store's rules, in one
// statement: a done record is deleted; a periodic occurrence (a kind
// starting with "@") leaves its done marker for e.Retention, so that no
// sweep stores the occurrence again; with e.Keep.Max above 0 the task is
// kept as a done record whose last run record says canceled (its node and
// start the claim's if it was running, else none and now), else it is
// deleted. A claim racing it either wins first (then WasRunning is true)
// or finds the task gone. Cancel tells the task's partition "removed"
// (whether the task is deleted or kept as a done record; a done record's
// deletion tells nothing). An empty ID, or a bad e, is an error wrapping
// scheduler.ErrInvalidArgument.
func (s *Store) Cancel(ctx context.Context, id string, e Ending) (Cancellation, error) {
	if id == "" {
		return Cancellation{}, invalid("cancel", "empty task ID")
	}
	if err := validEnding("cancel "+id, e); err != nil {
		return Cancellation{}, err
	}
	var (
		state    State
		ageEnded bool
	)
	err := s.pool.QueryRow(ctx, `
WITH victim AS (
    SELECT id, kind, partition, due, md5(payload) AS sum, state,
        coalesce(state = 'done' AND expires_at <= statement_timestamp(), false) AS ended
    FROM stpe_tasks WHERE id = $1
    FOR UPDATE
), `+cancelSteps("$2", "$3", "$4")+`
SELECT state, ended, (SELECT count(*) FROM told) FROM victim`, id, micros(e.Retention), micros(e.Keep.Age), e.Keep.Max).Scan(&state, &ageEnded, new(int64))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Cancellation{}, nil
	case err != nil:
		return Cancellation{}, failed("cancel "+id, err)
	}
	// A done record past its age was no longer stored (Get does not
	// find it); TrimDone had yet to delete it.
	return Cancellation{Removed: !ageEnded, WasRunning: state == Running}, nil
}

// cancelSteps are the common table expressions that cancel the rows of
// the CTE victim (columns id, kind, partition, due, sum: the payload's
// MD5, state; locked FOR UPDATE) as Cancel does, with the retention, the
// done records' age (µs) and their number kept of the parameters ret, age
// and max: marked, kept, deleted and told, which the statement must read
// for its notices to be sent.
func cancelSteps(ret, age, max string) string {
	return markDone("victim", "state <> 'done' AND left(kind, 1) = '@'", ret) + `,
kept AS (
    UPDATE stpe_tasks t SET ` + endedAs("'canceled'", "''") + `, ` + keptDone(age) + `
    FROM victim v WHERE t.id = v.id AND v.state <> 'done' AND ` + max + `::integer > 0
    RETURNING t.id
), deleted AS (
    DELETE FROM stpe_tasks t USING victim v WHERE t.id = v.id AND (v.state = 'done' OR ` + max + `::integer < 1)
    RETURNING t.id
), told AS MATERIALIZED (
    SELECT pg_notify('stpe_p' || partition, 'removed ' || kind || ' ' || id) FROM victim WHERE state <> 'done'
)`
}

// Get returns task id as stored, or an error wrapping driver.ErrNotFound
// (which package cluster exports as ErrNotFound) if no task holds the ID
// (a done record past its age is not found).
func (s *Store) Get(ctx context.Context, id string) (StoredTask, error) {
	if id == "" {
		return StoredTask{}, invalid("get", "empty task ID")
	}
	t, err := scanTask(s.pool.QueryRow(ctx, `
SELECT `+taskColumns+` FROM stpe_tasks
WHERE id = $1 AND NOT (state = 'done' AND expires_at <= statement_timestamp())`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return StoredTask{}, &notFoundError{what: "get " + id}
	}
	if err != nil {
		return StoredTask{}, failed("get "+id, err)
	}
	return t, nil
}

// taskColumns are the columns of stpe_tasks that scanTask reads, in its
// order.
const taskColumns = `id, kind, payload, due, max_retries, metadata, partition, state, run_at, attempts, lost_runs,
    lease_token, lease_expires, claimed_at, claimed_by, last_error, created_at, updated_at, finished_at,
    expires_at, history`

// scanTask reads a row of taskColumns, then the columns of extra.
func scanTask(r pgx.Row, extra ...any) (StoredTask, error) {
	var (
		t                                           StoredTask
		token, claimedBy                            *string
		leaseExpires, claimedAt, finished, expireAt *time.Time
		history                                     []runJSON
	)
	dest := []any{&t.ID, &t.Kind, &t.Payload, &t.Due, &t.MaxRetries, &t.Metadata, &t.Partition, &t.State, &t.RunAt,
		&t.Attempts, &t.LostRuns, &token, &leaseExpires, &claimedAt, &claimedBy, &t.LastError, &t.CreatedAt,
		&t.UpdatedAt, &finished, &expireAt, &history}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return StoredTask{}, err
	}
	t.LeaseToken, t.ClaimedBy = deref(token), deref(claimedBy)
	for _, r := range history {
		t.History = append(t.History, r.record())
	}
	t.LeaseExpires, t.ClaimedAt = deref(leaseExpires), deref(claimedAt)
	t.FinishedAt, t.ExpiresAt = deref(finished), deref(expireAt)
	return t, nil
}

// deref is *p, or the zero value for nil (a NULL column).
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// notFoundError is "cluster: what: no such task", wrapping
// driver.ErrNotFound.
type notFoundError struct{ what string }

func (e *notFoundError) Error() string { return "cluster: " + e.what + ": no such task" }

func (e *notFoundError) Unwrap() error { return driver.ErrNotFound }

// runJSON is a run record as stpe_add_run writes it in a task's history.
type runJSON struct {
	Node    string `json:"node"`
	Start   int64  `json:"start"` // µs since the epoch
	End     int64  `json:"end"`   // µs since the epoch
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
}

// record is r as the drivers return it.
func (r runJSON) record() driver.RunRecord {
	return driver.RunRecord{Node: r.Node, Start: time.UnixMicro(r.Start), End: time.UnixMicro(r.End),
		Outcome: driver.Outcome(r.Outcome), Error: r.Error}
}
