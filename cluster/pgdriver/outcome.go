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
// task's history with outcome and error, each an SQL expression. SET reads
// the row as it was, so the run's node and start are the claim's.
func endedAs(outcome, errText string) string {
	return `history = stpe_add_run(history, claimed_by, claimed_at, ` + outcome + `, ` + errText + `),
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

// Complete records a successful run of task id claimed with token: the
// task is kept as done for retention (its ID stays taken, and Schedule
// of the same task answers AlreadyDone, until PurgeDone removes it after
// the retention), or deleted at once with a retention of zero or less.
// It returns OutcomeDone, or OutcomeLost if token no longer holds the
// task.
func (s *Store) Complete(ctx context.Context, id, token string, retention time.Duration) (Outcome, error) {
	if err := validOwner("complete "+id, id, token); err != nil {
		return "", err
	}
	var tag interface{ RowsAffected() int64 }
	var err error
	if retention > 0 {
		tag, err = s.pool.Exec(ctx, `
UPDATE stpe_tasks SET state = 'done', `+endedAs("'succeeded'", "''")+`, last_error = '',
    finished_at = statement_timestamp(),
    expires_at = statement_timestamp() + $3::bigint * interval '1 microsecond'
WHERE id = $1 AND state = 'running' AND lease_token = $2`, id, token, micros(retention))
	} else {
		tag, err = s.pool.Exec(ctx, `DELETE FROM stpe_tasks WHERE id = $1 AND state = 'running' AND lease_token = $2`, id, token)
	}
	if err != nil {
		return "", failed("complete "+id, err)
	}
	if tag.RowsAffected() == 0 {
		return OutcomeLost, nil
	}
	return OutcomeDone, nil
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
	err := s.pool.QueryRow(ctx, `
WITH run AS (
    SELECT id, $5::boolean OR attempts + 1 > max_retries AS dead
    FROM stpe_tasks WHERE id = $1 AND state = 'running' AND lease_token = $2
    FOR UPDATE
)
UPDATE stpe_tasks t SET `+endedAs("$7", "$6")+`, attempts = t.attempts + 1, last_error = $3,
    state = CASE WHEN run.dead THEN 'dead' ELSE 'pending' END,
    run_at = CASE WHEN run.dead THEN t.run_at
        ELSE statement_timestamp() + $4::bigint * interval '1 microsecond' END,
    finished_at = CASE WHEN run.dead THEN statement_timestamp() END
FROM run WHERE t.id = run.id
RETURNING t.state`, id, token, f.Error, micros(f.Backoff), f.SkipRetry, historyError(f.Error), outcome).Scan(&state)
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
UPDATE stpe_tasks SET state = 'pending', `+endedAs("'handed_back'", "''")+`
WHERE id = $1 AND state = 'running' AND lease_token = $2`, id, token)
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
