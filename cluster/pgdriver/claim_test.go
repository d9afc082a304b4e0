package pgdriver_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestClaimChecksDueByTheDatabaseClock: a task due an hour from now is
// not claimed, and the answer carries the database's clock; once its run
// time is past on the database's clock, the claim wins, once.
func TestClaimChecksDueByTheDatabaseClock(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	var dbNow time.Time
	if err := pool.QueryRow(ctx, "SELECT statement_timestamp()").Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	due := dbNow.Add(time.Hour)
	mustSchedule(t, s, pgdriver.Task{ID: "later", Kind: "k", Payload: []byte("x"), Due: due, MaxRetries: 1})
	c, err := s.Claim(ctx, "later", token(t), testLease)
	if err != nil || c.Outcome != pgdriver.ClaimNotDue {
		t.Fatalf("Claim before due = %+v, %v; want not due", c, err)
	}
	if !c.RunAt.Equal(due.Truncate(time.Microsecond)) || c.DBNow.Before(dbNow) || !c.DBNow.Before(due) {
		t.Fatalf("not due answer: run at %v, db now %v; want run at %v, db now in [%v, %v)", c.RunAt, c.DBNow, due, dbNow, due)
	}
	makeDue(t, pool, "later")
	tok, won := mustClaim(t, s, "later")
	if won.Task.Kind != "k" || string(won.Task.Payload) != "x" || !won.Task.Due.Equal(due.Truncate(time.Microsecond)) ||
		won.Attempts != 0 || won.LostRuns != 0 || won.Task.MaxRetries != 1 {
		t.Fatalf("won claim = %+v", won)
	}
	got := mustGet(t, s, "later")
	if got.State != pgdriver.Running || got.LeaseToken != tok || got.LeaseExpires.Sub(got.ClaimedAt) != testLease {
		t.Fatalf("claimed task = %+v; want running under %s for %v from its claim", got, tok, testLease)
	}
	if c, err := s.Claim(ctx, "later", token(t), testLease); err != nil || c.Outcome != pgdriver.ClaimGone {
		t.Fatalf("second Claim = %+v, %v; want gone", c, err)
	}
	if c, err := s.Claim(ctx, "never-stored", token(t), testLease); err != nil || c.Outcome != pgdriver.ClaimGone {
		t.Fatalf("Claim of an unknown ID = %+v, %v; want gone", c, err)
	}
	if _, err := s.Claim(ctx, "later", "", testLease); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("Claim with no token: %v", err)
	}
}

// TestClaimRaceHasOneWinner: eight claimers of each of 40 due tasks, all
// at once: exactly one wins each task.
func TestClaimRaceHasOneWinner(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	const tasks, claimers = 40, 8
	for i := range tasks {
		mustSchedule(t, s, dueTask(fmt.Sprintf("t%d", i)))
	}
	var mu sync.Mutex // guards wins and errs
	wins := make(map[string]int)
	var errs []error
	var wg sync.WaitGroup
	for g := range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range tasks {
				id := fmt.Sprintf("t%d", i)
				c, err := s.Claim(ctx, id, fmt.Sprintf("tok-%d-%d", g, i), testLease)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if c.Outcome == pgdriver.ClaimWon {
					wins[id]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	for i := range tasks {
		if id := fmt.Sprintf("t%d", i); wins[id] != 1 {
			t.Errorf("%s won %d times, want once", id, wins[id])
		}
	}
}

// TestClaimDueSharesTasksOnce: four nodes claiming due tasks in batches at
// once each get distinct tasks, and together every due one, none of those
// not due, none of a paused kind, none outside their partitions.
func TestClaimDueSharesTasksOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	const n = 120
	for i := range n {
		mustSchedule(t, s, dueTask(fmt.Sprintf("d%d", i)))
	}
	mustSchedule(t, s, withDue(dueTask("future"), time.Now().Add(time.Hour)))
	mustSchedule(t, s, withKind(dueTask("paused"), "quiet"))
	if err := s.Pause(ctx, "quiet"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // guards owner and errs
	owner := make(map[string]int)
	var errs []error
	var wg sync.WaitGroup
	for node := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := s.ClaimDue(ctx, pgdriver.ClaimDueParams{Token: token(t), Lease: testLease, Limit: 7})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				for _, c := range got {
					if prev, ok := owner[c.Task.ID]; ok {
						errs = append(errs, fmt.Errorf("%s claimed by node %d and %d", c.Task.ID, prev, node))
					}
					owner[c.Task.ID] = node
				}
				mu.Unlock()
				if err != nil || len(got) == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if len(owner) != n {
		t.Fatalf("%d tasks claimed, want %d", len(owner), n)
	}
	for _, id := range []string{"future", "paused"} {
		if _, ok := owner[id]; ok {
			t.Errorf("%s claimed", id)
		}
	}
	// Partitions: a claim of one partition takes only its tasks.
	mustSchedule(t, s, dueTask("p-a"))
	mustSchedule(t, s, dueTask("p-b"))
	pa, pb := s.PartitionOf("p-a"), s.PartitionOf("p-b")
	if pa == pb {
		t.Fatalf("test IDs share partition %d; pick others", pa)
	}
	got, err := s.ClaimDue(ctx, pgdriver.ClaimDueParams{Partitions: []int{pb}, Token: token(t), Lease: testLease, Limit: 10})
	if err != nil || len(got) != 1 || got[0].Task.ID != "p-b" {
		t.Fatalf("ClaimDue of partition %d = %+v, %v; want p-b alone", pb, got, err)
	}
}

// TestClaimDueOverdueBy: a backup's claim takes only the tasks overdue by
// more than its delay.
func TestClaimDueOverdueBy(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	mustSchedule(t, s, dueTask("old"))
	mustSchedule(t, s, dueTask("fresh"))
	makeDue(t, pool, "fresh") // due a second ago
	got, err := s.ClaimDue(ctx, pgdriver.ClaimDueParams{Token: token(t), Lease: testLease, Limit: 10, OverdueBy: time.Minute})
	if err != nil || len(got) != 1 || got[0].Task.ID != "old" {
		t.Fatalf("ClaimDue overdue by a minute = %+v, %v; want old alone", got, err)
	}
}

// TestClaimOfPausedKind: a due task of a paused kind is not claimed until
// its kind is resumed.
func TestClaimOfPausedKind(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	mustSchedule(t, s, dueTask("x"))
	if err := s.Pause(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Claim(ctx, "x", token(t), testLease); err != nil || c.Outcome != pgdriver.ClaimPaused {
		t.Fatalf("Claim while paused = %+v, %v; want paused", c, err)
	}
	if err := s.Resume(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, "x")
}
