package drivertest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runScheduling checks the driver's Scheduling methods: storing a task
// (idempotent under a fixed ID, a conflict for another task under it),
// storing many, canceling, loading what falls due, and the done records'
// retention.
func runScheduling(t *testing.T, h Harness) {
	t.Run("Schedule", func(t *testing.T) { schedSchedule(t, h) })
	t.Run("ScheduleMany", func(t *testing.T) { schedScheduleMany(t, h) })
	t.Run("Cancel", func(t *testing.T) { schedCancel(t, h) })
	t.Run("LoadDue", func(t *testing.T) { schedLoadDue(t, h) })
	t.Run("Retention", func(t *testing.T) { schedRetention(t, h) })
}

// schedDue is a due time an hour away, at the microsecond the drivers keep.
func schedDue() time.Time { return time.UnixMicro(time.Now().Add(time.Hour).UnixMicro()) }

// schedTask is a task of kind under id, due at due, with the caller's ID.
func schedTask(id, kind string, due time.Time) driver.NewTask {
	return driver.NewTask{ID: id, Kind: kind, Payload: []byte("payload of " + id), Due: due, MaxRetries: 3, FixedID: true}
}

// schedAllParts is the mask of all n partitions, for LoadDue.
func schedAllParts(n int) []bool {
	m := make([]bool, n)
	for i := range m {
		m[i] = true
	}
	return m
}

// schedPending is what LoadDue finds of kind, across every partition, pending
// until until, by ID.
func schedPending(t *testing.T, d driver.Driver, kind string, until time.Time) map[string]driver.PendingTask {
	t.Helper()
	tasks, _, err := d.LoadDue(context.Background(), map[string][]bool{kind: schedAllParts(d.Partitions())}, until, false, 100000)
	require.NoError(t, err)
	byID := make(map[string]driver.PendingTask, len(tasks))
	for _, p := range tasks {
		byID[p.ID] = p
	}
	return byID
}

// schedStore stores t and requires the answer want.
func schedStore(t *testing.T, d driver.Driver, nt driver.NewTask, want driver.Stored) {
	t.Helper()
	got, err := d.Schedule(context.Background(), nt)
	require.NoError(t, err)
	require.Equal(t, want, got, "storing %s", nt.ID)
}

func schedSchedule(t *testing.T, h Harness) {
	ctx := context.Background()

	t.Run("a stored task is pending at its due time, to the microsecond", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		schedStore(t, d, schedTask("a", "k", due), driver.Created)
		got := schedPending(t, d, "k", due)
		require.Contains(t, got, "a")
		assert.Equal(t, "k", got["a"].Kind)
		assert.True(t, due.Equal(got["a"].Due), "due %v, loaded %v", due, got["a"].Due)
	})

	t.Run("the same task under its fixed ID again exists and is left as it is", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		nt := schedTask("a", "k", due)
		nt.Metadata = "first"
		schedStore(t, d, nt, driver.Created)
		nt.Metadata, nt.MaxRetries = "second: not part of the identity", 9
		schedStore(t, d, nt, driver.Exists)
		assert.Len(t, schedPending(t, d, "k", due), 1)
	})

	t.Run("another task under a fixed ID taken is ErrIDConflict", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		schedStore(t, d, schedTask("a", "k", due), driver.Created)
		for name, other := range map[string]driver.NewTask{
			"payload": {ID: "a", Kind: "k", Payload: []byte("another"), Due: due, FixedID: true},
			"due":     {ID: "a", Kind: "k", Payload: []byte("payload of a"), Due: due.Add(time.Microsecond), FixedID: true},
			"kind":    {ID: "a", Kind: "other", Payload: []byte("payload of a"), Due: due, FixedID: true},
		} {
			_, err := d.Schedule(ctx, other)
			assert.ErrorIs(t, err, driver.ErrIDConflict, "another %s", name)
		}
		got := schedPending(t, d, "k", due)
		require.Contains(t, got, "a")
		assert.True(t, due.Equal(got["a"].Due), "the first task is left as it was")
		assert.Empty(t, schedPending(t, d, "other", due))
	})

	t.Run("tasks of random IDs are each stored", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		for i := range 20 {
			nt := schedTask(fmt.Sprintf("random-%d", i), "k", due)
			nt.FixedID = false
			schedStore(t, d, nt, driver.Created)
		}
		assert.Len(t, schedPending(t, d, "k", due), 20)
	})

	t.Run("a canceled periodic occurrence is done and not stored again", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		occ := driver.NewTask{ID: driver.OccurrenceID("nightly", due), Kind: "@nightly", Due: due, FixedID: true}
		schedStore(t, d, occ, driver.Created)
		removed, _, err := d.Cancel(ctx, occ.ID, occ.Kind, time.Hour, driver.KeepDone{})
		require.NoError(t, err)
		require.True(t, removed)
		schedStore(t, d, occ, driver.AlreadyDone)
		assert.Empty(t, schedPending(t, d, "@nightly", due), "the occurrence is not pending again")
		other := occ
		other.Payload = []byte("another")
		_, err = d.Schedule(ctx, other)
		assert.ErrorIs(t, err, driver.ErrIDConflict, "another task under the occurrence's ID")
	})

	t.Run("two nodes storing one task under its fixed ID at once store it once", func(t *testing.T) {
		d := h.Open(t, 4)
		other := h.Same(t, d)
		due := schedDue()
		const tries = 16
		answers := make([]driver.Stored, tries)
		errs := make([]error, tries)
		var wg sync.WaitGroup
		for i := range tries {
			node := d
			if i%2 == 1 {
				node = other
			}
			wg.Go(func() { answers[i], errs[i] = node.Schedule(ctx, schedTask("once", "k", due)) })
		}
		wg.Wait()
		created := 0
		for i := range tries {
			require.NoError(t, errs[i])
			if answers[i] == driver.Created {
				created++
			} else {
				assert.Equal(t, driver.Exists, answers[i])
			}
		}
		assert.Equal(t, 1, created, "exactly one store creates the task")
		assert.Len(t, schedPending(t, d, "k", due), 1)
	})
}

func schedScheduleMany(t *testing.T, h Harness) {
	ctx := context.Background()

	t.Run("every task is stored and answered in order", func(t *testing.T) {
		d := h.Open(t, 8)
		due := schedDue()
		// More tasks than fit in one script of a partition, of two kinds.
		var tasks []driver.NewTask
		for i := range 700 {
			kind := "a"
			if i%3 == 0 {
				kind = "b"
			}
			tasks = append(tasks, schedTask(fmt.Sprintf("t%d", i), kind, due.Add(time.Duration(i)*time.Microsecond)))
		}
		res := d.ScheduleMany(ctx, tasks)
		require.Len(t, res, len(tasks))
		for i, r := range res {
			require.NoError(t, r.Err, "task %d", i)
			assert.Equal(t, driver.Created, r.Stored, "task %d", i)
		}
		loaded := schedPending(t, d, "a", due.Add(time.Hour))
		for k, v := range schedPending(t, d, "b", due.Add(time.Hour)) {
			loaded[k] = v
		}
		require.Len(t, loaded, len(tasks))
		for _, nt := range tasks {
			assert.Equal(t, nt.Kind, loaded[nt.ID].Kind, nt.ID)
			assert.True(t, nt.Due.Equal(loaded[nt.ID].Due), nt.ID)
		}
		again := d.ScheduleMany(ctx, tasks[:10])
		for i, r := range again {
			require.NoError(t, r.Err)
			assert.Equal(t, driver.Exists, r.Stored, "task %d again", i)
		}
	})

	t.Run("one ID twice is stored once, another task under it is a conflict of its own", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		conflict := schedTask("x", "k", due)
		conflict.Payload = []byte("another")
		res := d.ScheduleMany(ctx, []driver.NewTask{schedTask("x", "k", due), schedTask("y", "k", due), schedTask("x", "k", due), conflict})
		require.Len(t, res, 4)
		require.NoError(t, res[0].Err)
		assert.Equal(t, driver.Created, res[0].Stored)
		require.NoError(t, res[1].Err)
		assert.Equal(t, driver.Created, res[1].Stored)
		require.NoError(t, res[2].Err)
		assert.Equal(t, driver.Exists, res[2].Stored)
		assert.ErrorIs(t, res[3].Err, driver.ErrIDConflict)
		assert.Len(t, schedPending(t, d, "k", due), 2)
	})

	t.Run("nothing to store answers nothing", func(t *testing.T) {
		d := h.Open(t, 4)
		assert.Empty(t, d.ScheduleMany(ctx, nil))
	})
}

func schedCancel(t *testing.T, h Harness) {
	ctx := context.Background()

	t.Run("a missing task is not removed", func(t *testing.T) {
		d := h.Open(t, 4)
		removed, wasRunning, err := d.Cancel(ctx, "missing", "", time.Hour, driver.KeepDone{})
		require.NoError(t, err)
		assert.False(t, removed)
		assert.False(t, wasRunning)
	})

	t.Run("a pending task is removed whatever kind the caller names, and its ID is free again", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		for _, named := range []string{"k", "", "wrong"} {
			id := "a-" + named
			schedStore(t, d, schedTask(id, "k", due), driver.Created)
			removed, wasRunning, err := d.Cancel(ctx, id, named, time.Hour, driver.KeepDone{})
			require.NoError(t, err)
			assert.True(t, removed, "named %q", named)
			assert.False(t, wasRunning)
			assert.NotContains(t, schedPending(t, d, "k", due), id)
			removed, _, err = d.Cancel(ctx, id, "k", time.Hour, driver.KeepDone{})
			require.NoError(t, err)
			assert.False(t, removed, "canceled twice")
			schedStore(t, d, schedTask(id, "k", due), driver.Created)
		}
	})

	t.Run("two nodes canceling one task at once remove it once", func(t *testing.T) {
		d := h.Open(t, 4)
		other := h.Same(t, d)
		due := schedDue()
		for round := range 5 {
			id := fmt.Sprintf("race-%d", round)
			schedStore(t, d, schedTask(id, "k", due), driver.Created)
			var wg sync.WaitGroup
			results := make([]bool, 8)
			errs := make([]error, 8)
			for i := range results {
				node := d
				if i%2 == 1 {
					node = other
				}
				wg.Go(func() { results[i], _, errs[i] = node.Cancel(ctx, id, "k", time.Hour, driver.KeepDone{}) })
			}
			wg.Wait()
			removed := 0
			for i, r := range results {
				require.NoError(t, errs[i])
				if r {
					removed++
				}
			}
			assert.Equal(t, 1, removed, "round %d", round)
		}
		assert.Empty(t, schedPending(t, d, "k", due))
	})

	t.Run("with done records kept, a canceled task is one, and canceling it removes it", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		keep := driver.KeepDone{Age: time.Hour, Max: 100}
		schedStore(t, d, schedTask("a", "k", due), driver.Created)
		removed, _, err := d.Cancel(ctx, "a", "k", time.Hour, keep)
		require.NoError(t, err)
		require.True(t, removed)
		assert.Empty(t, schedPending(t, d, "k", due))
		assert.Equal(t, []string{"a"}, schedDoneIDs(t, d, 10))
		removed, _, err = d.Cancel(ctx, "a", "", time.Hour, keep)
		require.NoError(t, err)
		assert.True(t, removed, "the done record is removed")
		assert.Empty(t, schedDoneIDs(t, d, 10))
	})

	t.Run("a done record's fixed ID takes the same kind again, not another", func(t *testing.T) {
		d := h.Open(t, 4)
		due := schedDue()
		schedStore(t, d, schedTask("a", "k", due), driver.Created)
		_, _, err := d.Cancel(ctx, "a", "k", time.Hour, driver.KeepDone{Age: time.Hour, Max: 10})
		require.NoError(t, err)
		_, err = d.Schedule(ctx, schedTask("a", "other", due))
		assert.ErrorIs(t, err, driver.ErrIDConflict)
		schedStore(t, d, schedTask("a", "k", due.Add(time.Minute)), driver.Created)
		assert.Contains(t, schedPending(t, d, "k", due.Add(time.Minute)), "a")
		assert.Empty(t, schedDoneIDs(t, d, 10), "the done record is replaced")
	})
}

// schedDoneIDs lists every done record of d (as DoneToTrim sees the records
// finished before an hour from now), at most batch per partition.
func schedDoneIDs(t *testing.T, d driver.Driver, batch int) []string {
	t.Helper()
	victims, _, err := d.DoneToTrim(context.Background(), time.Now().Add(time.Hour), 1000, batch)
	require.NoError(t, err)
	var ids []string
	for _, list := range victims {
		ids = append(ids, list...)
	}
	return ids
}
