package pgdriver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The transactional schedule for database/sql: ScheduleSQLTx and
// ScheduleManySQLTx take a *sql.Tx of a PostgreSQL driver (pgx's stdlib,
// lib/pq), for services whose own rows go through database/sql. They run
// the statements of ScheduleTx and ScheduleManyTx, through sqlTx.

// ScheduleSQLTx is ScheduleTx in the caller's database/sql transaction
// tx, opened on the store's database by pgx's stdlib driver or lib/pq:
// the task exists, and its notice goes out, only if tx commits (River's
// InsertTx on its riverdatabasesql driver). A nil tx is an error wrapping
// scheduler.ErrInvalidArgument; so is bad input, as for Schedule.
func (s *Store) ScheduleSQLTx(ctx context.Context, tx *sql.Tx, task Task) (ScheduleResult, error) {
	if tx == nil {
		return "", invalid("schedule "+task.Kind, "nil transaction")
	}
	return s.scheduleIn(ctx, newSQLTx(tx), task)
}

// ScheduleManySQLTx is ScheduleManyTx in the caller's database/sql
// transaction tx (see ScheduleSQLTx).
func (s *Store) ScheduleManySQLTx(ctx context.Context, tx *sql.Tx, tasks []Task) ([]ScheduleResult, error) {
	if tx == nil {
		return nil, invalid("schedule many", "nil transaction")
	}
	return s.scheduleManyIn(ctx, newSQLTx(tx), tasks)
}

// sqlTx runs the statements of storing tasks on a database/sql
// transaction (a rowQuerier). Not every database/sql driver takes a Go
// slice as an argument (pgx's stdlib does, lib/pq from 1.11 on, lib/pq
// 1.10 does not), and database/sql scans no PostgreSQL array into one, so
// sqlTx passes each slice (but []byte) as the text of a PostgreSQL array,
// which every driver sends as text for the statement's cast to read, and
// scans an array through pgx's types.
type sqlTx struct {
	tx    *sql.Tx
	types *pgtype.Map // the encoders and decoders of arrays, of this sqlTx alone
}

func newSQLTx(tx *sql.Tx) sqlTx { return sqlTx{tx: tx, types: pgtype.NewMap()} }

// QueryRow runs sql with args on the transaction; the row's Scan answers
// pgx.ErrNoRows for no row, as pgx's does.
func (q sqlTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	texts := make([]any, len(args))
	for i, a := range args {
		t, err := q.arrayText(a)
		if err != nil {
			return sqlRow{err: fmt.Errorf("argument %d: %w", i+1, err)}
		}
		texts[i] = t
	}
	return sqlRow{row: q.tx.QueryRowContext(ctx, sql, texts...), types: q.types}
}

// arrayText is a, or the text of the PostgreSQL array a is if a is a
// slice other than []byte.
func (q sqlTx) arrayText(a any) (any, error) {
	if a == nil || !isArray(reflect.TypeOf(a)) {
		return a, nil
	}
	t, ok := q.types.TypeForValue(a)
	if !ok {
		return nil, fmt.Errorf("no PostgreSQL type for %T", a)
	}
	text, err := q.types.Encode(t.OID, pgtype.TextFormatCode, a, nil)
	if err != nil {
		return nil, err
	}
	return string(text), nil
}

// sqlRow is a row of a sqlTx, or the error of its arguments.
type sqlRow struct {
	row   *sql.Row
	types *pgtype.Map
	err   error
}

// Scan reads the row into dest as pgx's Row does: an array into a slice,
// pgx.ErrNoRows for no row.
func (r sqlRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	to := make([]any, len(dest))
	for i, d := range dest {
		to[i] = d
		if t := reflect.TypeOf(d); t != nil && t.Kind() == reflect.Pointer && isArray(t.Elem()) {
			to[i] = r.types.SQLScanner(d)
		}
	}
	err := r.row.Scan(to...)
	if errors.Is(err, sql.ErrNoRows) {
		return pgx.ErrNoRows
	}
	return err
}

// isArray reports whether t is a slice type that stands for a PostgreSQL
// array (a []byte is a bytea).
func isArray(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8
}
