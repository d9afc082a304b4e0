package pgdriver

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// Recording a run's outcome: Complete, Fail (retry or dead) and Release,
// each one statement that first checks that the caller still holds the
// task (its claim's token, the task still running), so a run that lost
// its lease can neither complete nor retry a task another node now holds
// (fencing). Every time written is the database's.

// endedAs is the SET list that ends a claim, recording the run in the
// history of the task t (the statement's alias) with outcome and error,
// each an SQL expression. SET reads the row as it was, so the run's node
// and start are the claim's (for a task not running, a cancel's: none
// and now).
func endedAs(outcome, errText string) string {
	return `history = stpe_add_run(t.history, t.claimed_by, coalesce(t.claimed_at, statement_timestamp()), ` + outcome + `, ` + errText + `),
    lease_token = NULL, lease_expires = NULL, claimed_at = NULL, claimed_by = NULL,
    updated_at = statement_timestamp()`
}

// historyError is err cut to driver.MaxHistoryError bytes, at a character
// boundary, as a run record keeps it.
func historyError(err string) string {
	if len(err) <= driver.MaxHistoryError {
		return err
	}
	cut := driver.MaxHistoryError
	for cut > 0 && !utf8.RuneStart(err[cut]) {
		cut--
	}
	return err[:cut]
}

// Ending is what a step that ends a task (Complete, Cancel) keeps, as the
// node configures it.
type Ending struct {
	// Retention is how long the done marker of a fixed ID (Task.Fixed)
	// that completed, or of a periodic occurrence that was canceled, holds
	// the ID: Schedule answers AlreadyDone for the same task and Conflict
	// for another until it ends (the cluster's WithRetention). None is
	// left when it is 0.
	Retention time.Duration
	// Keep bounds the done records kept (the cluster's WithKeepDone): none
	// when Keep.Max is 0, the task deleted at once; else the task stays as
	// a done record, hidden once older than Keep.Age, and TrimDone removes
	// the records past the bounds.
	Keep driver.KeepDone
	// Timeline says where Complete counts the run (Cancel counts none).
	Timeline driver.Timeline
}

// markDone is the common table expression "marked" that leaves the done
// marker of each row of the CTE src (columns id, kind, due, sum: the
// payload's MD5) where cond holds, for the retention of parameter ret
// (µs).
func markDone(src, cond, ret string) string {
	return `marked AS (
    INSERT INTO stpe_done_marks (id, kind, due, payload_md5, expires_at)
    SELECT id, kind, due, sum, statement_timestamp() + ` + ret + `::bigint * interval '1 microsecond'
    FROM ` + src + ` WHERE ` + ret + `::bigint > 0 AND ` + cond + `
    ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, due = EXCLUDED.due,
        payload_md5 = EXCLUDED.payload_md5, expires_at = EXCLUDED.expires_at
)`
}

// keptDone is the SET list that makes a task a done record kept for the
// age of parameter age (µs).
func keptDone(age string) string {
	return `state = 'done', finished_at = statement_timestamp(),
    expires_at = statement_timestamp() + ` + age + `::bigint * interval '1 microsecond'`
}

// Complete records a successful run of task id claimed with token, in one
// statement (the Redis store's complete script): the run is counted in
// e.Timeline; a fixed ID leaves its done marker for e.Retention; with
// e.Keep.Max above 0 the task is kept as a done record (its last run
// record saying succeeded), else deleted. It returns OutcomeDone, or
// OutcomeLost if token no longer holds the task.
func (s *Store) Complete(ctx context.Context, id, token string, e Ending) (Outcome, error) {
	if err := validOwner("complete "+id, id, token); err != nil {
		return "", err
	}
	if err := validEnding("complete "+id, e); err != nil {
		return "", err
	}
	return s.completes.do(ctx, completeAsk{id: id, token: token, e: e})
}

// completeOne is the statement of Complete for one task: $1 the ID, $2
// the owner token, $3 the retention (µs), $4 and $5 the done records'
// age (µs) and number kept, $6 and $7 the timeline's minute and TTL
// (µs). It answers the number of runs it recorded (1, or 0 for a lost
// one).
//
// A row holds a lease token only while it runs (the table's CHECK), so
// the token alone finds the run, here and in every step fenced by it
// (Fail, Release, Extend, completeMany). It names no state on purpose:
// a condition on state lets the planner take the partial index of the
// running leases, a scan of every running task to find one ID, when its
// statistics say few run (a young or busy table); without it the lookup
// is the primary key's.
var completeOne = `
WITH run AS (
    SELECT id, partition, kind, fixed, due, md5(payload) AS sum, run_at, claimed_at
    FROM stpe_tasks WHERE id = $1 AND lease_token = $2
    FOR UPDATE
), ` + completeSteps + `
SELECT count(*) FROM run`

// completeSteps are the common table expressions of a completion of the
// rows of the CTE run (completeOne's parameters from $3).
var completeSteps = markDone("run", "fixed", "$3") + `, ` + countRun("run", "NULL", "$6", "$7") + `,
kept AS (
    UPDATE stpe_tasks t SET ` + endedAs("'succeeded'", "''") + `, last_error = '', ` + keptDone("$4") + `
    FROM run WHERE t.id = run.id AND $5::integer > 0
    RETURNING t.id
), deleted AS (
    DELETE FROM stpe_tasks t USING run WHERE t.id = run.id AND $5::integer < 1
    RETURNING t.id
)`

// validEnding checks e: no negative retention, and with records kept, an
// age above 0.
func validEnding(what string, e Ending) error {
	switch {
	case e.Retention < 0:
		return invalid(what, "retention %v < 0", e.Retention)
	case e.Keep.Max < 0 || e.Keep.Max > 0 && e.Keep.Age <= 0:
		return invalid(what, "keep done: age %v and max %d must be > 0", e.Keep.Age, e.Keep.Max)
	}
	return nil
}

// Failure is a failed run, as Fail records it.
type Failure struct {
	// Error is the run's error text (with the stack, for a panic).
	Error string
	// Backoff is how long after the failure, by the database's clock,
	// the retry is due.
	Backoff time.Duration
	// SkipRetry makes the task dead at once, whatever retries it has
	// left (the cluster package's ErrSkipRetry).
	SkipRetry bool
	// TimedOut records the run as timed out (past its time limit), not
	// failed, in the task's history.
	TimedOut bool
	// Timeline says where the run is counted, as failed.
	Timeline driver.Timeline
}

// Fail records a failed run of task id claimed with token: the failed
// attempt is counted and, while the attempts do not exceed the task's
// retry limit (Task.MaxRetries), the task is pending again for the
// database's now plus f.Backoff; past it, or with f.SkipRetry, it is dead,
// kept with its last error until canceled. It returns OutcomeRetry,
// OutcomeDead, or OutcomeLost if token no longer holds the task.
func (s *Store) Fail(ctx context.Context, id, token string, f Failure) (Outcome, error) {
	if err := validOwner("fail "+id, id, token); err != nil {
		return "", err
	}
	if f.Backoff < 0 {
		return "", invalid("fail "+id, "backoff %v < 0", f.Backoff)
	}
	outcome := driver.OutcomeFailed
	if f.TimedOut {
		outcome = driver.OutcomeTimedOut
	}
	var state State
	minute, ttl := timelineArgs(f.Timeline)
	err := s.pool.QueryRow(ctx, `
WITH run AS (
    SELECT id, partition, kind, run_at, claimed_at, $5::boolean OR attempts + 1 > max_retries AS dead
    FROM stpe_tasks WHERE id = $1 AND lease_token = $2 -- so running (completeOne)
    FOR UPDATE
), `+countRun("run", "'f'", "$8", "$9")+`
UPDATE stpe_tasks t SET `+endedAs("$7", "$6")+`, attempts = t.attempts + 1, last_error = $3,
    state = CASE WHEN run.dead THEN 'dead' ELSE 'pending' END,
    run_at = CASE WHEN run.dead THEN t.run_at
        ELSE statement_timestamp() + $4::bigint * interval '1 microsecond' END,
    finished_at = CASE WHEN run.dead THEN statement_timestamp() END
FROM run WHERE t.id = run.id
RETURNING t.state`, id, token, f.Error, micros(f.Backoff), f.SkipRetry, historyError(f.Error), outcome, minute, ttl).Scan(&state)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return OutcomeLost, nil
	case err != nil:
		return "", failed("fail "+id, err)
	case state == Dead:
		return OutcomeDead, nil
	}
	return OutcomeRetry, nil
}

// Release hands task id claimed with token back to pending without
// counting an attempt, for the time it was pending for, so it never runs
// before its due time (a node stopping before the run started). It
// returns OutcomeReleased, or OutcomeLost if token no longer holds the
// task.
func (s *Store) Release(ctx context.Context, id, token string) (Outcome, error) {
	if err := validOwner("release "+id, id, token); err != nil {
		return "", err
	}
	tag, err := s.pool.Exec(ctx, `
UPDATE stpe_tasks t SET state = 'pending', `+endedAs("'handed_back'", "''")+`
WHERE id = $1 AND lease_token = $2 -- so running (completeOne)
`, id, token)
	if err != nil {
		return "", failed("release "+id, err)
	}
	if tag.RowsAffected() == 0 {
		return OutcomeLost, nil
	}
	return OutcomeReleased, nil
}

// validOwner checks the ID and token of an operation on a claimed task.
func validOwner(what, id, token string) error {
	switch {
	case id == "":
		return invalid(what, "empty task ID")
	case token == "":
		return invalid(what, "empty owner token")
	}
	return nil
}
