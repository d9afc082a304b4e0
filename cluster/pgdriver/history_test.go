package pgdriver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestHistoryRecordsEachRun: every run that ends (failed, timed out,
// handed back, lost, succeeded) adds a record with the claiming node, the
// claim's start and the end by the database's clock, and the error cut to
// driver.MaxHistoryError bytes; the last driver.MaxHistory are kept.
func TestHistoryRecordsEachRun(t *testing.T) {
	ctx := context.Background()
	s, pool := nodeStore(t)
	mustSchedule(t, s, withRetries(dueTask("a"), 5))
	long := strings.Repeat("é", driver.MaxHistoryError) // 2 bytes each: twice the limit
	tok, _ := mustClaim(t, s, "a")
	if got := mustGet(t, s, "a"); got.ClaimedBy != "n1" {
		t.Fatalf("claimed by %q, want n1", got.ClaimedBy)
	}
	if _, err := s.Fail(ctx, "a", tok, pgdriver.Failure{Error: "slow", TimedOut: true}); err != nil {
		t.Fatal(err)
	}
	makeDue(t, pool, "a")
	tok, _ = mustClaim(t, s, "a")
	if _, err := s.Fail(ctx, "a", tok, pgdriver.Failure{Error: long}); err != nil {
		t.Fatal(err)
	}
	makeDue(t, pool, "a")
	tok, _ = mustClaim(t, s, "a")
	if _, err := s.Release(ctx, "a", tok); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, "a")
	expireLease(t, pool, "a")
	if _, err := s.ReapExpired(ctx, nil, 10, 5, driver.Timeline{}); err != nil {
		t.Fatal(err)
	}
	tok, _ = mustClaim(t, s, "a")
	if _, err := s.Complete(ctx, "a", tok, keepHour); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "a")
	want := []driver.Outcome{driver.OutcomeTimedOut, driver.OutcomeFailed, driver.OutcomeHandedBack, driver.OutcomeLost, driver.OutcomeSucceeded}
	if len(got.History) != len(want) {
		t.Fatalf("history %+v, want %v", got.History, want)
	}
	for i, r := range got.History {
		if r.Outcome != want[i] || r.Node != "n1" || r.Start.IsZero() || r.End.Before(r.Start) {
			t.Errorf("run %d = %+v, want %s by n1, ending after its start", i, r, want[i])
		}
	}
	if e := got.History[1].Error; len(e) != driver.MaxHistoryError || !utf8.ValidString(e) {
		t.Errorf("a long error is kept as %d bytes (valid UTF-8: %v), want %d", len(e), utf8.ValidString(e), driver.MaxHistoryError)
	}
	if got.History[0].Error != "slow" || got.History[3].Error != pgdriver.LeaseExpiredError || got.History[4].Error != "" {
		t.Errorf("errors %q, %q, %q", got.History[0].Error, got.History[3].Error, got.History[4].Error)
	}
	if got.ClaimedBy != "" || !got.History[4].End.Equal(got.FinishedAt) {
		t.Errorf("done task %+v: want no claim left and the last run ending at its finish", got)
	}
}

// TestHistoryKeepsTheLastRuns: past driver.MaxHistory runs, the oldest
// records go, and the rest stay oldest first.
func TestHistoryKeepsTheLastRuns(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	const runs = driver.MaxHistory + 3
	mustSchedule(t, s, withRetries(dueTask("a"), runs))
	for i := range runs {
		tok, _ := mustClaim(t, s, "a")
		if _, err := s.Fail(ctx, "a", tok, pgdriver.Failure{Error: fmt.Sprintf("run %d", i)}); err != nil {
			t.Fatal(err)
		}
		makeDue(t, pool, "a")
	}
	got := mustGet(t, s, "a")
	if len(got.History) != driver.MaxHistory {
		t.Fatalf("%d run records, want %d", len(got.History), driver.MaxHistory)
	}
	for i, r := range got.History {
		if want := fmt.Sprintf("run %d", runs-driver.MaxHistory+i); r.Error != want {
			t.Fatalf("record %d says %q, want %q", i, r.Error, want)
		}
	}
}
