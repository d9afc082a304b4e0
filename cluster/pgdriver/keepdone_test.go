package pgdriver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// completeAll schedules, claims and completes each of ids with e.
func completeAll(t *testing.T, s *pgdriver.Store, e pgdriver.Ending, ids ...string) {
	t.Helper()
	for _, id := range ids {
		mustSchedule(t, s, dueTask(id))
		tok, _ := mustClaim(t, s, id)
		if out, err := s.Complete(context.Background(), id, tok, e); err != nil || out != pgdriver.OutcomeDone {
			t.Fatalf("Complete(%s) = %q, %v", id, out, err)
		}
	}
}

// doneIDs lists the IDs of the done records left, oldest first.
func doneIDs(t *testing.T, s *pgdriver.Store, ids ...string) []string {
	t.Helper()
	var left []string
	for _, id := range ids {
		got, err := s.Get(context.Background(), id)
		switch {
		case errors.Is(err, driver.ErrNotFound):
		case err != nil:
			t.Fatal(err)
		case got.State == pgdriver.Done:
			left = append(left, id)
		}
	}
	return left
}

// TestTrimDoneKeepsTheNewestWithinAge: done records are bounded by
// number (the newest Keep.Max kept) and by age (none older than
// Keep.Age), as WithKeepDone bounds them on Redis.
func TestTrimDoneKeepsTheNewestWithinAge(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	keep := driver.KeepDone{Age: time.Hour, Max: 3}
	ids := []string{"d0", "d1", "d2", "d3", "d4"}
	completeAll(t, s, pgdriver.Ending{Keep: keep}, ids...)
	for i, id := range ids { // finished a minute apart, d0 first
		exec(t, pool, `UPDATE stpe_tasks SET finished_at = statement_timestamp() - $2::integer * interval '1 minute' WHERE id = $1`, id, len(ids)-i)
	}
	if n, err := s.TrimDone(ctx, keep, 1); err != nil || n != 2 {
		t.Fatalf("TrimDone past 3 = %d, %v; want the 2 oldest", n, err)
	}
	if left := doneIDs(t, s, ids...); fmt.Sprint(left) != "[d2 d3 d4]" {
		t.Fatalf("done records left = %v; want the newest three", left)
	}
	exec(t, pool, `UPDATE stpe_tasks SET finished_at = statement_timestamp() - interval '2 hours' WHERE id = 'd3'`)
	if n, err := s.TrimDone(ctx, keep, 10); err != nil || n != 1 {
		t.Fatalf("TrimDone past the age = %d, %v; want d3", n, err)
	}
	if left := doneIDs(t, s, ids...); fmt.Sprint(left) != "[d2 d4]" {
		t.Fatalf("done records left = %v; want d2 and d4", left)
	}
	for _, bad := range []driver.KeepDone{{Age: time.Hour}, {Max: 3}} {
		if _, err := s.TrimDone(ctx, bad, 10); !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Errorf("TrimDone(%+v): %v; want ErrInvalidArgument", bad, err)
		}
	}
	if _, err := s.Complete(ctx, "x", "tok", pgdriver.Ending{Keep: driver.KeepDone{Max: 1}}); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Errorf("Complete keeping records of no age: %v; want ErrInvalidArgument", err)
	}
}

// TestDoneRecordHiddenPastItsAge: a done record older than the age it
// was kept for is not found, before any trim.
func TestDoneRecordHiddenPastItsAge(t *testing.T) {
	s, pool := newStore(t)
	completeAll(t, s, pgdriver.Ending{Keep: driver.KeepDone{Age: time.Minute, Max: 10}}, "a")
	if got := mustGet(t, s, "a"); got.ExpiresAt.Sub(got.FinishedAt) != time.Minute {
		t.Fatalf("done record = %+v; want kept a minute", got)
	}
	exec(t, pool, `UPDATE stpe_tasks SET expires_at = statement_timestamp() WHERE id = 'a'`)
	if _, err := s.Get(context.Background(), "a"); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("Get past the age: %v; want ErrNotFound", err)
	}
}

// TestCompleteMarksOnlyFixedIDs: a fixed ID that completed is held by its
// done marker for the retention, even without done records kept; a drawn
// ID is not, and its done record is replaced by a task of its kind, as
// the Redis store's store_task does.
func TestCompleteMarksOnlyFixedIDs(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	completeAll(t, s, pgdriver.Ending{Retention: time.Hour}, "fixed")
	if r, err := s.Schedule(ctx, dueTask("fixed")); err != nil || r != pgdriver.AlreadyDone {
		t.Fatalf("Schedule of a completed fixed ID = %q, %v; want done", r, err)
	}
	if r, err := s.ScheduleMany(ctx, []pgdriver.Task{dueTask("fixed"), withKind(dueTask("fixed"), "other")}); err != nil ||
		fmt.Sprint(r) != "[done conflict]" {
		t.Fatalf("ScheduleMany under a done marker = %v, %v; want [done conflict]", r, err)
	}
	exec(t, pool, `UPDATE stpe_done_marks SET expires_at = statement_timestamp() WHERE id = 'fixed'`)
	mustSchedule(t, s, dueTask("fixed"))

	drawn := dueTask("drawn")
	drawn.Fixed = false
	mustSchedule(t, s, drawn)
	tok, _ := mustClaim(t, s, "drawn")
	if _, err := s.Complete(ctx, "drawn", tok, keepHour); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Schedule(ctx, withKind(drawn, "other")); err != nil || r != pgdriver.Conflict {
		t.Fatalf("Schedule of another kind over a done record = %q, %v; want conflict", r, err)
	}
	if r, err := s.Schedule(ctx, drawn); err != nil || r != pgdriver.Created {
		t.Fatalf("Schedule over the done record of a drawn ID = %q, %v; want created", r, err)
	}
	if got := mustGet(t, s, "drawn"); got.State != pgdriver.Pending {
		t.Fatalf("rescheduled drawn ID = %+v; want pending", got)
	}
}
