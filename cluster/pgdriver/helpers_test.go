package pgdriver_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// testLease is the lease of the tests' claims: long, so that none expires
// unless a test moves it into the past (expireLease).
const testLease = time.Hour

// newStore migrates a fresh database and returns its store (with 8
// partitions) and pool.
func newStore(t testing.TB) (*pgdriver.Store, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.Pool(t)
	if _, err := pgdriver.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	s, err := pgdriver.New(pool, pgdriver.Options{Partitions: 8})
	if err != nil {
		t.Fatal(err)
	}
	return s, pool
}

// nodeStore is a fresh store (newStore) whose claims name the node "n1",
// and its pool.
func nodeStore(t *testing.T) (*pgdriver.Store, *pgxpool.Pool) {
	t.Helper()
	_, pool := newStore(t)
	s, err := pgdriver.New(pool, pgdriver.Options{Partitions: 8, Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	return s, pool
}

// token returns a fresh owner token.
func token(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// past is the due time of the tests' due tasks: long past by any clock.
var past = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// dueTask is a task of kind "k" due at past, its ID fixed.
func dueTask(id string) pgdriver.Task {
	return pgdriver.Task{ID: id, Kind: "k", Payload: []byte("p-" + id), Due: past, MaxRetries: 3, Fixed: true}
}

// keepHour ends a task keeping its done marker and its done record (up to
// a thousand) an hour.
var keepHour = pgdriver.Ending{Retention: time.Hour, Keep: driver.KeepDone{Age: time.Hour, Max: 1000}}

// mustSchedule schedules task and fails t unless it was created.
func mustSchedule(t *testing.T, s *pgdriver.Store, task pgdriver.Task) {
	t.Helper()
	r, err := s.Schedule(context.Background(), task)
	if err != nil || r != pgdriver.Created {
		t.Fatalf("Schedule(%s) = %q, %v; want created", task.ID, r, err)
	}
}

// mustClaim claims id with a fresh token and fails t unless it won.
func mustClaim(t *testing.T, s *pgdriver.Store, id string) (string, pgdriver.Claim) {
	t.Helper()
	tok := token(t)
	c, err := s.Claim(context.Background(), id, tok, testLease)
	if err != nil || c.Outcome != pgdriver.ClaimWon {
		t.Fatalf("Claim(%s) = %+v, %v; want won", id, c, err)
	}
	return tok, c
}

// mustGet reads id and fails t if it cannot.
func mustGet(t *testing.T, s *pgdriver.Store, id string) pgdriver.StoredTask {
	t.Helper()
	got, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return got
}

// exec runs sql on pool and fails t on an error: the tests move the
// database's times (a lease or a retry into the past) instead of waiting.
func exec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// expireLease moves the lease of id a second into the past, as if it ran
// out on the database's clock.
func expireLease(t *testing.T, pool *pgxpool.Pool, id string) {
	t.Helper()
	exec(t, pool, `UPDATE stpe_tasks SET lease_expires = statement_timestamp() - interval '1 second' WHERE id = $1`, id)
}

// makeDue moves the run time of id a second into the past.
func makeDue(t *testing.T, pool *pgxpool.Pool, id string) {
	t.Helper()
	exec(t, pool, `UPDATE stpe_tasks SET run_at = statement_timestamp() - interval '1 second' WHERE id = $1`, id)
}

// scheduleTx schedules id in a transaction, calls inTx (if not nil)
// before its end, and commits or rolls it back.
func scheduleTx(t *testing.T, s *pgdriver.Store, pool *pgxpool.Pool, id string, commit bool, inTx func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.ScheduleTx(ctx, tx, dueTask(id)); err != nil || r != pgdriver.Created {
		t.Fatalf("ScheduleTx(%s) = %q, %v", id, r, err)
	}
	if inTx != nil {
		inTx()
	}
	if commit {
		err = tx.Commit(ctx)
	} else {
		err = tx.Rollback(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
}
