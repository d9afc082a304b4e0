package pgdriver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// Storing tasks: Schedule, ScheduleTx and ScheduleMany, each idempotent
// by ID: an ID already stored is never overwritten, and the result says
// what holds it.

// ScheduleResult is what storing a task found.
type ScheduleResult string

const (
	// Created: the task is stored, pending.
	Created ScheduleResult = "created"
	// Exists: the same task (kind, due time and payload) is stored and
	// not done yet; nothing was written.
	Exists ScheduleResult = "exists"
	// AlreadyDone: the same task already ran (or, a periodic occurrence,
	// was canceled) and its done marker holds the ID for the retention;
	// nothing was written.
	AlreadyDone ScheduleResult = "done"
	// Conflict: a different task holds the ID; nothing was written. The
	// cluster package turns it into ErrIDConflict.
	Conflict ScheduleResult = "conflict"
)

// raceRounds bounds the rounds of an operation whose row others change
// between its statements (an ID taken and freed again, a task falling
// due between a claim and its check).
const raceRounds = 8

// Schedule stores task, pending for its due time, unless its ID is taken
// (River's Insert with a unique ID, asynq's Enqueue with TaskID), with the
// Redis store's rules: a done marker (left by the completion of a fixed
// ID, or the cancel of a periodic occurrence, for the retention) answers
// AlreadyDone for the same task and Conflict for another; a done record
// no marker holds is replaced by a task of its kind (another kind is a
// Conflict, until the record's age runs out).
// The insert notifies the task's partition. Calls made while another is
// in flight are stored together, in one statement (schedule_combine.go).
// Bad input (an empty ID, an ID over 512 bytes, a kind empty, over 200
// bytes or with white space, a zero due time, negative retries) is an
// error wrapping scheduler.ErrInvalidArgument, and nothing is stored.
func (s *Store) Schedule(ctx context.Context, task Task) (ScheduleResult, error) {
	if err := s.validTask(task); err != nil {
		return "", err
	}
	c := &scheduleCall{task: task, done: make(chan struct{}), lead: make(chan struct{})}
	if err := s.combined.schedule(ctx, c); err != nil {
		return "", failed("schedule "+task.Kind, err)
	}
	r, err := c.res, c.err
	if c.alone {
		r, err = s.schedule(ctx, s.pool, task)
	}
	if err != nil {
		return "", failed("schedule "+task.Kind, err)
	}
	return r, nil
}

// ScheduleTx stores task as Schedule does, in the caller's transaction
// tx: the task exists, and its notice goes out, only if tx commits (the
// transactional enqueue of River's InsertTx). tx should be READ
// COMMITTED, Postgres's default: under a stricter isolation a task
// stored by another transaction since tx began may make it fail with a
// serialization error.
func (s *Store) ScheduleTx(ctx context.Context, tx pgx.Tx, task Task) (ScheduleResult, error) {
	if tx == nil {
		return "", invalid("schedule "+task.Kind, "nil transaction")
	}
	if err := s.validTask(task); err != nil {
		return "", err
	}
	r, err := s.schedule(ctx, tx, task)
	if err != nil {
		return "", failed("schedule "+task.Kind, err)
	}
	return r, nil
}

// ScheduleMany stores tasks as Schedule does, in one transaction and one
// insert for those whose ID is free: either every task is stored (or
// found) or, on an error, none is. The results are in the order of tasks.
// One bad task is an error naming it, and nothing is stored.
func (s *Store) ScheduleMany(ctx context.Context, tasks []Task) ([]ScheduleResult, error) {
	var res []ScheduleResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) (err error) {
		res, err = s.ScheduleManyTx(ctx, tx, tasks)
		return err
	})
	return res, err
}

// ScheduleManyTx is ScheduleMany in the caller's transaction tx.
func (s *Store) ScheduleManyTx(ctx context.Context, tx pgx.Tx, tasks []Task) ([]ScheduleResult, error) {
	if tx == nil {
		return nil, invalid("schedule many", "nil transaction")
	}
	n := len(tasks)
	for i, t := range tasks {
		if err := s.validTask(t); err != nil {
			return nil, fmt.Errorf("task %d: %w", i, err)
		}
	}
	if n == 0 {
		return nil, nil
	}
	isNew, err := s.insertMany(ctx, tx, tasks)
	if err != nil {
		return nil, failed("schedule many", err)
	}
	res := make([]ScheduleResult, n)
	for i, t := range tasks {
		if isNew[t.ID] {
			res[i] = Created
			delete(isNew, t.ID) // the same ID twice in tasks: the second finds the first
			continue
		}
		if res[i], err = s.schedule(ctx, tx, t); err != nil {
			return nil, failed("schedule many", err)
		}
	}
	return res, nil
}

// insertMany inserts, in one statement on q, those of tasks (valid)
// whose ID is free, and returns the IDs it created. Of tasks that share
// an ID, the first is the one inserted: the later ones are left out of
// the statement, so that which one is stored does not rest on the order
// in which Postgres inserts the rows of one statement.
func (s *Store) insertMany(ctx context.Context, q querier, tasks []Task) (map[string]bool, error) {
	seen := make(map[string]bool, len(tasks))
	tasks = slices.DeleteFunc(slices.Clone(tasks), func(t Task) bool {
		dup := seen[t.ID]
		seen[t.ID] = true
		return dup
	})
	n := len(tasks)
	ids, kinds, metas := make([]string, n), make([]string, n), make([]string, n)
	payloads := make([][]byte, n)
	dues := make([]time.Time, n)
	parts, maxr := make([]int32, n), make([]int32, n)
	fixed := make([]bool, n)
	for i, t := range tasks {
		ids[i], kinds[i], metas[i] = t.ID, t.Kind, t.Metadata
		payloads[i] = payloadOf(t)
		dues[i] = toTime(t.Due)
		parts[i], maxr[i] = int32(s.PartitionOf(t.ID)), int32(t.MaxRetries)
		fixed[i] = t.Fixed
	}
	rows, err := q.Query(ctx, insertManySQL, ids, kinds, payloads, parts, dues, maxr, metas, fixed)
	if err != nil {
		return nil, err
	}
	created, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	isNew := make(map[string]bool, len(created))
	for _, id := range created {
		isNew[id] = true
	}
	return isNew, nil
}

// insertManySQL inserts the rows of its arrays whose ID is free (no task,
// no live done marker) and returns their IDs.
const insertManySQL = `
INSERT INTO stpe_tasks (id, kind, payload, partition, state, due, run_at, max_retries, metadata, fixed)
SELECT id, kind, payload, partition, 'pending', due, due, max_retries, metadata, fixed
FROM unnest($1::text[], $2::text[], $3::bytea[], $4::integer[], $5::timestamptz[], $6::integer[], $7::text[], $8::boolean[])
    AS t(id, kind, payload, partition, due, max_retries, metadata, fixed)
WHERE NOT EXISTS (SELECT 1 FROM stpe_done_marks m WHERE m.id = t.id AND m.expires_at > statement_timestamp())
ON CONFLICT (id) DO NOTHING
RETURNING id`

// maxKindLen is the longest kind accepted, in bytes, as in the cluster
// package; with an ID of at most 512 bytes, a notice stays far below
// Postgres's 8,000 bytes.
const maxKindLen = 200

// validTask checks what Schedule takes, and the partition
// Options.PartitionOf gives the task.
func (s *Store) validTask(t Task) error {
	what := "schedule " + t.Kind
	switch {
	case t.ID == "":
		return invalid(what, "empty task ID")
	case len(t.ID) > maxIDLen:
		return invalid(what, "task ID of %d bytes exceeds %d", len(t.ID), maxIDLen)
	case t.Kind == "" || len(t.Kind) > maxKindLen || strings.ContainsFunc(t.Kind, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return invalid("schedule", "kind %q: want 1 to %d bytes without white space", t.Kind, maxKindLen)
	case t.Due.IsZero():
		return invalid(what, "zero due time")
	case t.MaxRetries < 0:
		return invalid(what, "max retries %d < 0", t.MaxRetries)
	}
	if p := s.PartitionOf(t.ID); p < 0 || p >= s.partitions {
		return invalid(what, "Options.PartitionOf put %q in partition %d, out of [0, %d)", t.ID, p, s.partitions)
	}
	return nil
}

// payloadOf is the task's payload, empty rather than nil (the column is
// NOT NULL).
func payloadOf(t Task) []byte {
	if t.Payload == nil {
		return []byte{}
	}
	return t.Payload
}

// schedule inserts task on q unless its ID is taken, and else tells what
// holds it. Each statement runs on a fresh snapshot (READ COMMITTED), so
// a task another transaction stored, canceled or freed in between is
// seen, and the round is tried again.
func (s *Store) schedule(ctx context.Context, q querier, t Task) (ScheduleResult, error) {
	due := toTime(t.Due)
	payload := payloadOf(t)
	part := s.PartitionOf(t.ID)
	for range raceRounds {
		tag, err := q.Exec(ctx, `
INSERT INTO stpe_tasks (id, kind, payload, partition, state, due, run_at, max_retries, metadata, fixed)
SELECT $1, $2, $3, $4, 'pending', $5, $5, $6, $7, $8
WHERE NOT EXISTS (SELECT 1 FROM stpe_done_marks WHERE id = $1 AND expires_at > statement_timestamp())
ON CONFLICT (id) DO NOTHING`, t.ID, t.Kind, payload, part, due, t.MaxRetries, t.Metadata, t.Fixed)
		if err != nil {
			return "", err
		}
		if tag.RowsAffected() == 1 {
			return Created, nil
		}
		if r, marked, err := doneMark(ctx, q, t.ID, t.Kind, due, payload); err != nil || marked {
			return r, err
		}
		var (
			kind          string
			storedDue     time.Time
			storedPayload []byte
			state         State
			ageEnded      bool
		)
		err = q.QueryRow(ctx, `
SELECT kind, due, payload, state, coalesce(state = 'done' AND expires_at <= statement_timestamp(), false)
FROM stpe_tasks WHERE id = $1`, t.ID).Scan(&kind, &storedDue, &storedPayload, &state, &ageEnded)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // canceled since the insert: try again
		}
		if err != nil {
			return "", err
		}
		if state == Done && (ageEnded || kind == t.Kind) {
			// A done record no marker holds: the ID is free for a task
			// of its kind, which replaces the record (the Redis store's
			// store_task).
			if _, err := q.Exec(ctx, `DELETE FROM stpe_tasks WHERE id = $1 AND state = 'done'`, t.ID); err != nil {
				return "", err
			}
			continue
		}
		if state == Done || kind != t.Kind || !storedDue.Equal(due) || !bytes.Equal(storedPayload, payload) {
			return Conflict, nil
		}
		return Exists, nil
	}
	return "", fmt.Errorf("the ID %q was taken and freed again %d times in a row", t.ID, raceRounds)
}

// doneMark tells whether a done marker holds id, and then what storing the
// task (kind, due, payload) finds: AlreadyDone for the same task, Conflict
// for another.
func doneMark(ctx context.Context, q querier, id, kind string, due time.Time, payload []byte) (ScheduleResult, bool, error) {
	var same bool
	err := q.QueryRow(ctx, `
SELECT kind = $2 AND due = $3 AND payload_md5 = md5($4)
FROM stpe_done_marks WHERE id = $1 AND expires_at > statement_timestamp()`, id, kind, due, payload).Scan(&same)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, err
	case same:
		return AlreadyDone, true, nil
	}
	return Conflict, true, nil
}
