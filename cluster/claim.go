package cluster

import (
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The claim: the driver moves a due task from pending to running for one
// owner, atomically, so only one node can win it (driver.Claims.Claim).
// It checks the due time against the store's clock, so a node whose clock
// runs ahead is told to wait, and never starts a task before its due time
// by the store's clock.

// claimOutcome is what a claim found.
type claimOutcome = driver.ClaimOutcome

const (
	claimGone    = driver.ClaimGone    // not pending: claimed elsewhere, canceled or done
	claimWon     = driver.ClaimWon     // claimed: this node holds the lease
	claimLater   = driver.ClaimLater   // pending, but due later than the node expected
	claimEarly   = driver.ClaimEarly   // pending for the expected time, not yet due by the store's clock
	claimSkipped = driver.ClaimSkipped // a periodic occurrence the misfire policy skipped (misfire.go)
	claimBlocked = driver.ClaimBlocked // a periodic occurrence that waits for another one (misfire.go)
)

// claimResult is what a claim returned: for claimWon the task, for
// claimLater and claimEarly its kind and the time it is due (and, for
// claimEarly, the store's time then).
type claimResult struct {
	outcome  claimOutcome
	kind     string
	payload  []byte
	due      int64         // µs: the task's due time (claimWon), or when it is pending for
	storeNow int64         // µs: the store's clock at the claim (claimEarly)
	wait     time.Duration // how long a blocked occurrence waits before it is claimed again (claimBlocked)
	attempt  int           // failed runs so far
	lost     int           // runs lost to faults so far
	meta     string        // the observer's metadata stored with the task (claimWon)
}

// claimed is the node's reading of the driver's answer c to a claim made
// with lease.
func claimed(c driver.Claim, lease time.Duration) claimResult {
	r := claimResult{outcome: c.Outcome, kind: c.Kind, payload: c.Payload, attempt: c.Attempt, lost: c.Lost, meta: c.Meta}
	switch c.Outcome {
	case claimWon, claimLater:
		r.due = c.Due.UnixMicro()
	case claimEarly:
		r.due, r.storeNow = c.Due.UnixMicro(), c.StoreNow.UnixMicro()
	case claimBlocked:
		r.wait = blockedWait(c.BlockedUntil, c.StoreNow, lease)
	}
	return r
}
