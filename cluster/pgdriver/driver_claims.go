package pgdriver

import (
	"context"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The Claims group of driver.Driver (cluster/driver/claims.go): claiming
// a task or a periodic occurrence, renewing leases, listing and reaping
// the expired ones, and recording a run's end (the samples of pending
// depth are in driver_claims_depths.go). Every time they stamp or compare
// is the database's clock.

// Claim moves task id from pending to running for owner under a lease
// of lease from the database's clock, in one statement that locks the
// task's row alone (claimOneSQL; the claims made while one is in flight
// go together in the next, claimManyIDs), if it is pending for due and due by the
// database's clock; it stamps the run's start. Only one of the owners
// that claim a task wins. It answers ClaimWon with the task, ClaimLater
// (pending for a later time than due, retried or rescheduled), ClaimEarly
// (pending for due, not yet due by the database's clock, with its time)
// or ClaimGone (not pending: claimed elsewhere, canceled, done, dead, of
// a paused kind, or missing). kind is not needed: the row holds it.
// River's JobGetAvailable for one job, asynq's dequeue.
func (d *Driver) Claim(ctx context.Context, id, kind string, due time.Time, lease time.Duration, owner string) (driver.Claim, error) {
	if err := validClaim("claim "+id, id, owner, lease); err != nil {
		return driver.Claim{}, err
	}
	asked := toTime(due)
	c, found, err := d.st.claim(ctx, claimAsk{id: id, token: owner, lease: lease, due: &asked})
	if err != nil {
		return driver.Claim{}, failed("claim "+id, err)
	}
	return claimAnswer(c, found, asked), nil
}

// ClaimOccurrence claims the occurrence id of a periodic task as Claim
// does, in one statement, deciding first, atomically (under the advisory
// lock of the occurrences' kind, stpe_occurrence_rule of migration 004)
// and by the database's clock, what o's misfire and overlap rules say of
// it given the task's other occurrences: ClaimSkipped when the misfire
// policy skips it (a first run whose next occurrence is due, for
// "coalesce" and "skip", or, for "skip", later than o.Threshold), which
// deletes it and leaves its done marker for o.Retention; ClaimBlocked
// when it waits for an earlier occurrence due by now ("each",
// BlockedUntil zero) or, without o.Overlap, for the run of another
// occurrence (BlockedUntil its lease's expiry). The claims of other
// periodic tasks' occurrences made while one is in flight go together in
// the next statement (claim_occurrence_combine.go), each answered as
// alone. Quartz's misfire instructions and @DisallowConcurrentExecution.
func (d *Driver) ClaimOccurrence(ctx context.Context, id, kind string, due time.Time, lease time.Duration, owner string, o driver.Occurrence) (driver.Claim, error) {
	if err := validClaim("claim "+id, id, owner, lease); err != nil {
		return driver.Claim{}, err
	}
	switch {
	case o.Misfire != "coalesce" && o.Misfire != "skip" && o.Misfire != "each":
		return driver.Claim{}, invalid("claim "+id, "misfire policy %q: want coalesce, skip or each", o.Misfire)
	case o.Threshold < 0 || o.Retention < 0:
		return driver.Claim{}, invalid("claim "+id, "threshold %v or retention %v < 0", o.Threshold, o.Retention)
	}
	got, err := d.st.occurrences.do(ctx, occurrenceAsk{id: id, kind: kind, token: owner, lease: lease, due: due, o: o})
	if err != nil {
		return driver.Claim{}, failed("claim "+id, err)
	}
	return occurrenceAnswer(got.c, got.found, toTime(due)), nil
}

// occurrenceAnswer is ClaimOccurrence's answer for what the claim of an
// occurrence asked for due found (c; found is false when no task holds
// the ID).
func occurrenceAnswer(c claimFound, found bool, due time.Time) driver.Claim {
	switch {
	case !found:
		return driver.Claim{Outcome: driver.ClaimGone}
	case c.verdict == "skip" && c.skipped:
		return driver.Claim{Outcome: driver.ClaimSkipped}
	case c.verdict == "block":
		b := driver.Claim{Outcome: driver.ClaimBlocked, StoreNow: c.DBNow}
		if c.blocked != nil {
			b.BlockedUntil = *c.blocked
		}
		return b
	}
	return claimAnswer(c, found, due)
}

// claimer is the node a claim by owner records (claimed_by, and so the
// node of the run's RunRecord): the store's Options.Node when it names
// one, else the name of the cluster node the token belongs to, its stem
// before the last ':' ("node:seq"), as the Redis driver reads it.
func (s *Store) claimer(owner string) string {
	if s.node != "" {
		return s.node
	}
	if i := strings.LastIndexByte(owner, ':'); i >= 0 {
		return owner[:i]
	}
	return owner
}

// claimAnswer is what c, the claim of one task pending for asked, answers.
func claimAnswer(c claimFound, found bool, asked time.Time) driver.Claim {
	switch {
	case !found || c.state != Pending || c.paused:
		return driver.Claim{Outcome: driver.ClaimGone}
	case c.won:
		return driver.Claim{Outcome: driver.ClaimWon, Kind: c.Task.Kind, Payload: c.Task.Payload, Due: c.Task.Due,
			Attempt: c.Attempts, Lost: c.LostRuns, Meta: c.Task.Metadata}
	case c.RunAt.After(asked):
		return driver.Claim{Outcome: driver.ClaimLater, Kind: c.Task.Kind, Due: c.RunAt}
	case c.RunAt.After(c.DBNow):
		return driver.Claim{Outcome: driver.ClaimEarly, Kind: c.Task.Kind, Due: c.RunAt, StoreNow: c.DBNow}
	}
	return driver.Claim{Outcome: driver.ClaimGone}
}

// Extend renews, to the database's now plus lease, the leases of held
// whose owner still holds them, all in one statement (rows locked in ID
// order, so two calls never deadlock), and returns the IDs of the others
// (reaped, canceled or claimed by another owner since). River's and
// asynq's heartbeats.
func (d *Driver) Extend(ctx context.Context, lease time.Duration, held []Held) (lost []string, err error) {
	leases := make([]Lease, len(held))
	for i, h := range held {
		leases[i] = Lease{ID: h.ID, Token: h.Owner}
	}
	return d.st.Extend(ctx, leases, lease)
}

// Expired lists, by partition index, the running tasks of partitions
// (all if nil) whose lease expired by the database's clock, at most limit
// per partition, earliest expiry first, in one statement; full is true if
// some partition had limit or more (as the Redis driver says it). It
// changes no task: Reap takes them back. River's rescuer and asynq's
// recoverer look for the same.
//
// Since the reaper of every started node calls it every quarter lease, it
// also runs the driver's purge of what expired (driver_purge.go): at most
// once per Options.PurgeEvery (a minute by default; sooner while a
// backlog is left), when no other driver is purging, in bounded batches.
// A failed purge does not fail the listing, which the reap loop would
// take for a failed reap: it is counted in Purges (with its error) and
// the next run retries.
func (d *Driver) Expired(ctx context.Context, partitions []int, limit int) (expired map[int][]string, full bool, err error) {
	if limit < 1 {
		return nil, false, invalid("expired", "limit %d < 1", limit)
	}
	if err := d.st.validPartitions("expired", partitions); err != nil {
		return nil, false, err
	}
	rows, err := d.st.pool.Query(ctx, `
SELECT partition, id, n FROM (
    SELECT partition, id, row_number() OVER (PARTITION BY partition ORDER BY lease_expires, id) AS n
    FROM stpe_tasks
    WHERE state = 'running' AND lease_expires <= statement_timestamp()
      AND ($1::integer[] IS NULL OR partition = ANY($1::integer[]))
) AS due WHERE n <= $2`, partitionsArg(partitions), limit)
	if err != nil {
		return nil, false, failed("expired", err)
	}
	expired, _, err = byPartition(rows, limit)
	if err != nil {
		return nil, false, failed("expired", err)
	}
	for _, ids := range expired {
		full = full || len(ids) >= limit
	}
	d.purgeIfDue(ctx)
	return expired, full, nil
}

// Complete records the successful run of task id held by owner, in one
// statement (Store.Complete): the task is deleted, or kept as a done
// record by keep; a fixed ID keeps its done marker for retention; the run
// is counted in tl. It answers RecordedDone, or RecordedLost when owner
// no longer holds the task (nothing is changed). kind is not needed: the
// row holds it. River's JobSetStateIfRunning (completed), asynq's
// MarkAsComplete.
func (d *Driver) Complete(ctx context.Context, id, kind, owner string, retention time.Duration, keep driver.KeepDone, tl driver.Timeline) (Recorded, error) {
	out, err := d.st.Complete(ctx, id, owner, Ending{Retention: retention, Keep: keep, Timeline: tl})
	return Recorded(out), err
}

// Release hands task id held by owner back to pending, for the time it
// was pending for, without counting an attempt (RecordedReleased); the
// change notifies its partition, and the run is recorded as handed back.
// RecordedLost when owner no longer holds the task. asynq's Requeue on
// shutdown.
func (d *Driver) Release(ctx context.Context, id, kind, owner string) (Recorded, error) {
	out, err := d.st.Release(ctx, id, owner)
	return Recorded(out), err
}

// Fail records the failed run f of a task held by f.Owner, in one
// statement (Store.Fail): the attempt is counted and the task is pending
// again, due f.Backoff after the database's clock (RecordedRetry), or
// dead (RecordedDead) past its retry limit or with f.SkipRetry; the run
// record keeps driver.MaxHistoryError bytes of f.Error, and the run is
// counted in tl. RecordedLost when f.Owner no longer holds the task
// (nothing is changed). The kind is not needed: the row holds it. River's
// JobSetStateIfRunning (retryable or discarded), asynq's Retry and
// Archive.
func (d *Driver) Fail(ctx context.Context, f driver.Failure, tl driver.Timeline) (Recorded, error) {
	if f.Outcome != driver.OutcomeFailed && f.Outcome != driver.OutcomeTimedOut {
		return "", invalid("fail "+f.ID, "outcome %q: want %q or %q", f.Outcome, driver.OutcomeFailed, driver.OutcomeTimedOut)
	}
	out, err := d.st.Fail(ctx, f.ID, f.Owner, Failure{Error: f.Error, Backoff: f.Backoff, SkipRetry: f.SkipRetry,
		TimedOut: f.Outcome == driver.OutcomeTimedOut, Timeline: tl})
	return Recorded(out), err
}

// Reap takes back the runs of expired (by partition index) whose lease is
// still expired by the database's clock, all in one statement (so every
// partition's share is taken back, or none on an error): each run is
// recorded as lost and counted in tl, and its task is pending again, due
// now, or dead when it lost more than maxLost runs. A task finished,
// renewed or held by another step meanwhile is left as it is, and an ID
// listed under a partition that is not its own is left out. It returns
// the runs it took back. River's rescuer, asynq's recoverer.
func (d *Driver) Reap(ctx context.Context, expired map[int][]string, maxLost int, tl driver.Timeline) ([]driver.LostRun, error) {
	if maxLost < 0 {
		return nil, invalid("reap", "max lost runs %d < 0", maxLost)
	}
	ids, parts := listedIDs(expired)
	if len(ids) == 0 {
		return nil, nil
	}
	return d.st.reap(ctx, reapListed, ids, parts, maxLost, tl)
}
