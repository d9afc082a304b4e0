package drivertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schedIDs are the IDs of tasks, in order.
func schedIDs(tasks []driver.PendingTask) []string {
	out := make([]string, len(tasks))
	for i, p := range tasks {
		out[i] = p.ID
	}
	return out
}

func schedLoadDue(t *testing.T, h Harness) {
	ctx := context.Background()

	t.Run("a task is loaded once the time asked reaches its due time", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		schedStore(t, d, schedTask("a", "k", due), driver.Created)
		assert.NotContains(t, schedPending(t, d, "k", due.Add(-time.Microsecond)), "a")
		assert.Contains(t, schedPending(t, d, "k", due), "a")
	})

	t.Run("only the kinds and partitions asked are loaded", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		inPart := make(map[int][]string)
		for i := range 40 {
			id := fmt.Sprintf("t%d", i)
			schedStore(t, d, schedTask(id, "a", due), driver.Created)
			schedStore(t, d, schedTask("b-"+id, "b", due), driver.Created)
			p := driver.PartitionOf(id, d.Partitions())
			inPart[p] = append(inPart[p], id)
		}
		for part, want := range inPart {
			mask := make([]bool, d.Partitions())
			mask[part] = true
			tasks, full, err := d.LoadDue(ctx, map[string][]bool{"a": mask}, due, false, 1000)
			require.NoError(t, err)
			assert.False(t, full)
			assert.ElementsMatch(t, want, schedIDs(tasks), "partition %d", part)
			for _, p := range tasks {
				assert.Equal(t, "a", p.Kind)
			}
		}
		tasks, _, err := d.LoadDue(ctx, map[string][]bool{"a": make([]bool, d.Partitions())}, due, false, 1000)
		require.NoError(t, err)
		assert.Empty(t, tasks, "no partition asked")
		tasks, full, err := d.LoadDue(ctx, nil, due, false, 1000)
		require.NoError(t, err)
		assert.Empty(t, tasks, "no kind asked")
		assert.False(t, full)
	})

	t.Run("the limit is shared among kinds and partitions, earliest or newest first, and says full", func(t *testing.T) {
		d := h.Open(t, 1)
		base := schedDue()
		var a, b []string
		for i := range 10 {
			id := fmt.Sprintf("a%d", i)
			schedStore(t, d, schedTask(id, "a", base.Add(time.Duration(i)*time.Second)), driver.Created)
			a = append(a, id)
			id = fmt.Sprintf("b%d", i)
			schedStore(t, d, schedTask(id, "b", base.Add(time.Duration(i)*time.Second)), driver.Created)
			b = append(b, id)
		}
		until := base.Add(time.Minute)
		one := map[string][]bool{"a": schedAllParts(1)}
		tasks, full, err := d.LoadDue(ctx, one, until, false, 4)
		require.NoError(t, err)
		assert.True(t, full)
		assert.Equal(t, a[:4], schedIDs(tasks), "the earliest first")
		tasks, full, err = d.LoadDue(ctx, one, until, true, 4)
		require.NoError(t, err)
		assert.True(t, full)
		assert.Equal(t, []string{"a9", "a8", "a7", "a6"}, schedIDs(tasks), "the newest first")
		tasks, full, err = d.LoadDue(ctx, one, until, false, 10)
		require.NoError(t, err)
		assert.True(t, full, "as many as the share")
		assert.Len(t, tasks, 10)
		tasks, full, err = d.LoadDue(ctx, one, until, false, 11)
		require.NoError(t, err)
		assert.False(t, full)
		assert.Len(t, tasks, 10)

		both := map[string][]bool{"a": schedAllParts(1), "b": schedAllParts(1)}
		tasks, full, err = d.LoadDue(ctx, both, until, false, 6)
		require.NoError(t, err)
		assert.True(t, full)
		assert.ElementsMatch(t, append(a[:3:3], b[:3]...), schedIDs(tasks), "three of each kind")
		tasks, _, err = d.LoadDue(ctx, both, until, false, 1)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"a0", "b0"}, schedIDs(tasks), "at least one of each kind")
	})

	t.Run("a canceled task is not loaded", func(t *testing.T) {
		d := h.Open(t, 2)
		due := schedDue()
		schedStore(t, d, schedTask("a", "k", due), driver.Created)
		schedStore(t, d, schedTask("b", "k", due), driver.Created)
		_, _, err := d.Cancel(ctx, "a", "k", time.Hour, driver.KeepDone{Age: time.Hour, Max: 10})
		require.NoError(t, err)
		got := schedPending(t, d, "k", due)
		assert.NotContains(t, got, "a")
		assert.Contains(t, got, "b")
	})
}
