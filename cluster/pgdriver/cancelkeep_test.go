package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestCancelKeepsACanceledDoneRecord: with done records kept, a canceled
// task stays as a done record whose last run record says canceled (the
// claim's node and start for a running task, none and Start equal to End
// for a pending one); its run is lost; canceling the record removes it;
// the ID is free for a task of its kind.
func TestCancelKeepsACanceledDoneRecord(t *testing.T) {
	ctx := context.Background()
	s, _ := nodeStore(t)
	keep := pgdriver.Ending{Retention: time.Hour, Keep: driver.KeepDone{Age: time.Hour, Max: 10}}
	mustSchedule(t, s, dueTask("pending"))
	mustSchedule(t, s, dueTask("running"))
	tok, _ := mustClaim(t, s, "running")
	claimedAt := mustGet(t, s, "running").ClaimedAt
	for _, id := range []string{"pending", "running"} {
		got, err := s.Cancel(ctx, id, keep)
		if want := (pgdriver.Cancellation{Removed: true, WasRunning: id == "running"}); err != nil || got != want {
			t.Fatalf("Cancel(%s) = %+v, %v; want %+v", id, got, err, want)
		}
		rec := mustGet(t, s, id)
		if rec.State != pgdriver.Done || rec.LeaseToken != "" || len(rec.History) != 1 {
			t.Fatalf("canceled %s = %+v; want a done record with one run record", id, rec)
		}
		last := rec.History[0]
		if last.Outcome != driver.OutcomeCanceled || last.Error != "" {
			t.Errorf("%s's run record = %+v; want canceled", id, last)
		}
		if id == "pending" && (last.Node != "" || !last.Start.Equal(last.End)) {
			t.Errorf("pending's run record = %+v; want no node, Start = End", last)
		}
		if id == "running" && (last.Node != "n1" || !last.Start.Equal(claimedAt) || !last.End.After(last.Start)) {
			t.Errorf("running's run record = %+v; want node n1 from the claim at %v", last, claimedAt)
		}
	}
	if out, err := s.Complete(ctx, "running", tok, keep); err != nil || out != pgdriver.OutcomeLost {
		t.Fatalf("Complete of the canceled run = %q, %v; want lost", out, err)
	}
	if got, err := s.Cancel(ctx, "pending", keep); err != nil || got != (pgdriver.Cancellation{Removed: true}) {
		t.Fatalf("Cancel of the done record = %+v, %v; want removed", got, err)
	}
	if left := doneIDs(t, s, "pending", "running"); len(left) != 1 || left[0] != "running" {
		t.Fatalf("done records after removing one = %v; want [running]", left)
	}
	if r, err := s.Schedule(ctx, dueTask("running")); err != nil || r != pgdriver.Created {
		t.Fatalf("Schedule over a canceled record = %q, %v; want created (a cancel leaves no marker)", r, err)
	}
}

// occurrence is occurrence n of the periodic task "@tick".
func occurrence(n int) pgdriver.Task {
	due := past.Add(time.Duration(n) * time.Minute)
	return pgdriver.Task{ID: driver.OccurrenceID("tick", due), Kind: "@tick", Payload: []byte("tick"), Due: due, Fixed: true}
}

// TestCancelRemembersAPeriodicOccurrence: a canceled periodic occurrence
// leaves its done marker for the retention, with or without done records
// kept, so a sweep storing it again finds it done (and skips it) until
// the retention ends; a canceled one-off task leaves none.
func TestCancelRemembersAPeriodicOccurrence(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	for i, keep := range []driver.KeepDone{{}, {Age: time.Hour, Max: 10}} {
		occ := occurrence(i)
		mustSchedule(t, s, occ)
		if got, err := s.Cancel(ctx, occ.ID, pgdriver.Ending{Retention: time.Hour, Keep: keep}); err != nil || !got.Removed {
			t.Fatalf("Cancel(%s) = %+v, %v", occ.ID, got, err)
		}
		if r, err := s.Schedule(ctx, occ); err != nil || r != pgdriver.AlreadyDone {
			t.Fatalf("Schedule of the canceled occurrence (keep %+v) = %q, %v; want done", keep, r, err)
		}
		if r, err := s.ScheduleMany(ctx, []pgdriver.Task{occ}); err != nil || r[0] != pgdriver.AlreadyDone {
			t.Fatalf("ScheduleMany of the canceled occurrence = %v, %v; want [done]", r, err)
		}
		if r, err := s.Schedule(ctx, withPayload(occ, []byte("other"))); err != nil || r != pgdriver.Conflict {
			t.Fatalf("Schedule of another task under the marker = %q, %v; want conflict", r, err)
		}
	}
	exec(t, pool, `UPDATE stpe_done_marks SET expires_at = statement_timestamp() - interval '1 second'`)
	if n, err := s.PurgeExpired(ctx, 1); err != nil || n != 2 {
		t.Fatalf("PurgeExpired = %d, %v; want the 2 markers", n, err)
	}
	if r, err := s.Schedule(ctx, occurrence(0)); err != nil || r != pgdriver.Created {
		t.Fatalf("Schedule past the retention = %q, %v; want created", r, err)
	}
	mustSchedule(t, s, dueTask("one-off"))
	if _, err := s.Cancel(ctx, "one-off", pgdriver.Ending{Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, s, dueTask("one-off"))
}
