package driver

import (
	"context"
	"time"
)

// Claims is the group of a Driver's methods that run tasks: claiming a
// due task for one owner under a lease (Claim, ClaimOccurrence), renewing
// the leases an owner holds (Extend), recording how a run ended
// (Complete, Fail, Release), and taking back the tasks whose lease
// expired (Expired, Reap). Every change is fenced by the owner's token: a
// run that lost its lease can no longer change the task another owner
// holds. Every time these methods stamp or compare (a claim's start,
// whether a task is due, a lease's expiry, a retry's time) is the store's
// clock.
type Claims interface {
	// Claim moves task id, of kind as the caller believes (the driver
	// finds the stored kind if it is another), from pending to running
	// for owner, atomically, under a lease of lease from the store's
	// clock, if it is pending for due and due by the store's clock; it
	// stamps the run's start. Only one of the owners that claim a task
	// wins it. The answer (Claim.Outcome) is ClaimWon with the task,
	// ClaimLater when it is pending for another time than due (retried
	// or rescheduled), ClaimEarly when it is pending for due but not yet
	// due by the store's clock (with the store's time), and ClaimGone
	// when it is not pending at all (claimed elsewhere, canceled, done):
	// none of them is an error. asynq's dequeue, River's JobGetAvailable.
	Claim(ctx context.Context, id, kind string, due time.Time, lease time.Duration, owner string) (Claim, error)

	// ClaimOccurrence claims the occurrence id of a periodic task as
	// Claim does, deciding first, atomically and by the store's clock,
	// what o's misfire and overlap rules say of it given its task's
	// other occurrences (all in its partition, PeriodicPartition):
	// ClaimSkipped when the misfire policy skips it (it then leaves a
	// done marker under its ID for o.Retention, so that no node stores it
	// again), ClaimBlocked when it must wait for another occurrence's run
	// (Claim.BlockedUntil) or for an earlier occurrence. Quartz's
	// misfire instructions and @DisallowConcurrentExecution.
	ClaimOccurrence(ctx context.Context, id, kind string, due time.Time, lease time.Duration, owner string, o Occurrence) (Claim, error)

	// Extend renews, from the store's clock, the leases of held whose
	// owner still holds them, each partition's share atomically and all
	// in one round trip, and returns the IDs of the others (lost: reaped,
	// canceled or claimed by another owner since). River's and asynq's
	// heartbeats extend their leases so.
	Extend(ctx context.Context, lease time.Duration, held []Held) (lost []string, err error)

	// Expired lists, by partition index, the running tasks of partitions
	// whose lease expired by the store's clock, at most limit per
	// partition; full is true if some partition had limit or more. It
	// only reads: Reap takes them back.
	Expired(ctx context.Context, partitions []int, limit int) (expired map[int][]string, full bool, err error)

	// Reap takes back the tasks of expired (by partition index) whose
	// lease is still expired by the store's clock, each partition's share
	// atomically: each run is recorded as lost (OutcomeLost, counted in
	// tl), and its task is pending again, due now, or dead when it was
	// lost more than maxLost times. It returns the runs it took back, in
	// the partitions whose step succeeded even when another's failed (the
	// first error is returned too); a task finished or renewed meanwhile
	// is left as it is. asynq's recoverer, River's rescuer.
	Reap(ctx context.Context, expired map[int][]string, maxLost int, tl Timeline) ([]LostRun, error)

	// Complete records the successful run of task id held by owner,
	// atomically: the task is removed (or kept as a done record, by
	// keep), a task of a caller's ID keeps its done marker for retention
	// so that it is not stored again, and the run is counted in tl. It
	// answers RecordedDone, or RecordedLost when owner no longer holds
	// the task (nothing is changed). River's JobSetStateIfRunning
	// (completed), asynq's MarkAsComplete.
	Complete(ctx context.Context, id, kind, owner string, retention time.Duration, keep KeepDone, tl Timeline) (Recorded, error)

	// Fail records the failed run f of a task, atomically: the task is
	// pending again, due f.Backoff after the store's clock, its attempt
	// counted (RecordedRetry), or dead (RecordedDead) past its retry
	// limit or when f.SkipRetry; the run is counted in tl.
	// RecordedLost when f.Owner no longer holds the task (nothing is
	// changed). River's JobSetStateIfRunning (retryable or discarded),
	// asynq's Retry and Archive.
	Fail(ctx context.Context, f Failure, tl Timeline) (Recorded, error)

	// Release hands task id held by owner back to pending, due when it
	// was pending for, without counting an attempt (RecordedReleased),
	// and tells the owners of its partition that it is pending; the run
	// is recorded as OutcomeHandedBack. RecordedLost when owner no
	// longer holds the task. asynq's Requeue on shutdown.
	Release(ctx context.Context, id, kind, owner string) (Recorded, error)

	// PendingDepths reads, for each kind of each of partitions, how many
	// tasks are pending and the time the earliest is pending for, in
	// one round trip per step (Redis: two); a kind with no pending task
	// in a partition may be left out. It only reads, and may see each
	// partition at a different instant.
	PendingDepths(ctx context.Context, partitions []int) ([]PendingDepth, error)

	// RecordPendingDepths writes each of depths (its Pending and Overdue)
	// as the sample of its kind and partition in tl's minute of the
	// timeline, replacing an earlier sample of the minute; nothing when
	// tl.TTL is 0.
	RecordPendingDepths(ctx context.Context, depths []PendingDepth, tl Timeline) error
}

// PendingDepth is how many tasks of a kind are pending in a partition.
type PendingDepth struct {
	Partition int
	Kind      string
	// Pending counts the pending tasks.
	Pending int
	// Earliest is the time the earliest of them is pending for (the zero
	// Time if none is).
	Earliest time.Time
	// Overdue is how overdue the earliest is, as the caller reckons it
	// (PendingDepths leaves it 0; RecordPendingDepths writes it).
	Overdue time.Duration
}

// ClaimOutcome is what a claim found.
type ClaimOutcome int

const (
	// ClaimGone: the task is not pending (claimed elsewhere, canceled or
	// done).
	ClaimGone ClaimOutcome = iota
	// ClaimWon: the owner holds the task's lease.
	ClaimWon
	// ClaimLater: the task is pending, but for a later time than the
	// caller expected (Claim.Due).
	ClaimLater
	// ClaimEarly: the task is pending for the time expected, but not yet
	// due by the store's clock (Claim.Due, Claim.StoreNow).
	ClaimEarly
	// ClaimSkipped: a periodic occurrence its misfire policy skipped.
	ClaimSkipped
	// ClaimBlocked: a periodic occurrence that waits for another one
	// (Claim.BlockedUntil, Claim.StoreNow).
	ClaimBlocked
)

// Claim is what a claim found: the task for ClaimWon, the kind and time
// it is pending for for ClaimLater and ClaimEarly.
type Claim struct {
	Outcome ClaimOutcome
	// Kind is the task's stored kind (ClaimWon, ClaimLater, ClaimEarly).
	Kind string
	// Payload is the task's payload (ClaimWon).
	Payload []byte
	// Due is the task's due time (ClaimWon), or the time it is pending
	// for (ClaimLater, ClaimEarly).
	Due time.Time
	// StoreNow is the store's clock at the claim (ClaimEarly,
	// ClaimBlocked).
	StoreNow time.Time
	// BlockedUntil is when the lease of the run a blocked occurrence waits
	// for expires, by the store's clock, or the zero Time when it waits
	// for an earlier occurrence (ClaimBlocked).
	BlockedUntil time.Time
	// Attempt counts the task's failed runs so far, Lost its runs lost to
	// faults so far (ClaimWon).
	Attempt, Lost int
	// Meta is the metadata stored with the task (ClaimWon).
	Meta string
}

// Occurrence is what the claim of a periodic occurrence is told of its
// periodic task's rules.
type Occurrence struct {
	// Misfire is the task's misfire policy, by name: "coalesce", "skip"
	// or "each" (the names the cursors hold, Cursor.Misfire).
	Misfire string
	// Overlap says whether two occurrences of the task may run at once.
	Overlap bool
	// Due is the occurrence's due time (its ID's), Next the trigger's
	// next time after it (the zero Time if none).
	Due, Next time.Time
	// Threshold is how late the occurrence may start under the "skip"
	// policy.
	Threshold time.Duration
	// Retention is how long the done marker of a skipped occurrence is
	// kept.
	Retention time.Duration
}

// Held is a lease an owner holds: the task's ID and kind, and the owner's
// token.
type Held struct {
	ID, Kind, Owner string
}

// LostRun is a run the reaper took back: its lease expired because the
// node running it died, stalled or lost the store.
type LostRun struct {
	// ID is the task's ID.
	ID string
	// Kind is the task's kind.
	Kind string
	// Dead is true if the run was past the limit of lost runs
	// (WithMaxLostRuns) and the task is dead; otherwise it is pending
	// again, due now.
	Dead bool
}

// Failure is a failed run to record (Claims.Fail).
type Failure struct {
	// ID and Kind name the task, Owner the token of the run's claim.
	ID, Kind, Owner string
	// Error is the run's error text, kept in the task and its run
	// record (the run record keeps at most MaxHistoryError bytes).
	Error string
	// Backoff is how long after the store's clock a retry is due.
	Backoff time.Duration
	// SkipRetry makes the task dead whatever its retries left.
	SkipRetry bool
	// Outcome is the run record's outcome: OutcomeFailed or
	// OutcomeTimedOut.
	Outcome Outcome
}

// Recorded is what recording a run's end found.
type Recorded string

const (
	// RecordedLost: the owner no longer held the task; nothing changed.
	RecordedLost Recorded = "lost"
	// RecordedDone: a successful run was recorded.
	RecordedDone Recorded = "done"
	// RecordedRetry: the failed task is pending for its retry.
	RecordedRetry Recorded = "retry"
	// RecordedDead: the failed task is dead.
	RecordedDead Recorded = "dead"
	// RecordedReleased: the task is pending again, handed back.
	RecordedReleased Recorded = "released"
)
