package drivertest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runOperations checks the driver's Operations methods.
func runOperations(t *testing.T, h Harness) {
	t.Run("an empty store reads empty", func(t *testing.T) { opsEmptyStore(t, h) })
	t.Run("actions on a missing task are ErrNotFound", func(t *testing.T) { opsMissingTask(t, h) })
	t.Run("bulk actions on an empty store change nothing", func(t *testing.T) { opsEmptyBulk(t, h) })
	t.Run("a paused kind is paused for every driver of the store until resumed", func(t *testing.T) { opsPause(t, h) })
	t.Run("pauses and resumes racing from two drivers leave the kind as the last one says", func(t *testing.T) { opsPauseRace(t, h) })
	t.Run("the timeline has one entry per minute asked", func(t *testing.T) { opsTimeline(t, h) })
	runOperationsOnTasks(t, h)
	t.Run("a state error names the state and wraps ErrWrongState", func(t *testing.T) { opsStateError(t) })
}

// opsEmptyStore: every read of a fresh keyspace finds nothing.
func opsEmptyStore(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 4)
	require.NoError(t, d.Ping(ctx))

	_, ok, err := d.Get(ctx, "nope")
	require.NoError(t, err)
	assert.False(t, ok, "Get of a task never stored")

	counts, err := d.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, driver.Counts{}, counts)
	total, kinds, err := d.CountsByKind(ctx)
	require.NoError(t, err)
	assert.Equal(t, driver.Counts{}, total)
	assert.Empty(t, kinds)

	for _, state := range driver.States {
		page, err := d.List(ctx, driver.ListQuery{State: state, Limit: 10})
		require.NoError(t, err, state)
		assert.Empty(t, page.Tasks, state)
		assert.Equal(t, driver.Position{}, page.Next, "no next page after an empty one (%s)", state)
		page, err = d.List(ctx, driver.ListQuery{State: state, Kind: "k", Limit: 1,
			After: driver.Position{At: time.UnixMicro(1), ID: "x"}})
		require.NoError(t, err, state)
		assert.Empty(t, page.Tasks, state)
	}

	paused, err := d.PausedKinds(ctx)
	require.NoError(t, err)
	assert.Empty(t, paused)
	known, err := d.KnownKind(ctx, "k")
	require.NoError(t, err)
	assert.False(t, known, "a kind nothing knows")
	known, err = d.KnownKind(ctx, "@nightly")
	require.NoError(t, err)
	assert.False(t, known, "a periodic task nobody declared")

	all := []int{0, 1, 2, 3}
	stored, err := d.StoredKinds(ctx, all)
	require.NoError(t, err)
	assert.Empty(t, stored)
	waiting, oldest, err := d.DueOfKind(ctx, all, "k", time.Now())
	require.NoError(t, err)
	assert.Zero(t, waiting)
	assert.True(t, oldest.IsZero())
}

// opsMissingTask: each action on an ID that names no task is refused with
// ErrNotFound and stores nothing.
func opsMissingTask(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 3)
	actions := map[string]func(id string) error{
		"run now":    func(id string) error { return d.RunNow(ctx, id) },
		"reschedule": func(id string) error { return d.Reschedule(ctx, id, time.Now().Add(time.Hour)) },
		"retry":      func(id string) error { return d.Retry(ctx, id) },
		"delete":     func(id string) error { return d.Delete(ctx, id) },
	}
	for name, act := range actions {
		err := act("missing-" + name)
		require.Error(t, err, name)
		assert.ErrorIs(t, err, driver.ErrNotFound, name)
		assert.NotErrorIs(t, err, driver.ErrWrongState, name)
		_, ok, err := d.Get(ctx, "missing-"+name)
		require.NoError(t, err)
		assert.False(t, ok, "%s stored nothing", name)
	}
	counts, err := d.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, driver.Counts{}, counts, "refused actions stored nothing")
}

// opsEmptyBulk: a bulk action or a count on a selection that picks
// nothing matches and changes nothing, whether it scans or names IDs.
func opsEmptyBulk(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 3)
	sels := map[string]driver.Selection{
		"dead":               {State: driver.Dead},
		"done of kind":       {State: driver.Done, Kind: "k"},
		"pending before":     {State: driver.Pending, Before: time.Now()},
		"running by IDs":     {State: driver.Running, IDs: []string{"a", "b", "a"}},
		"dead of kind by ID": {State: driver.Dead, Kind: "k", IDs: []string{"a"}},
	}
	for name, sel := range sels {
		n, err := d.CountSelected(ctx, sel)
		require.NoError(t, err, name)
		assert.Zero(t, n, name)
	}
	canceled := 0
	reqs := map[string]driver.BulkRequest{
		"retry":   {Action: driver.BulkRetry, Selection: driver.Selection{State: driver.Dead}},
		"delete":  {Action: driver.BulkDelete, Selection: driver.Selection{State: driver.Done, IDs: []string{"x"}}},
		"run now": {Action: driver.BulkRunNow, Selection: driver.Selection{State: driver.Pending}, Now: time.Now()},
		"cancel": {Action: driver.BulkCancel, Selection: driver.Selection{State: driver.Pending, Kind: "k"},
			Retention: time.Minute, Keep: driver.KeepDone{Age: time.Hour, Max: 10}, Canceled: func(string) { canceled++ }},
	}
	for name, r := range reqs {
		res, err := d.Bulk(ctx, r)
		require.NoError(t, err, name)
		assert.Equal(t, driver.BulkResult{}, res, name)
	}
	assert.Zero(t, canceled, "nothing canceled, nothing told")
	_, err := d.Bulk(ctx, driver.BulkRequest{Selection: driver.Selection{State: driver.Dead}})
	assert.Error(t, err, "a bulk request with no action")
}

// opsPause: Pause is seen by a second driver of the same store (paused
// kinds, known kinds, counts by kind), is idempotent, and Resume undoes
// it everywhere.
func opsPause(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 4)
	other := h.Same(t, d)

	require.NoError(t, d.Pause(ctx, "mail"))
	require.NoError(t, d.Pause(ctx, "mail"), "pausing a paused kind does nothing")
	require.NoError(t, d.Pause(ctx, "@nightly"))
	for name, drv := range map[string]driver.Driver{"the pausing driver": d, "another driver": other} {
		paused, err := drv.PausedKinds(ctx)
		require.NoError(t, err, name)
		assert.Equal(t, []string{"@nightly", "mail"}, paused, "%s: sorted, each once", name)
		known, err := drv.KnownKind(ctx, "mail")
		require.NoError(t, err, name)
		assert.True(t, known, "%s: a paused kind is known", name)
		total, kinds, err := drv.CountsByKind(ctx)
		require.NoError(t, err, name)
		assert.Equal(t, driver.Counts{}, total, name)
		assert.Equal(t, []driver.KindCounts{{Kind: "@nightly", Paused: true}, {Kind: "mail", Paused: true}}, kinds,
			"%s: a paused kind with no task is counted, paused", name)
		page, err := drv.List(ctx, driver.ListQuery{State: driver.Pending, Limit: 5})
		require.NoError(t, err, name)
		assert.Empty(t, page.Tasks, name)
	}

	require.NoError(t, other.Resume(ctx, "mail"))
	require.NoError(t, other.Resume(ctx, "mail"), "resuming a kind not paused does nothing")
	paused, err := d.PausedKinds(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"@nightly"}, paused)
	known, err := d.KnownKind(ctx, "mail")
	require.NoError(t, err)
	assert.False(t, known, "a resumed kind with no task is known no more")
	_, kinds, err := d.CountsByKind(ctx)
	require.NoError(t, err)
	assert.Equal(t, []driver.KindCounts{{Kind: "@nightly", Paused: true}}, kinds)
}

// opsPauseRace: Pause and Resume of one kind from two drivers at once
// never fail and leave it as the last of them (run alone) says, in
// every partition.
func opsPauseRace(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 8)
	other := h.Same(t, d)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Add(2)
		go func() { defer wg.Done(); errs <- d.Pause(ctx, "k") }()
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				errs <- other.Resume(ctx, "k")
			} else {
				errs <- other.Pause(ctx, "k")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, d.Pause(ctx, "k"))
	paused, err := other.PausedKinds(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"k"}, paused)
	require.NoError(t, other.Resume(ctx, "k"))
	paused, err = d.PausedKinds(ctx)
	require.NoError(t, err)
	assert.Empty(t, paused, "resumed in every partition")
}

// opsTimeline: ReadTimeline returns one entry per minute from first to
// last, in order, empty on a store that recorded nothing, and none when
// first is after last.
func opsTimeline(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 3)
	now := time.Now().Unix() / 60
	got, err := d.ReadTimeline(ctx, "", now-4, now)
	require.NoError(t, err)
	require.Len(t, got, 5)
	for i, m := range got {
		assert.Equal(t, now-4+int64(i), m.Minute)
		assert.Equal(t, driver.MinuteCounts{Minute: m.Minute}, m, "nothing recorded")
	}
	got, err = d.ReadTimeline(ctx, "k", now, now-1)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// opsStateError: the refusal of an action by state says the state and is
// ErrWrongState, never ErrNotFound.
func opsStateError(t *testing.T) {
	var err error = &driver.StateError{ID: "t1", State: driver.Running}
	assert.ErrorIs(t, err, driver.ErrWrongState)
	assert.NotErrorIs(t, err, driver.ErrNotFound)
	var se *driver.StateError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, driver.Running, se.State)
	assert.Contains(t, err.Error(), "running")
}
