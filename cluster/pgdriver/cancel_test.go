package pgdriver_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestCancelInEachState: Cancel removes a pending, running, dead or done
// task, says whether a run was in flight, and frees the ID (a completed
// fixed ID stays held by its done marker); an unknown ID is not removed.
func TestCancelInEachState(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	for _, id := range []string{"pending", "running", "dead", "done"} {
		mustSchedule(t, s, dueTask(id))
	}
	tok, _ := mustClaim(t, s, "running")
	dtok, _ := mustClaim(t, s, "dead")
	if _, err := s.Fail(ctx, "dead", dtok, pgdriver.Failure{SkipRetry: true}); err != nil {
		t.Fatal(err)
	}
	ctok, _ := mustClaim(t, s, "done")
	if _, err := s.Complete(ctx, "done", ctok, keepHour); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"pending", "running", "dead", "done"} {
		c, err := s.Cancel(ctx, id, pgdriver.Ending{})
		want := pgdriver.Cancellation{Removed: true, WasRunning: id == "running"}
		if err != nil || c != want {
			t.Errorf("Cancel(%s) = %+v, %v; want %+v", id, c, err, want)
		}
		if _, err := s.Get(ctx, id); !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("Get(%s) after Cancel: %v", id, err)
		}
		again := pgdriver.Created
		if id == "done" {
			again = pgdriver.AlreadyDone // its done marker outlives the record
		}
		if r, err := s.Schedule(ctx, dueTask(id)); err != nil || r != again {
			t.Errorf("Schedule(%s) after Cancel = %q, %v; want %q", id, r, err, again)
		}
	}
	if out, err := s.Complete(ctx, "running", tok, pgdriver.Ending{}); err != nil || out != pgdriver.OutcomeLost {
		t.Fatalf("Complete of a canceled run = %q, %v; want lost", out, err)
	}
	if c, err := s.Cancel(ctx, "never", pgdriver.Ending{}); err != nil || c.Removed {
		t.Fatalf("Cancel of an unknown ID = %+v, %v", c, err)
	}
	if _, err := s.Cancel(ctx, "", pgdriver.Ending{}); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("Cancel(\"\"): %v", err)
	}
	if _, err := s.Get(ctx, "never"); !errors.Is(err, driver.ErrNotFound) || err.Error() != "cluster: get never: no such task" {
		t.Fatalf("Get of an unknown ID: %v", err)
	}
}

// TestCancelRacingClaim: a cancel and a claim of the same due task at
// once agree: either the claim won and the cancel saw the run, or the
// cancel came first and the claim found nothing.
func TestCancelRacingClaim(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	const rounds = 60
	claimedFirst := 0
	for i := range rounds {
		id := fmt.Sprintf("r%d", i)
		mustSchedule(t, s, dueTask(id))
		var (
			wg       sync.WaitGroup
			claim    pgdriver.Claim
			cancel   pgdriver.Cancellation
			errClaim error
			errCanc  error
		)
		wg.Add(2)
		go func() {
			defer wg.Done()
			claim, errClaim = s.Claim(ctx, id, "tok", testLease)
		}()
		go func() {
			defer wg.Done()
			cancel, errCanc = s.Cancel(ctx, id, pgdriver.Ending{})
		}()
		wg.Wait()
		if errClaim != nil || errCanc != nil {
			t.Fatal(errClaim, errCanc)
		}
		if !cancel.Removed {
			t.Fatalf("%s: the cancel removed nothing", id)
		}
		won := claim.Outcome == pgdriver.ClaimWon
		if won != cancel.WasRunning {
			t.Fatalf("%s: claim %v, cancel %+v: they disagree", id, claim.Outcome, cancel)
		}
		if !won && claim.Outcome != pgdriver.ClaimGone {
			t.Fatalf("%s: claim after the cancel = %v, want gone", id, claim.Outcome)
		}
		if won {
			claimedFirst++
		}
		if _, err := s.Get(ctx, id); !errors.Is(err, driver.ErrNotFound) {
			t.Fatalf("%s survived its cancel: %v", id, err)
		}
	}
	t.Logf("the claim came first in %d of %d rounds", claimedFirst, rounds)
}
