package drivertest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runClaims checks the driver's Claims methods: the claim and its answers
// (by the store's clock), the periodic rules of an occurrence's claim,
// the outcomes fenced by the owner's token, leases renewed, expired and
// reaped, and the samples of pending depth.
func runClaims(t *testing.T, h Harness) {
	t.Run("Claim", func(t *testing.T) { claimsClaim(t, h) })
	t.Run("ClaimOccurrence", func(t *testing.T) { claimsOccurrence(t, h) })
	t.Run("Outcomes", func(t *testing.T) { claimsOutcomes(t, h) })
	t.Run("Leases", func(t *testing.T) { claimsLeases(t, h) })
	t.Run("PendingDepths", func(t *testing.T) { claimsDepths(t, h) })
}

// claimsLease is the lease of the claims that are not meant to expire.
const claimsLease = time.Minute

// claimsPast is a due time a second ago, at the microsecond the drivers
// keep: due by any store's clock.
func claimsPast() time.Time { return time.UnixMicro(time.Now().Add(-time.Second).UnixMicro()) }

// claimsStore stores a task of kind under id, due at due, with three
// retries, and requires it created.
func claimsStore(t *testing.T, d driver.Driver, id, kind string, due time.Time) {
	t.Helper()
	got, err := d.Schedule(context.Background(), driver.NewTask{ID: id, Kind: kind, Payload: []byte("payload of " + id),
		Due: due, MaxRetries: 3, FixedID: true, Metadata: "meta of " + id})
	require.NoError(t, err)
	require.Equal(t, driver.Created, got, "storing %s", id)
}

// claimsWin claims id, pending for due, for owner and requires it won.
func claimsWin(t *testing.T, d driver.Driver, id, kind string, due time.Time, lease time.Duration, owner string) driver.Claim {
	t.Helper()
	c, err := d.Claim(context.Background(), id, kind, due, lease, owner)
	require.NoError(t, err)
	require.Equal(t, driver.ClaimWon, c.Outcome, "claiming %s", id)
	return c
}

// claimsOutcome claims id, pending for due, and returns what the claim
// found.
func claimsOutcome(t *testing.T, d driver.Driver, id, kind string, due time.Time) driver.Claim {
	t.Helper()
	c, err := d.Claim(context.Background(), id, kind, due, claimsLease, "someone")
	require.NoError(t, err)
	return c
}

func claimsClaim(t *testing.T, h Harness) {
	ctx := context.Background()

	t.Run("a due task is won with its kind, payload, due time, counts and metadata", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		c := claimsWin(t, d, "a", "k", due, claimsLease, "owner")
		assert.Equal(t, "k", c.Kind)
		assert.Equal(t, []byte("payload of a"), c.Payload)
		assert.True(t, due.Equal(c.Due), "due %v, claimed %v", due, c.Due)
		assert.Zero(t, c.Attempt)
		assert.Zero(t, c.Lost)
		assert.Equal(t, "meta of a", c.Meta)
	})

	t.Run("a task won is gone for the next claim", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsWin(t, d, "a", "k", due, claimsLease, "owner")
		assert.Equal(t, driver.ClaimGone, claimsOutcome(t, d, "a", "k", due).Outcome)
	})

	t.Run("a missing task is gone", func(t *testing.T) {
		d := h.Open(t, 4)
		assert.Equal(t, driver.ClaimGone, claimsOutcome(t, d, "nothing", "k", claimsPast()).Outcome)
	})

	t.Run("a task not yet due by the store's clock is early, with the store's time", func(t *testing.T) {
		d := h.Open(t, 4)
		due := time.UnixMicro(time.Now().Add(time.Hour).UnixMicro())
		claimsStore(t, d, "a", "k", due)
		before := time.Now()
		c := claimsOutcome(t, d, "a", "k", due)
		require.Equal(t, driver.ClaimEarly, c.Outcome)
		assert.Equal(t, "k", c.Kind)
		assert.True(t, due.Equal(c.Due), "due %v, answered %v", due, c.Due)
		assert.WithinDuration(t, before, c.StoreNow, 10*time.Second, "the store's clock")
		assert.Equal(t, driver.ClaimEarly, claimsOutcome(t, d, "a", "k", due).Outcome, "still pending")
	})

	t.Run("a task pending for a later time than asked is later, with that time", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		c := claimsOutcome(t, d, "a", "k", due.Add(-time.Millisecond))
		require.Equal(t, driver.ClaimLater, c.Outcome)
		assert.Equal(t, "k", c.Kind)
		assert.True(t, due.Equal(c.Due), "due %v, answered %v", due, c.Due)
	})

	t.Run("a claim naming another kind or none finds the stored kind", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsStore(t, d, "b", "k", due)
		assert.Equal(t, "k", claimsWin(t, d, "a", "", due, claimsLease, "owner").Kind)
		assert.Equal(t, "k", claimsWin(t, d, "b", "other", due, claimsLease, "owner").Kind)
	})

	t.Run("of owners on two drivers racing for a task exactly one wins", func(t *testing.T) {
		d := h.Open(t, 4)
		d2 := h.Same(t, d)
		due := claimsPast()
		for i := range 10 {
			claimsStore(t, d, fmt.Sprintf("race-%d", i), "k", due)
		}
		for i := range 10 {
			id := fmt.Sprintf("race-%d", i)
			var won atomic.Int32
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					on := d
					if g%2 == 1 {
						on = d2
					}
					c, err := on.Claim(ctx, id, "k", due, claimsLease, fmt.Sprintf("owner-%d", g))
					if assert.NoError(t, err) && c.Outcome == driver.ClaimWon {
						won.Add(1)
					}
				}()
			}
			wg.Wait()
			assert.EqualValues(t, 1, won.Load(), "winners of %s", id)
		}
	})
}

// claimsOccurrenceOf is the occurrence of periodic task name due at due,
// stored, and its kind.
func claimsOccurrenceOf(t *testing.T, d driver.Driver, name string, due time.Time) (id, kind string) {
	t.Helper()
	id, kind = driver.OccurrenceID(name, due), "@"+name
	claimsStore(t, d, id, kind, due)
	return id, kind
}

func claimsOccurrence(t *testing.T, h Harness) {
	ctx := context.Background()
	// Occurrences a minute apart, the latest a second ago: each but the
	// latest is missed (its next one is due too).
	base := time.Now().Add(-time.Second).Truncate(time.Second).Add(-2 * time.Minute)
	occurrence := func(policy string, due, next time.Time) driver.Occurrence {
		return driver.Occurrence{Misfire: policy, Due: due, Next: next, Threshold: time.Second, Retention: time.Hour}
	}

	t.Run("coalesce skips a missed occurrence, leaves its done marker, and runs the latest", func(t *testing.T) {
		d := h.Open(t, 4)
		first, kind := claimsOccurrenceOf(t, d, "p", base)
		latest, _ := claimsOccurrenceOf(t, d, "p", base.Add(time.Minute))
		c, err := d.ClaimOccurrence(ctx, first, kind, base, claimsLease, "owner", occurrence("coalesce", base, base.Add(time.Minute)))
		require.NoError(t, err)
		assert.Equal(t, driver.ClaimSkipped, c.Outcome)
		again, err := d.Schedule(ctx, driver.NewTask{ID: first, Kind: kind, Payload: []byte("payload of " + first), Due: base, FixedID: true})
		require.NoError(t, err)
		assert.Equal(t, driver.AlreadyDone, again, "a skipped occurrence is not stored again")
		c, err = d.ClaimOccurrence(ctx, latest, kind, base.Add(time.Minute), claimsLease, "owner", occurrence("coalesce", base.Add(time.Minute), base.Add(time.Hour)))
		require.NoError(t, err)
		assert.Equal(t, driver.ClaimWon, c.Outcome)
	})

	t.Run("skip skips an occurrence later than its threshold", func(t *testing.T) {
		d := h.Open(t, 4)
		id, kind := claimsOccurrenceOf(t, d, "p", base)
		c, err := d.ClaimOccurrence(ctx, id, kind, base, claimsLease, "owner", occurrence("skip", base, time.Time{}))
		require.NoError(t, err)
		assert.Equal(t, driver.ClaimSkipped, c.Outcome)
	})

	t.Run("each runs a missed occurrence, and the later waits for the earlier", func(t *testing.T) {
		d := h.Open(t, 4)
		first, kind := claimsOccurrenceOf(t, d, "p", base)
		second, _ := claimsOccurrenceOf(t, d, "p", base.Add(time.Minute))
		c, err := d.ClaimOccurrence(ctx, second, kind, base.Add(time.Minute), claimsLease, "owner", occurrence("each", base.Add(time.Minute), time.Time{}))
		require.NoError(t, err)
		require.Equal(t, driver.ClaimBlocked, c.Outcome, "an earlier occurrence is pending")
		assert.True(t, c.BlockedUntil.IsZero(), "it waits for an occurrence, not a lease")
		c, err = d.ClaimOccurrence(ctx, first, kind, base, claimsLease, "owner", occurrence("each", base, base.Add(time.Minute)))
		require.NoError(t, err)
		assert.Equal(t, driver.ClaimWon, c.Outcome, "missed, but run")
	})

	t.Run("without overlap an occurrence waits for the lease of the one running", func(t *testing.T) {
		d := h.Open(t, 4)
		first, kind := claimsOccurrenceOf(t, d, "p", base)
		second, _ := claimsOccurrenceOf(t, d, "p", base.Add(time.Minute))
		before := time.Now()
		c, err := d.ClaimOccurrence(ctx, first, kind, base, claimsLease, "owner", occurrence("each", base, base.Add(time.Minute)))
		require.NoError(t, err)
		require.Equal(t, driver.ClaimWon, c.Outcome)
		c, err = d.ClaimOccurrence(ctx, second, kind, base.Add(time.Minute), claimsLease, "owner", occurrence("each", base.Add(time.Minute), time.Time{}))
		require.NoError(t, err)
		require.Equal(t, driver.ClaimBlocked, c.Outcome)
		assert.WithinDuration(t, before.Add(claimsLease), c.BlockedUntil, 10*time.Second, "the running occurrence's lease expiry")
		assert.WithinDuration(t, before, c.StoreNow, 10*time.Second, "the store's clock")
	})

	t.Run("with overlap an occurrence runs beside the one running", func(t *testing.T) {
		d := h.Open(t, 4)
		first, kind := claimsOccurrenceOf(t, d, "p", base)
		second, _ := claimsOccurrenceOf(t, d, "p", base.Add(time.Minute))
		o := occurrence("each", base, base.Add(time.Minute))
		o.Overlap = true
		c, err := d.ClaimOccurrence(ctx, first, kind, base, claimsLease, "owner", o)
		require.NoError(t, err)
		require.Equal(t, driver.ClaimWon, c.Outcome)
		o.Due, o.Next = base.Add(time.Minute), time.Time{}
		c, err = d.ClaimOccurrence(ctx, second, kind, base.Add(time.Minute), claimsLease, "owner", o)
		require.NoError(t, err)
		assert.Equal(t, driver.ClaimWon, c.Outcome)
	})

	t.Run("an occurrence not yet due by the store's clock is early", func(t *testing.T) {
		d := h.Open(t, 4)
		due := time.Now().Add(time.Hour).Truncate(time.Second)
		id, kind := claimsOccurrenceOf(t, d, "p", due)
		c, err := d.ClaimOccurrence(ctx, id, kind, due, claimsLease, "owner", occurrence("skip", due, time.Time{}))
		require.NoError(t, err)
		assert.Equal(t, driver.ClaimEarly, c.Outcome)
	})
}
