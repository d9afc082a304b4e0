package pgdriver_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/jackc/pgx/v5"
)

// TestScheduleIsIdempotentByID: the same task again is Exists, a different
// one under the ID is Conflict, and neither overwrites what is stored.
func TestScheduleIsIdempotentByID(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	due := time.Date(2030, 1, 2, 3, 4, 5, 6789000, time.UTC)
	task := pgdriver.Task{ID: "a", Kind: "mail", Payload: []byte("hello"), Due: due, MaxRetries: 2, Metadata: "m"}
	mustSchedule(t, s, task)
	cases := []struct {
		name string
		task pgdriver.Task
		want pgdriver.ScheduleResult
	}{
		{"same task", task, pgdriver.Exists},
		{"same task, due given with nanoseconds", withDue(task, due.Add(999)), pgdriver.Exists},
		{"other payload", withPayload(task, []byte("bye")), pgdriver.Conflict},
		{"other kind", withKind(task, "sms"), pgdriver.Conflict},
		{"other due", withDue(task, due.Add(time.Second)), pgdriver.Conflict},
	}
	for _, c := range cases {
		r, err := s.Schedule(ctx, c.task)
		if err != nil || r != c.want {
			t.Errorf("%s: Schedule = %q, %v; want %q", c.name, r, err, c.want)
		}
	}
	got := mustGet(t, s, "a")
	if got.Kind != "mail" || !bytes.Equal(got.Payload, []byte("hello")) || !got.Due.Equal(due) ||
		!got.RunAt.Equal(due) || got.MaxRetries != 2 || got.Metadata != "m" || got.State != pgdriver.Pending ||
		got.Partition != s.PartitionOf("a") {
		t.Fatalf("stored task = %+v", got)
	}
}

func withDue(t pgdriver.Task, due time.Time) pgdriver.Task { t.Due = due; return t }
func withKind(t pgdriver.Task, kind string) pgdriver.Task  { t.Kind = kind; return t }
func withPayload(t pgdriver.Task, p []byte) pgdriver.Task  { t.Payload = p; return t }
func withID(t pgdriver.Task, id string) pgdriver.Task      { t.ID = id; return t }
func withRetries(t pgdriver.Task, max int) pgdriver.Task   { t.MaxRetries = max; return t }

// TestScheduleRefusesBadInput: each bad task is an error wrapping
// scheduler.ErrInvalidArgument, shaped "cluster: what: why", and nothing
// is stored.
func TestScheduleRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	ok := dueTask("ok")
	bad := map[string]pgdriver.Task{
		"empty ID":         withID(ok, ""),
		"long ID":          withID(ok, strings.Repeat("x", 513)),
		"empty kind":       withKind(ok, ""),
		"kind with space":  withKind(ok, "a b"),
		"long kind":        withKind(ok, strings.Repeat("k", 201)),
		"zero due":         withDue(ok, time.Time{}),
		"negative retries": withRetries(ok, -1),
	}
	for name, task := range bad {
		_, err := s.Schedule(ctx, task)
		if !errors.Is(err, scheduler.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), "cluster: schedule") {
			t.Errorf("%s: err = %v, want cluster: schedule...: wrapping ErrInvalidArgument", name, err)
		}
		if _, err := s.ScheduleMany(ctx, []pgdriver.Task{dueTask("many-" + name), task}); !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Errorf("%s in ScheduleMany: err = %v, want ErrInvalidArgument", name, err)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM stpe_tasks").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d tasks stored after bad input (%v)", n, err)
	}
}

// TestScheduleTxStoresOnlyOnCommit: a task scheduled in a transaction
// that rolls back is not stored; one in a transaction that commits is.
func TestScheduleTxStoresOnlyOnCommit(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	for _, commit := range []bool{false, true} {
		id := "rolled-back"
		if commit {
			id = "committed"
		}
		scheduleTx(t, s, pool, id, commit, func() {
			if _, err := s.Get(ctx, id); !errors.Is(err, driver.ErrNotFound) {
				t.Fatalf("Get(%s) before the end of its transaction: %v, want ErrNotFound", id, err)
			}
		})
		_, err := s.Get(ctx, id)
		if commit && err != nil {
			t.Fatalf("Get(%s) after commit: %v", id, err)
		}
		if !commit && !errors.Is(err, driver.ErrNotFound) {
			t.Fatalf("Get(%s) after rollback: %v, want ErrNotFound", id, err)
		}
	}
	if _, err := s.ScheduleTx(ctx, nil, dueTask("x")); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("ScheduleTx with a nil tx: %v", err)
	}
}

// TestScheduleManyResultsInOrder: one call stores the new tasks and tells,
// per task in order, what holds the taken IDs, a repeated ID included.
func TestScheduleManyResultsInOrder(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	mustSchedule(t, s, dueTask("old"))
	conflicting := withPayload(dueTask("clash"), []byte("first"))
	mustSchedule(t, s, conflicting)
	tasks := []pgdriver.Task{dueTask("n1"), dueTask("old"), withPayload(conflicting, []byte("second")), dueTask("n2"), dueTask("n1")}
	res, err := s.ScheduleMany(ctx, tasks)
	if err != nil {
		t.Fatal(err)
	}
	want := []pgdriver.ScheduleResult{pgdriver.Created, pgdriver.Exists, pgdriver.Conflict, pgdriver.Created, pgdriver.Exists}
	if len(res) != len(want) {
		t.Fatalf("results %v, want %v", res, want)
	}
	for i := range want {
		if res[i] != want[i] {
			t.Fatalf("results %v, want %v", res, want)
		}
	}
	for _, id := range []string{"n1", "n2"} {
		if got := mustGet(t, s, id); got.State != pgdriver.Pending || got.Partition != s.PartitionOf(id) {
			t.Fatalf("%s stored as %+v", id, got)
		}
	}
	if res, err := s.ScheduleMany(ctx, nil); err != nil || len(res) != 0 {
		t.Fatalf("ScheduleMany(nil) = %v, %v", res, err)
	}
}

// TestScheduleManyTxRollsBackWhole: tasks scheduled in a transaction
// rolled back are none of them stored.
func TestScheduleManyTxRollsBackWhole(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := s.ScheduleManyTx(ctx, tx, []pgdriver.Task{dueTask("r1"), dueTask("r2")}); err != nil {
			return err
		}
		return errors.New("roll back")
	})
	if err == nil || err.Error() != "roll back" {
		t.Fatalf("BeginFunc: %v", err)
	}
	for _, id := range []string{"r1", "r2"} {
		if _, err := s.Get(ctx, id); !errors.Is(err, driver.ErrNotFound) {
			t.Fatalf("Get(%s) after rollback: %v", id, err)
		}
	}
}
