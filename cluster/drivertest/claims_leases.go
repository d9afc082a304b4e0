package drivertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claimsShortLease is the lease of the claims meant to expire.
const claimsShortLease = 50 * time.Millisecond

// claimsAllPartitions lists the partition indexes of d.
func claimsAllPartitions(d driver.Driver) []int {
	parts := make([]int, d.Partitions())
	for i := range parts {
		parts[i] = i
	}
	return parts
}

// claimsExpiredIDs waits until the leases of ids expired by the store's
// clock, as Expired lists them, and returns them by partition.
func claimsExpiredIDs(t *testing.T, d driver.Driver, ids ...string) map[int][]string {
	t.Helper()
	var expired map[int][]string
	require.Eventually(t, func() bool {
		got, _, err := d.Expired(context.Background(), claimsAllPartitions(d), 100)
		require.NoError(t, err)
		var listed []string
		for _, l := range got {
			listed = append(listed, l...)
		}
		expired = got
		return len(listed) == len(ids)
	}, 10*time.Second, 10*time.Millisecond, "the leases of %v expire", ids)
	for _, id := range ids {
		assert.Contains(t, expired[driver.PartitionOf(id, d.Partitions())], id, "listed in its partition")
	}
	return expired
}

func claimsLeases(t *testing.T, h Harness) {
	ctx := context.Background()
	none := driver.Timeline{}

	t.Run("a renewal keeps the leases its owner holds and names the others lost", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		var held []driver.Held
		for i := range 6 {
			id := fmt.Sprintf("t%d", i)
			claimsStore(t, d, id, "k", due)
			claimsWin(t, d, id, "k", due, claimsLease, "owner")
			held = append(held, driver.Held{ID: id, Kind: "k", Owner: "owner"})
		}
		held[1].Owner = "another"
		got, err := d.Complete(ctx, "t2", "k", "owner", time.Hour, driver.KeepDone{}, none)
		require.NoError(t, err)
		require.Equal(t, driver.RecordedDone, got)
		held = append(held, driver.Held{ID: "missing", Kind: "k", Owner: "owner"})
		lost, err := d.Extend(ctx, claimsLease, held)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"t1", "t2", "missing"}, lost)
		lost, err = d.Extend(ctx, claimsLease, nil)
		require.NoError(t, err)
		assert.Empty(t, lost, "nothing held")
	})

	t.Run("a lease expires by the store's clock, and a renewal before the reap keeps it", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsStore(t, d, "b", "k", due)
		claimsWin(t, d, "a", "k", due, claimsShortLease, "owner")
		claimsWin(t, d, "b", "k", due, claimsLease, "owner")
		expired := claimsExpiredIDs(t, d, "a")
		lost, err := d.Extend(ctx, claimsLease, []driver.Held{{ID: "a", Kind: "k", Owner: "owner"}})
		require.NoError(t, err)
		assert.Empty(t, lost, "renewed in time")
		reaped, err := d.Reap(ctx, expired, 5, none)
		require.NoError(t, err)
		assert.Empty(t, reaped, "a lease renewed is not reaped")
		listed, full, err := d.Expired(ctx, claimsAllPartitions(d), 100)
		require.NoError(t, err)
		assert.Empty(t, listed)
		assert.False(t, full)
	})

	t.Run("Expired lists at most limit per partition and says it is full", func(t *testing.T) {
		d := h.Open(t, 1)
		due := claimsPast()
		for i := range 3 {
			id := fmt.Sprintf("t%d", i)
			claimsStore(t, d, id, "k", due)
			claimsWin(t, d, id, "k", due, claimsShortLease, "owner")
		}
		claimsExpiredIDs(t, d, "t0", "t1", "t2")
		listed, full, err := d.Expired(ctx, []int{0}, 2)
		require.NoError(t, err)
		assert.Len(t, listed[0], 2)
		assert.True(t, full)
	})

	t.Run("a reaped run is lost and its task pending again, due now", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsWin(t, d, "a", "k", due, claimsShortLease, "owner")
		expired := claimsExpiredIDs(t, d, "a")
		reaped, err := d.Reap(ctx, expired, 5, driver.Timeline{Minute: time.Now().Unix() / 60, TTL: time.Hour})
		require.NoError(t, err)
		assert.Equal(t, []driver.LostRun{{ID: "a", Kind: "k"}}, reaped)
		got, err := d.Complete(ctx, "a", "k", "owner", time.Hour, driver.KeepDone{}, none)
		require.NoError(t, err)
		assert.Equal(t, driver.RecordedLost, got, "the lost run's owner no longer holds it")
		c := claimsWin(t, d, "a", "k", time.Now().Add(time.Minute), claimsLease, "another")
		assert.Equal(t, 1, c.Lost)
		assert.Zero(t, c.Attempt, "a lost run is no failed attempt")
	})

	t.Run("a run lost past the limit makes its task dead", func(t *testing.T) {
		d := h.Open(t, 4)
		due := claimsPast()
		claimsStore(t, d, "a", "k", due)
		claimsWin(t, d, "a", "k", due, claimsShortLease, "owner")
		reaped, err := d.Reap(ctx, claimsExpiredIDs(t, d, "a"), 0, none)
		require.NoError(t, err)
		assert.Equal(t, []driver.LostRun{{ID: "a", Kind: "k", Dead: true}}, reaped)
		assert.Equal(t, driver.ClaimGone, claimsOutcome(t, d, "a", "k", time.Now().Add(time.Minute)).Outcome)
	})

	t.Run("two reapers on two drivers take a run back once", func(t *testing.T) {
		d := h.Open(t, 4)
		d2 := h.Same(t, d)
		due := claimsPast()
		var ids []string
		for i := range 8 {
			id := fmt.Sprintf("t%d", i)
			ids = append(ids, id)
			claimsStore(t, d, id, "k", due)
			claimsWin(t, d, id, "k", due, claimsShortLease, "owner")
		}
		expired := claimsExpiredIDs(t, d, ids...)
		var mu sync.Mutex // guards reaped
		var reaped []string
		var wg sync.WaitGroup
		for _, on := range []driver.Driver{d, d2, d, d2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lost, err := on.Reap(ctx, expired, 5, none)
				assert.NoError(t, err)
				mu.Lock()
				defer mu.Unlock()
				for _, l := range lost {
					reaped = append(reaped, l.ID)
				}
			}()
		}
		wg.Wait()
		slices.Sort(reaped)
		assert.Equal(t, ids, reaped, "each run reaped once")
	})

	t.Run("nothing to reap is no error", func(t *testing.T) {
		d := h.Open(t, 4)
		lost, err := d.Reap(ctx, nil, 5, none)
		require.NoError(t, err)
		assert.Empty(t, lost)
		listed, full, err := d.Expired(ctx, nil, 10)
		require.NoError(t, err)
		assert.Empty(t, listed)
		assert.False(t, full)
	})
}

func claimsDepths(t *testing.T, h Harness) {
	ctx := context.Background()

	t.Run("the pending tasks of each kind are counted with the earliest's time", func(t *testing.T) {
		d := h.Open(t, 4)
		earliest := claimsPast().Add(-time.Hour)
		claimsStore(t, d, "a", "k", earliest)
		claimsStore(t, d, "b", "k", claimsPast())
		claimsStore(t, d, "c", "k", claimsPast().Add(time.Hour))
		claimsStore(t, d, "d", "other", claimsPast())
		claimsStore(t, d, "e", "other", claimsPast())
		claimsWin(t, d, "e", "other", time.Now(), claimsLease, "owner")
		depths, err := d.PendingDepths(ctx, claimsAllPartitions(d))
		require.NoError(t, err)
		pending := map[string]int{}
		first := map[string]time.Time{}
		for _, p := range depths {
			assert.GreaterOrEqual(t, p.Partition, 0)
			assert.Less(t, p.Partition, d.Partitions())
			pending[p.Kind] += p.Pending
			if !p.Earliest.IsZero() && (first[p.Kind].IsZero() || p.Earliest.Before(first[p.Kind])) {
				first[p.Kind] = p.Earliest
			}
		}
		assert.Equal(t, map[string]int{"k": 3, "other": 1}, pending, "a running task is not pending")
		assert.True(t, earliest.Equal(first["k"]), "earliest %v, read %v", earliest, first["k"])

		only, err := d.PendingDepths(ctx, []int{driver.PartitionOf("a", d.Partitions())})
		require.NoError(t, err)
		for _, p := range only {
			assert.Equal(t, driver.PartitionOf("a", d.Partitions()), p.Partition, "only the partition asked")
		}
		none, err := d.PendingDepths(ctx, nil)
		require.NoError(t, err)
		assert.Empty(t, none)
	})

	t.Run("samples are recorded in the timeline's minute, and nothing when it is off", func(t *testing.T) {
		d := h.Open(t, 4)
		claimsStore(t, d, "a", "k", claimsPast())
		depths, err := d.PendingDepths(ctx, claimsAllPartitions(d))
		require.NoError(t, err)
		require.NotEmpty(t, depths)
		for i := range depths {
			depths[i].Overdue = time.Second
		}
		require.NoError(t, d.RecordPendingDepths(ctx, depths, driver.Timeline{Minute: time.Now().Unix() / 60, TTL: time.Hour}))
		require.NoError(t, d.RecordPendingDepths(ctx, depths, driver.Timeline{}))
		require.NoError(t, d.RecordPendingDepths(ctx, nil, driver.Timeline{Minute: 1, TTL: time.Hour}))
	})
}
