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

// TestCompleteKeepsDoneForRetention: a completed task with a fixed ID is
// a done record, and its done marker holds the ID for the retention (the
// same task is AlreadyDone, another a Conflict); past the retention the
// same ID schedules anew, and TrimDone deletes the aged done records in
// batches.
func TestCompleteKeepsDoneForRetention(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	mustSchedule(t, s, dueTask("a"))
	tok, _ := mustClaim(t, s, "a")
	if out, err := s.Complete(ctx, "a", tok, keepHour); err != nil || out != pgdriver.OutcomeDone {
		t.Fatalf("Complete = %q, %v", out, err)
	}
	got := mustGet(t, s, "a")
	if got.State != pgdriver.Done || got.LeaseToken != "" || got.ExpiresAt.Sub(got.FinishedAt) != time.Hour {
		t.Fatalf("done task = %+v; want done, no lease, kept an hour", got)
	}
	if r, err := s.Schedule(ctx, dueTask("a")); err != nil || r != pgdriver.AlreadyDone {
		t.Fatalf("Schedule of the done task = %q, %v; want done", r, err)
	}
	if r, err := s.Schedule(ctx, withKind(dueTask("a"), "other")); err != nil || r != pgdriver.Conflict {
		t.Fatalf("Schedule of another task under a done ID = %q, %v; want conflict", r, err)
	}
	if out, err := s.Complete(ctx, "a", tok, keepHour); err != nil || out != pgdriver.OutcomeLost {
		t.Fatalf("second Complete = %q, %v; want lost", out, err)
	}
	exec(t, pool, `UPDATE stpe_tasks SET expires_at = statement_timestamp() - interval '1 second' WHERE id = 'a'`)
	exec(t, pool, `UPDATE stpe_done_marks SET expires_at = statement_timestamp() - interval '1 second' WHERE id = 'a'`)
	if _, err := s.Get(ctx, "a"); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("Get past the retention: %v, want ErrNotFound", err)
	}
	if r, err := s.Schedule(ctx, dueTask("a")); err != nil || r != pgdriver.Created {
		t.Fatalf("Schedule past the retention = %q, %v; want created", r, err)
	}
	if got := mustGet(t, s, "a"); got.State != pgdriver.Pending || got.Attempts != 0 {
		t.Fatalf("rescheduled task = %+v", got)
	}

	const expired = 25
	for i := range expired {
		id := fmt.Sprintf("old%d", i)
		mustSchedule(t, s, dueTask(id))
		tok, _ := mustClaim(t, s, id)
		if _, err := s.Complete(ctx, id, tok, keepHour); err != nil {
			t.Fatal(err)
		}
	}
	mustSchedule(t, s, dueTask("kept"))
	tok, _ = mustClaim(t, s, "kept")
	if _, err := s.Complete(ctx, "kept", tok, keepHour); err != nil {
		t.Fatal(err)
	}
	exec(t, pool, `UPDATE stpe_tasks SET expires_at = statement_timestamp() - interval '1 second' WHERE id LIKE 'old%'`)
	if c, err := s.Cancel(ctx, "old0", pgdriver.Ending{}); err != nil || c.Removed {
		t.Fatalf("Cancel of a done task past its retention = %+v, %v; want nothing removed", c, err)
	}
	if n, err := s.TrimDone(ctx, keepHour.Keep, 10); err != nil || n != expired-1 {
		t.Fatalf("TrimDone = %d, %v; want %d", n, err, expired-1)
	}
	var left int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM stpe_tasks").Scan(&left); err != nil || left != 2 {
		t.Fatalf("%d tasks left after the trim (%v), want the pending a and the kept done task", left, err)
	}
	if _, err := s.TrimDone(ctx, keepHour.Keep, 0); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("TrimDone(0): %v", err)
	}
}

// TestCompleteWithoutRetentionDeletes: a retention of zero deletes the
// task, and its ID is free again.
func TestCompleteWithoutRetentionDeletes(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	mustSchedule(t, s, dueTask("a"))
	tok, _ := mustClaim(t, s, "a")
	if out, err := s.Complete(ctx, "a", "not-"+tok, pgdriver.Ending{}); err != nil || out != pgdriver.OutcomeLost {
		t.Fatalf("Complete with a wrong token = %q, %v; want lost", out, err)
	}
	if out, err := s.Complete(ctx, "a", tok, pgdriver.Ending{}); err != nil || out != pgdriver.OutcomeDone {
		t.Fatalf("Complete = %q, %v", out, err)
	}
	if _, err := s.Get(ctx, "a"); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("Get after Complete without retention: %v", err)
	}
	mustSchedule(t, s, dueTask("a"))
}

// TestFailRetriesThenDies: each failure counts an attempt and is retried
// at the database's now plus the backoff, until the attempts exceed the
// task's retry limit: then it is dead, with its last error.
func TestFailRetriesThenDies(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	mustSchedule(t, s, withRetries(dueTask("a"), 2))
	backoff := 90 * time.Second
	for attempt := 1; attempt <= 3; attempt++ {
		tok, c := mustClaim(t, s, "a")
		if c.Attempts != attempt-1 {
			t.Fatalf("claim %d says %d attempts, want %d", attempt, c.Attempts, attempt-1)
		}
		if out, err := s.Fail(ctx, "a", "not-"+tok, pgdriver.Failure{Error: "x"}); err != nil || out != pgdriver.OutcomeLost {
			t.Fatalf("Fail with a wrong token = %q, %v; want lost", out, err)
		}
		msg := fmt.Sprintf("boom %d", attempt)
		out, err := s.Fail(ctx, "a", tok, pgdriver.Failure{Error: msg, Backoff: backoff})
		if err != nil {
			t.Fatal(err)
		}
		got := mustGet(t, s, "a")
		if got.Attempts != attempt || got.LastError != msg || got.LeaseToken != "" {
			t.Fatalf("after failure %d: %+v", attempt, got)
		}
		if attempt < 3 {
			if out != pgdriver.OutcomeRetry || got.State != pgdriver.Pending || got.RunAt.Sub(got.UpdatedAt) != backoff {
				t.Fatalf("failure %d = %q, task %+v; want a retry %v after the failure", attempt, out, got, backoff)
			}
			if c, err := s.Claim(ctx, "a", token(t), testLease); err != nil || c.Outcome != pgdriver.ClaimNotDue {
				t.Fatalf("Claim during the backoff = %+v, %v; want not due", c, err)
			}
			makeDue(t, pool, "a")
			continue
		}
		if out != pgdriver.OutcomeDead || got.State != pgdriver.Dead || got.FinishedAt.IsZero() {
			t.Fatalf("last failure = %q, task %+v; want dead", out, got)
		}
	}
	if c, err := s.Claim(ctx, "a", token(t), testLease); err != nil || c.Outcome != pgdriver.ClaimGone {
		t.Fatalf("Claim of a dead task = %+v, %v; want gone", c, err)
	}
}

// TestFailSkipRetryDiesAtOnce: a failure told not to retry makes the task
// dead with retries left.
func TestFailSkipRetryDiesAtOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	mustSchedule(t, s, dueTask("a"))
	tok, _ := mustClaim(t, s, "a")
	if out, err := s.Fail(ctx, "a", tok, pgdriver.Failure{Error: "fatal", SkipRetry: true}); err != nil || out != pgdriver.OutcomeDead {
		t.Fatalf("Fail with SkipRetry = %q, %v; want dead", out, err)
	}
	if _, err := s.Fail(ctx, "a", tok, pgdriver.Failure{Backoff: -time.Second}); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("Fail with a negative backoff: %v", err)
	}
}

// TestReleaseKeepsRunTime: a task handed back is pending for the time it
// was pending for, with no attempt counted; the old token then holds
// nothing.
func TestReleaseKeepsRunTime(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	mustSchedule(t, s, dueTask("a"))
	tok, c := mustClaim(t, s, "a")
	if out, err := s.Release(ctx, "a", tok); err != nil || out != pgdriver.OutcomeReleased {
		t.Fatalf("Release = %q, %v", out, err)
	}
	got := mustGet(t, s, "a")
	if got.State != pgdriver.Pending || !got.RunAt.Equal(c.RunAt) || got.Attempts != 0 || got.LeaseToken != "" {
		t.Fatalf("released task = %+v; want pending for %v", got, c.RunAt)
	}
	if out, err := s.Release(ctx, "a", tok); err != nil || out != pgdriver.OutcomeLost {
		t.Fatalf("second Release = %q, %v; want lost", out, err)
	}
	mustClaim(t, s, "a")
}
