package drivertest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schedDoneRecords stores n tasks of kind and cancels them one after another
// with done records kept, so that each is a done record finished after the
// one before by the store's clock; it returns their IDs, oldest first.
func schedDoneRecords(t *testing.T, d driver.Driver, kind string, n int) []string {
	t.Helper()
	keep := driver.KeepDone{Age: time.Hour, Max: 1000}
	var out []string
	for i := range n {
		id := fmt.Sprintf("%s-done-%d", kind, i)
		schedStore(t, d, schedTask(id, kind, schedDue()), driver.Created)
		removed, _, err := d.Cancel(context.Background(), id, kind, time.Hour, keep)
		require.NoError(t, err)
		require.True(t, removed)
		out = append(out, id)
	}
	return out
}

// schedVictims is the IDs of victims, sorted.
func schedVictims(victims map[int][]string) []string {
	var out []string
	for _, list := range victims {
		out = append(out, list...)
	}
	slices.Sort(out)
	return out
}

// schedSorted is ids sorted.
func schedSorted(ids []string) []string { return slices.Sorted(slices.Values(ids)) }

func schedRetention(t *testing.T, h Harness) {
	ctx := context.Background()
	past := func() time.Time { return time.Now().Add(-time.Hour) }

	t.Run("the age is measured from the finish, by the store's clock", func(t *testing.T) {
		d := h.Open(t, 4)
		records := schedDoneRecords(t, d, "k", 3)
		victims, full, err := d.DoneToTrim(ctx, time.Now().Add(-time.Minute), 100, 10)
		require.NoError(t, err)
		assert.Empty(t, schedVictims(victims), "none finished a minute ago")
		assert.False(t, full)
		victims, full, err = d.DoneToTrim(ctx, time.Now().Add(time.Minute), 100, 10)
		require.NoError(t, err)
		assert.Equal(t, schedSorted(records), schedVictims(victims), "all finished before a minute from now")
		assert.False(t, full)
		for part, list := range victims {
			for _, id := range list {
				assert.Equal(t, driver.PartitionOf(id, d.Partitions()), part, "%s listed in its partition", id)
			}
		}
	})

	t.Run("the oldest past the count are listed, across partitions", func(t *testing.T) {
		d := h.Open(t, 4)
		records := schedDoneRecords(t, d, "k", 7)
		victims, full, err := d.DoneToTrim(ctx, past(), 3, 100)
		require.NoError(t, err)
		assert.Equal(t, schedSorted(records[:4]), schedVictims(victims), "the four oldest of seven, three kept")
		assert.False(t, full)
		victims, full, err = d.DoneToTrim(ctx, past(), 7, 100)
		require.NoError(t, err)
		assert.Empty(t, schedVictims(victims), "none past the count")
		assert.False(t, full)
		victims, full, err = d.DoneToTrim(ctx, past(), 2, 3)
		require.NoError(t, err)
		assert.Equal(t, schedSorted(records[:3]), schedVictims(victims), "a batch of the oldest")
		assert.True(t, full, "more past the count than the batch")
	})

	t.Run("aged records are listed a batch per partition", func(t *testing.T) {
		d := h.Open(t, 1)
		records := schedDoneRecords(t, d, "k", 5)
		victims, full, err := d.DoneToTrim(ctx, time.Now().Add(time.Minute), 100, 2)
		require.NoError(t, err)
		assert.Equal(t, records[:2], victims[0], "the oldest first")
		assert.True(t, full)
	})

	t.Run("removing the listed records leaves the rest", func(t *testing.T) {
		d := h.Open(t, 4)
		records := schedDoneRecords(t, d, "k", 6)
		victims, _, err := d.DoneToTrim(ctx, past(), 2, 100)
		require.NoError(t, err)
		removed, err := d.RemoveDone(ctx, victims)
		require.NoError(t, err)
		assert.Equal(t, 4, removed)
		assert.Equal(t, schedSorted(records[4:]), schedSorted(schedDoneIDs(t, d, 100)))
		removed, err = d.RemoveDone(ctx, victims)
		require.NoError(t, err)
		assert.Zero(t, removed, "removed already")
		removed, err = d.RemoveDone(ctx, nil)
		require.NoError(t, err)
		assert.Zero(t, removed)
	})

	t.Run("a record stored again after the listing is not removed", func(t *testing.T) {
		d := h.Open(t, 4)
		records := schedDoneRecords(t, d, "k", 2)
		victims, _, err := d.DoneToTrim(ctx, time.Now().Add(time.Minute), 100, 100)
		require.NoError(t, err)
		due := schedDue()
		schedStore(t, d, schedTask(records[0], "k", due), driver.Created)
		removed, err := d.RemoveDone(ctx, victims)
		require.NoError(t, err)
		assert.Equal(t, 1, removed)
		assert.Contains(t, schedPending(t, d, "k", due), records[0], "the task stored again is still pending")
		assert.Empty(t, schedDoneIDs(t, d, 100))
	})
}
