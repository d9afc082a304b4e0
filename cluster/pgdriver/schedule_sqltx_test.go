package pgdriver_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "github.com/lib/pq"              // database/sql driver "postgres"
)

// The transactional schedule for database/sql users: ScheduleSQLTx and
// ScheduleManySQLTx in a *sql.Tx of pgx's stdlib driver and of lib/pq.

// sqlDrivers are the database/sql drivers the tests run on.
var sqlDrivers = []string{"pgx", "postgres"}

// forEachSQLDriver runs test once per database/sql driver, each on a
// fresh migrated database: its store (8 partitions) and a *sql.DB.
func forEachSQLDriver(t *testing.T, test func(t *testing.T, s *pgdriver.Store, db *sql.DB)) {
	for _, name := range sqlDrivers {
		t.Run(name, func(t *testing.T) {
			url := pgtest.Database(t)
			pool := pgtest.NewPool(t, url)
			if _, err := pgdriver.Migrate(context.Background(), pool); err != nil {
				t.Fatal(err)
			}
			s, err := pgdriver.New(pool, pgdriver.Options{Partitions: 8})
			if err != nil {
				t.Fatal(err)
			}
			test(t, s, openSQL(t, name, url))
		})
	}
}

// openSQL opens url with the database/sql driver name, closed when t ends.
func openSQL(t *testing.T, name, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open(name, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// beginSQL begins a transaction on db, rolled back when t ends unless it
// ended before.
func beginSQL(t *testing.T, db *sql.DB) *sql.Tx {
	t.Helper()
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// awkwardTask is a task whose fields need quoting in the text of a
// PostgreSQL array, with a due time in another zone to the microsecond.
func awkwardTask(id string) pgdriver.Task {
	return pgdriver.Task{
		ID: id + `, "quoted" {braced} \back\slash NULL é`, Kind: "mail",
		Payload:    []byte{0, '"', '\\', '{', ',', '}', 0xff, '\n'},
		Due:        time.Date(2031, 2, 3, 4, 5, 6, 789012000, time.FixedZone("east", 5*3600+1800)),
		MaxRetries: 7, Metadata: `{"k": "v, \"w\""}`, Fixed: true,
	}
}

// sameStored fails t unless the store (on db) holds task as given.
func sameStored(t *testing.T, s *pgdriver.Store, db *sql.DB, task pgdriver.Task) {
	t.Helper()
	got := mustGet(t, s, task.ID)
	// Get tells no Fixed: read the column.
	if err := db.QueryRow("SELECT fixed FROM stpe_tasks WHERE id = $1", task.ID).Scan(&got.Fixed); err != nil {
		t.Fatal(err)
	}
	if got.Kind != task.Kind || string(got.Payload) != string(task.Payload) || !got.Due.Equal(task.Due) ||
		got.MaxRetries != task.MaxRetries || got.Metadata != task.Metadata || got.Fixed != task.Fixed ||
		got.Partition != s.PartitionOf(task.ID) || got.State != pgdriver.Pending {
		t.Fatalf("stored %+v, want %+v", got, task)
	}
}

// TestScheduleSQLTxStoresOnlyOnCommit: a task scheduled in a database/sql
// transaction is unseen while it is open, stored as given once it
// commits, and never if it rolls back; the same for ScheduleManySQLTx.
func TestScheduleSQLTxStoresOnlyOnCommit(t *testing.T) {
	forEachSQLDriver(t, func(t *testing.T, s *pgdriver.Store, db *sql.DB) {
		ctx := context.Background()
		for _, commit := range []bool{false, true} {
			prefix := map[bool]string{false: "rolled-back", true: "committed"}[commit]
			one := awkwardTask(prefix + "-one")
			many := []pgdriver.Task{awkwardTask(prefix + "-many-1"), dueTask(prefix + "-many-2")}
			tx := beginSQL(t, db)
			if r, err := s.ScheduleSQLTx(ctx, tx, one); err != nil || r != pgdriver.Created {
				t.Fatalf("ScheduleSQLTx = %q, %v", r, err)
			}
			res, err := s.ScheduleManySQLTx(ctx, tx, many)
			if want := []pgdriver.ScheduleResult{pgdriver.Created, pgdriver.Created}; err != nil || !slices.Equal(res, want) {
				t.Fatalf("ScheduleManySQLTx = %v, %v; want %v", res, err, want)
			}
			for _, task := range append(many, one) {
				if _, err := s.Get(ctx, task.ID); !errors.Is(err, driver.ErrNotFound) {
					t.Fatalf("Get(%s) before the end of its transaction: %v, want ErrNotFound", task.ID, err)
				}
			}
			if commit {
				err = tx.Commit()
			} else {
				err = tx.Rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range append(many, one) {
				if commit {
					sameStored(t, s, db, task)
				} else if _, err := s.Get(ctx, task.ID); !errors.Is(err, driver.ErrNotFound) {
					t.Fatalf("Get(%s) after rollback: %v, want ErrNotFound", task.ID, err)
				}
			}
		}
	})
}

// TestScheduleSQLTxIsIdempotentByID: in a database/sql transaction, the
// same task again Exists and another under its ID is a Conflict, whether
// the first is committed or stored earlier in the same transaction; and
// ScheduleManySQLTx answers per task in order, a repeated ID included.
func TestScheduleSQLTxIsIdempotentByID(t *testing.T) {
	forEachSQLDriver(t, func(t *testing.T, s *pgdriver.Store, db *sql.DB) {
		ctx := context.Background()
		mustSchedule(t, s, dueTask("committed"))
		other := withPayload(dueTask("committed"), []byte("other"))
		tx := beginSQL(t, db)
		for _, c := range []struct {
			task pgdriver.Task
			want pgdriver.ScheduleResult
		}{
			{dueTask("committed"), pgdriver.Exists},
			{other, pgdriver.Conflict},
			{dueTask("in-tx"), pgdriver.Created},
			{dueTask("in-tx"), pgdriver.Exists},
			{withPayload(dueTask("in-tx"), []byte("other")), pgdriver.Conflict},
		} {
			if r, err := s.ScheduleSQLTx(ctx, tx, c.task); err != nil || r != c.want {
				t.Fatalf("ScheduleSQLTx(%s, %q) = %q, %v; want %q", c.task.ID, c.task.Payload, r, err, c.want)
			}
		}
		tasks := []pgdriver.Task{dueTask("n1"), dueTask("committed"), other, dueTask("in-tx"), dueTask("n1"), withPayload(dueTask("n1"), []byte("x"))}
		res, err := s.ScheduleManySQLTx(ctx, tx, tasks)
		want := []pgdriver.ScheduleResult{pgdriver.Created, pgdriver.Exists, pgdriver.Conflict, pgdriver.Exists, pgdriver.Exists, pgdriver.Conflict}
		if err != nil || !slices.Equal(res, want) {
			t.Fatalf("ScheduleManySQLTx = %v, %v; want %v", res, err, want)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"committed", "in-tx", "n1"} {
			sameStored(t, s, db, dueTask(id))
		}
	})
}

// TestScheduleSQLTxRefusesBadInput: bad input, a nil transaction and a
// finished one are errors (the first two wrapping
// scheduler.ErrInvalidArgument, the last sql.ErrTxDone), and nothing is
// stored.
func TestScheduleSQLTxRefusesBadInput(t *testing.T) {
	forEachSQLDriver(t, func(t *testing.T, s *pgdriver.Store, db *sql.DB) {
		ctx := context.Background()
		tx := beginSQL(t, db)
		bad := []pgdriver.Task{
			{ID: "", Kind: "k", Due: time.Now()},
			{ID: "x", Kind: "with space", Due: time.Now()},
			{ID: "x", Kind: "k"},
			{ID: "x", Kind: "k", Due: time.Now(), MaxRetries: -1},
		}
		for _, task := range bad {
			if _, err := s.ScheduleSQLTx(ctx, tx, task); !errors.Is(err, scheduler.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), "cluster: schedule") {
				t.Fatalf("ScheduleSQLTx(%+v): %v, want a cluster: error wrapping ErrInvalidArgument", task, err)
			}
		}
		if _, err := s.ScheduleManySQLTx(ctx, tx, []pgdriver.Task{dueTask("good"), bad[1]}); !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Fatalf("ScheduleManySQLTx with a bad task: %v, want ErrInvalidArgument", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "good"); !errors.Is(err, driver.ErrNotFound) {
			t.Fatalf("Get(good) after a refused ScheduleManySQLTx: %v, want ErrNotFound", err)
		}
		if _, err := s.ScheduleSQLTx(ctx, nil, dueTask("x")); !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Fatalf("ScheduleSQLTx with a nil tx: %v, want ErrInvalidArgument", err)
		}
		if _, err := s.ScheduleManySQLTx(ctx, nil, []pgdriver.Task{dueTask("x")}); !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Fatalf("ScheduleManySQLTx with a nil tx: %v, want ErrInvalidArgument", err)
		}
		if _, err := s.ScheduleSQLTx(ctx, tx, dueTask("x")); !errors.Is(err, sql.ErrTxDone) || !strings.HasPrefix(err.Error(), "cluster: schedule") {
			t.Fatalf("ScheduleSQLTx in a committed tx: %v, want a cluster: error wrapping sql.ErrTxDone", err)
		}
		if _, err := s.ScheduleManySQLTx(ctx, tx, []pgdriver.Task{dueTask("x")}); !errors.Is(err, sql.ErrTxDone) {
			t.Fatalf("ScheduleManySQLTx in a committed tx: %v, want sql.ErrTxDone", err)
		}
		if _, err := s.Get(ctx, "x"); !errors.Is(err, driver.ErrNotFound) {
			t.Fatalf("Get(x): %v, want ErrNotFound", err)
		}
	})
}

// TestScheduleSQLTxNotifiesOnCommitOnly: a task scheduled in a
// database/sql transaction is told once the transaction commits, and
// never if it rolls back.
func TestScheduleSQLTxNotifiesOnCommitOnly(t *testing.T) {
	forEachSQLDriver(t, func(t *testing.T, s *pgdriver.Store, db *sql.DB) {
		ctx := context.Background()
		ids, _ := idsIn(s, 5, 4)
		_, events := listen(t, s, 5)
		rolledBack := beginSQL(t, db)
		if _, err := s.ScheduleSQLTx(ctx, rolledBack, dueTask(ids[0])); err != nil {
			t.Fatal(err)
		}
		if err := rolledBack.Rollback(); err != nil {
			t.Fatal(err)
		}
		mustSchedule(t, s, dueTask(ids[1]))
		if n := nextNotice(t, events); n.ID != ids[1] {
			t.Fatalf("notice %+v, want %s (nothing for the rolled back %s)", n, ids[1], ids[0])
		}
		tx := beginSQL(t, db)
		if _, err := s.ScheduleManySQLTx(ctx, tx, []pgdriver.Task{dueTask(ids[2])}); err != nil {
			t.Fatal(err)
		}
		mustSchedule(t, s, dueTask(ids[3]))
		if n := nextNotice(t, events); n.ID != ids[3] {
			t.Fatalf("notice %+v, want %s (nothing for %s before its commit)", n, ids[3], ids[2])
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if n := nextNotice(t, events); n.ID != ids[2] || n.State != "pending" {
			t.Fatalf("notice %+v, want pending %s on its commit", n, ids[2])
		}
	})
}
