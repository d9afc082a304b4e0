package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// TestClaimOccurrenceBacklogBlocksWithoutTheLock: under MisfireRunEach,
// the claim of an occurrence with an earlier one still pending and due
// answers blocked at once, without the lock that orders the claims of the
// task's occurrences. After a store outage every node asks for every
// occurrence of the backlog, each time a run ends; queued on that one
// lock, those claims held a connection each past their deadline, and the
// runs' own completions missed their leases behind them.
func TestClaimOccurrenceBacklogBlocksWithoutTheLock(t *testing.T) {
	ctx := context.Background()
	d, pool := newDriver(t)
	ids, dues := storeOccurrences(t, d, "b", 3)

	// Another claim of the task's occurrences is deciding: it holds the
	// lock until its transaction ends.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(1937010789, hashtext('@b'))"); err != nil {
		t.Fatal(err)
	}

	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := d.ClaimOccurrence(cctx, ids[2], "@b", dues[2], testLease, "owner", driver.Occurrence{
		Misfire: "each", Due: dues[2], Next: dues[2].Add(time.Minute), Threshold: time.Second, Retention: time.Hour})
	if err != nil {
		t.Fatalf("the claim of the third occurrence, two earlier ones pending, while another claim decides: %v", err)
	}
	if c.Outcome != driver.ClaimBlocked {
		t.Fatalf("outcome %v, want blocked (two earlier occurrences are pending and due)", c.Outcome)
	}
}
