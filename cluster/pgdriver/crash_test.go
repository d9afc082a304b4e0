package pgdriver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
)

// TestServerCrashKeepsCommittedState: a kill -9 of the server loses no
// committed task, claim or lease; while it is down the store's calls fail
// with wrapped errors; after its restart the listener has reconnected and
// subscribed again, and the lifecycle goes on with the same tokens.
func TestServerCrashKeepsCommittedState(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	pool := pgtest.NewPool(t, pgtest.DatabaseOn(t, srv))
	if _, err := pgdriver.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	s, err := pgdriver.New(pool, pgdriver.Options{Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	_, events := listen(t, s, 0, 1, 2, 3)
	const n, claimed = 50, 10
	tasks := make([]pgdriver.Task, n)
	for i := range tasks {
		tasks[i] = dueTask(fmt.Sprintf("c%d", i))
	}
	if _, err := s.ScheduleMany(ctx, tasks); err != nil {
		t.Fatal(err)
	}
	held, err := s.ClaimDue(ctx, pgdriver.ClaimDueParams{Token: "before-crash", Lease: testLease, Limit: claimed})
	if err != nil || len(held) != claimed {
		t.Fatalf("ClaimDue = %d claims, %v", len(held), err)
	}

	srv.Kill()
	nextEvent(t, events, func(e pgdriver.Event) bool { return e.Kind == pgdriver.EventDisconnected })
	if _, err := s.Schedule(ctx, dueTask("while-down")); err == nil || !strings.HasPrefix(err.Error(), "cluster: schedule k: postgres: ") {
		t.Fatalf("Schedule while the server is down: %v, want a wrapped failure", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, events, func(e pgdriver.Event) bool { return e.Kind == pgdriver.EventSubscribed })
	pool.Reset() // the pool's connections died with the server

	var pending, running int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'running') FROM stpe_tasks`).Scan(&pending, &running); err != nil {
		t.Fatal(err)
	}
	if pending != n-claimed || running != claimed {
		t.Fatalf("after the crash: %d pending, %d running; want %d and %d", pending, running, n-claimed, claimed)
	}
	leases := make([]pgdriver.Lease, len(held))
	for i, c := range held {
		leases[i] = pgdriver.Lease{ID: c.Task.ID, Token: "before-crash"}
	}
	if lost, err := s.Extend(ctx, leases, testLease); err != nil || len(lost) != 0 {
		t.Fatalf("Extend after the crash: lost %v, %v", lost, err)
	}
	if out, err := s.Complete(ctx, held[0].Task.ID, "before-crash", keepHour); err != nil || out != pgdriver.OutcomeDone {
		t.Fatalf("Complete after the crash = %q, %v", out, err)
	}
	mustSchedule(t, s, dueTask("after"))
	nextEvent(t, events, func(e pgdriver.Event) bool { return e.Kind == pgdriver.EventNotice && e.Notice.ID == "after" })
	if _, err := s.Get(ctx, "while-down"); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("the task refused while down is stored: %v", err)
	}
}
