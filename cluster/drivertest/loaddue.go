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

// ids are the IDs of tasks, in order.
func ids(tasks []driver.PendingTask) []string {
	out := make([]string, len(tasks))
	for i, p := range tasks {
		out[i] = p.ID
	}
	return out
}

func runLoadDue(t *testing.T, h Harness) {
	ctx := context.Background()

	t.Run("a task is loaded once the time asked reaches its due time", func(t *testing.T) {
		d := h.Open(t, 4)
		due := hour()
		scheduled(t, d, task("a", "k", due), driver.Created)
		assert.NotContains(t, pending(t, d, "k", due.Add(-time.Microsecond)), "a")
		assert.Contains(t, pending(t, d, "k", due), "a")
	})

	t.Run("only the kinds and partitions asked are loaded", func(t *testing.T) {
		d := h.Open(t, 4)
		due := hour()
		inPart := make(map[int][]string)
		for i := range 40 {
			id := fmt.Sprintf("t%d", i)
			scheduled(t, d, task(id, "a", due), driver.Created)
			scheduled(t, d, task("b-"+id, "b", due), driver.Created)
			p := driver.PartitionOf(id, d.Partitions())
			inPart[p] = append(inPart[p], id)
		}
		for part, want := range inPart {
			mask := make([]bool, d.Partitions())
			mask[part] = true
			tasks, full, err := d.LoadDue(ctx, map[string][]bool{"a": mask}, due, false, 1000)
			require.NoError(t, err)
			assert.False(t, full)
			assert.ElementsMatch(t, want, ids(tasks), "partition %d", part)
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
		base := hour()
		var a, b []string
		for i := range 10 {
			id := fmt.Sprintf("a%d", i)
			scheduled(t, d, task(id, "a", base.Add(time.Duration(i)*time.Second)), driver.Created)
			a = append(a, id)
			id = fmt.Sprintf("b%d", i)
			scheduled(t, d, task(id, "b", base.Add(time.Duration(i)*time.Second)), driver.Created)
			b = append(b, id)
		}
		until := base.Add(time.Minute)
		one := map[string][]bool{"a": every(1)}
		tasks, full, err := d.LoadDue(ctx, one, until, false, 4)
		require.NoError(t, err)
		assert.True(t, full)
		assert.Equal(t, a[:4], ids(tasks), "the earliest first")
		tasks, full, err = d.LoadDue(ctx, one, until, true, 4)
		require.NoError(t, err)
		assert.True(t, full)
		assert.Equal(t, []string{"a9", "a8", "a7", "a6"}, ids(tasks), "the newest first")
		tasks, full, err = d.LoadDue(ctx, one, until, false, 10)
		require.NoError(t, err)
		assert.True(t, full, "as many as the share")
		assert.Len(t, tasks, 10)
		tasks, full, err = d.LoadDue(ctx, one, until, false, 11)
		require.NoError(t, err)
		assert.False(t, full)
		assert.Len(t, tasks, 10)

		both := map[string][]bool{"a": every(1), "b": every(1)}
		tasks, full, err = d.LoadDue(ctx, both, until, false, 6)
		require.NoError(t, err)
		assert.True(t, full)
		assert.ElementsMatch(t, append(a[:3:3], b[:3]...), ids(tasks), "three of each kind")
		tasks, _, err = d.LoadDue(ctx, both, until, false, 1)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"a0", "b0"}, ids(tasks), "at least one of each kind")
	})

	t.Run("a canceled task is not loaded", func(t *testing.T) {
		d := h.Open(t, 2)
		due := hour()
		scheduled(t, d, task("a", "k", due), driver.Created)
		scheduled(t, d, task("b", "k", due), driver.Created)
		_, _, err := d.Cancel(ctx, "a", "k", time.Hour, driver.KeepDone{Age: time.Hour, Max: 10})
		require.NoError(t, err)
		got := pending(t, d, "k", due)
		assert.NotContains(t, got, "a")
		assert.Contains(t, got, "b")
	})
}
