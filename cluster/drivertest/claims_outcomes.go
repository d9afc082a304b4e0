package drivertest

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claimsFailure is a failed run of id held by owner, retried at once.
func claimsFailure(id, owner string) driver.Failure {
	return driver.Failure{ID: id, Kind: "k", Owner: owner, Error: "it failed", Outcome: driver.OutcomeFailed}
}

func claimsOutcomes(t *testing.T, h Harness) {
	ctx := context.Background()
	none := driver.Timeline{}

	t.Run("a completed task is gone, and its fixed ID is done for the retention", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsWin(t, d, "a", "k", due, claimsLease, "owner")
		got, err := d.Complete(ctx, "a", "k", "owner", time.Hour, driver.KeepDone{}, none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedDone, got)
		assert.Equal(t, driver.ClaimGone, claimsOutcome(t, d, "a", "k", due).Outcome)
		again, err := d.Schedule(ctx, driver.NewTask{ID: "a", Kind: "k", Payload: []byte("payload of a"), Due: due, FixedID: true})
		require.NoError(t, err)
		assert.Equal(t, driver.AlreadyDone, again)
	})

	t.Run("a completion naming another kind or none finds the stored kind", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsWin(t, d, "a", "k", due, claimsLease, "owner")
		got, err := d.Complete(ctx, "a", "", "owner", time.Hour, driver.KeepDone{}, none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedDone, got)
	})

	t.Run("an owner that no longer holds the task changes nothing", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsWin(t, d, "a", "k", due, claimsLease, "owner")
		got, err := d.Complete(ctx, "a", "k", "another", time.Hour, driver.KeepDone{}, none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedLost, got, "complete")
		got, err = d.Fail(ctx, claimsFailure("a", "another"), none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedLost, got, "fail")
		got, err = d.Release(ctx, "a", "k", "another")
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedLost, got, "release")
		got, err = d.Complete(ctx, "a", "k", "owner", time.Hour, driver.KeepDone{}, none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedDone, got, "the owner still holds it")
	})

	t.Run("a missing task is lost to every outcome", func(t *testing.T) {
		d := h.Open(t, 4)
		got, err := d.Complete(ctx, "nothing", "k", "owner", time.Hour, driver.KeepDone{}, none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedLost, got)
		got, err = d.Release(ctx, "nothing", "k", "owner")
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedLost, got)
	})

	t.Run("a failed run is retried after its backoff by the store's clock, its attempt counted", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsWin(t, d, "a", "k", due, claimsLease, "owner")
		f := claimsFailure("a", "owner")
		f.Backoff = time.Hour
		before := time.Now()
		got, err := d.Fail(ctx, f, none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedRetry, got)
		c := claimsOutcome(t, d, "a", "k", time.Now().Add(2*time.Hour))
		require.Equal(t, driver.ClaimEarly, c.Outcome, "pending for its retry, not yet due")
		assert.WithinDuration(t, before.Add(time.Hour), c.Due, 10*time.Second, "the retry's time")
	})

	t.Run("a task failed past its retries is dead, and SkipRetry kills it at once", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		for attempt := range 3 {
			c := claimsWin(t, d, "a", "k", due, claimsLease, "owner")
			assert.Equal(t, attempt, c.Attempt, "failed runs before")
			got, err := d.Fail(ctx, claimsFailure("a", "owner"), none)
			require.NoError(t, err)
			require.Equal(t, driver.RecordedRetry, got)
			due = claimsOutcome(t, d, "a", "k", time.Time{}).Due // pending for its retry
		}
		claimsWin(t, d, "a", "k", due, claimsLease, "owner")
		got, err := d.Fail(ctx, claimsFailure("a", "owner"), none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedDead, got, "past three retries")
		assert.Equal(t, driver.ClaimGone, claimsOutcome(t, d, "a", "k", time.Now()).Outcome)

		claimsStore(t, d, "b", "k", claimsPast())
		claimsWin(t, d, "b", "k", time.Now(), claimsLease, "owner")
		f := claimsFailure("b", "owner")
		f.SkipRetry, f.Outcome = true, driver.OutcomeTimedOut
		got, err = d.Fail(ctx, f, none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedDead, got, "skip retry")
	})

	t.Run("a released task is pending again for its time, no attempt counted", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsWin(t, d, "a", "k", due, claimsLease, "owner")
		got, err := d.Release(ctx, "a", "k", "owner")
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedReleased, got)
		c := claimsWin(t, d, "a", "k", due, claimsLease, "another")
		assert.Zero(t, c.Attempt)
		assert.True(t, due.Equal(c.Due))
	})

	t.Run("the ends of runs are counted in the timeline's minute", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		tl := driver.Timeline{Minute: due.Unix() / 60, TTL: time.Hour}
		claimsStore(t, d, "a", "k", due)
		claimsStore(t, d, "b", "k", due)
		claimsWin(t, d, "a", "k", due, claimsLease, "owner")
		claimsWin(t, d, "b", "k", due, claimsLease, "owner")
		got, err := d.Complete(ctx, "a", "k", "owner", time.Hour, driver.KeepDone{}, tl)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedDone, got)
		got, err = d.Fail(ctx, claimsFailure("b", "owner"), tl)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedRetry, got)
	})
}
