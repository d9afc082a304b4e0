package drivertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Operations checks on stored tasks, stored with Schedule.

// runOperationsOnTasks checks the driver's Operations methods on pending
// tasks.
func runOperationsOnTasks(t *testing.T, h Harness) {
	t.Run("Get reads a stored task as it was scheduled", func(t *testing.T) { opsGet(t, h) })
	t.Run("List pages every task once in order across partitions and ties", func(t *testing.T) { opsList(t, h) })
	t.Run("Counts and CountsByKind count the stored tasks", func(t *testing.T) { opsCounts(t, h) })
	t.Run("the actions move a pending task and refuse what its state forbids", func(t *testing.T) { opsActions(t, h) })
	t.Run("a paused kind's tasks stay pending with their times and are found", func(t *testing.T) { opsPausedTasks(t, h) })
	t.Run("bulk actions change what the selection picks and no other", func(t *testing.T) { opsBulk(t, h) })
	t.Run("two drivers canceling the same selection at once cancel each task once", func(t *testing.T) { opsBulkCancelRace(t, h) })
}

// schedule stores a pending task of kind due at due, failing the test
// unless it is created.
func schedule(t *testing.T, d driver.Driver, id, kind string, due time.Time) {
	t.Helper()
	got, err := d.Schedule(context.Background(), driver.NewTask{ID: id, Kind: kind, Payload: []byte("p-" + id),
		Due: due, MaxRetries: 3, FixedID: true})
	require.NoError(t, err)
	require.Equal(t, driver.Created, got, id)
}

// future is a time well after the store's clock, in whole microseconds.
func future(d time.Duration) time.Time { return time.Now().Add(d).Truncate(time.Microsecond) }

func opsGet(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 4)
	due := future(time.Hour)
	schedule(t, d, "t1", "mail", due)
	info, ok, err := h.Same(t, d).Get(ctx, "t1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "t1", info.ID)
	assert.Equal(t, "mail", info.Kind)
	assert.Equal(t, []byte("p-t1"), info.Payload)
	assert.Equal(t, driver.Pending, info.State)
	assert.True(t, info.Due.Equal(due), "due %v, want %v", info.Due, due)
	assert.True(t, info.NextRun.Equal(due), "a first run is next at its due time")
	assert.Equal(t, 3, info.MaxRetries)
	assert.Zero(t, info.Attempt)
	assert.False(t, info.Paused)
	assert.Empty(t, info.Owner)
	assert.Empty(t, info.History)
}

func opsList(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 5)
	base := future(time.Hour)
	want := map[string][]string{} // the IDs listed, by the kind listed ("" for all)
	for i := range 40 {
		id := fmt.Sprintf("t%02d", i)
		kind := []string{"a", "b"}[i%2]
		// three to a time, so that pages cross ties
		schedule(t, d, id, kind, base.Add(time.Duration(i/3)*time.Second))
		want[""] = append(want[""], id)
		want[kind] = append(want[kind], id)
	}
	for _, kind := range []string{"", "a"} {
		for _, size := range []int{1, 3, 7, 40, 100} {
			var got []string
			var last time.Time
			q := driver.ListQuery{State: driver.Pending, Kind: kind, Limit: size}
			for pages := 0; ; pages++ {
				require.Less(t, pages, 100, "the listing ends")
				page, err := d.List(ctx, q)
				require.NoError(t, err)
				assert.LessOrEqual(t, len(page.Tasks), size)
				for _, info := range page.Tasks {
					assert.Equal(t, driver.Pending, info.State)
					assert.False(t, info.NextRun.Before(last), "soonest first")
					last = info.NextRun
					got = append(got, info.ID)
				}
				if page.Next == (driver.Position{}) {
					break
				}
				q.After = page.Next
			}
			assert.Equal(t, want[kind], got, "kind %q, pages of %d: every task once, by time then ID", kind, size)
		}
	}
	page, err := d.List(ctx, driver.ListQuery{State: driver.Dead, Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, page.Tasks, "a pending task is not listed dead")
}

func opsCounts(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 3)
	for i := range 5 {
		schedule(t, d, fmt.Sprintf("a%d", i), "a", future(time.Hour))
	}
	schedule(t, d, "b0", "b", future(time.Hour))
	counts, err := d.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, driver.Counts{Pending: 6}, counts)
	total, kinds, err := h.Same(t, d).CountsByKind(ctx)
	require.NoError(t, err)
	assert.Equal(t, driver.Counts{Pending: 6}, total)
	assert.Equal(t, []driver.KindCounts{{Kind: "a", Counts: driver.Counts{Pending: 5}}, {Kind: "b", Counts: driver.Counts{Pending: 1}}}, kinds)
	known, err := d.KnownKind(ctx, "b")
	require.NoError(t, err)
	assert.True(t, known, "a stored kind is known")
	stored, err := d.StoredKinds(ctx, []int{0, 1, 2})
	require.NoError(t, err)
	slices.Sort(stored)
	assert.Equal(t, []string{"a", "b"}, stored)
}

func opsActions(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 4)
	due := future(time.Hour)
	schedule(t, d, "t1", "k", due)

	before := time.Now()
	require.NoError(t, d.RunNow(ctx, "t1"))
	info, _, err := d.Get(ctx, "t1")
	require.NoError(t, err)
	assert.True(t, info.Due.Equal(due), "RunNow keeps the due time")
	assert.WithinDuration(t, before, info.NextRun, time.Minute, "RunNow makes it due now, by the store's clock")
	waiting, _, err := d.DueOfKind(ctx, []int{0, 1, 2, 3}, "k", time.Now().Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 1, waiting)

	later := future(2 * time.Hour)
	require.NoError(t, h.Same(t, d).Reschedule(ctx, "t1", later))
	info, _, err = d.Get(ctx, "t1")
	require.NoError(t, err)
	assert.True(t, info.Due.Equal(later), "Reschedule sets the due time")
	assert.True(t, info.NextRun.Equal(later))

	for name, act := range map[string]func() error{
		"retry":  func() error { return d.Retry(ctx, "t1") },
		"delete": func() error { return d.Delete(ctx, "t1") },
	} {
		err := act()
		var se *driver.StateError
		require.ErrorAs(t, err, &se, name)
		assert.Equal(t, driver.Pending, se.State, name)
		assert.ErrorIs(t, err, driver.ErrWrongState, name)
	}
	info, ok, err := d.Get(ctx, "t1")
	require.NoError(t, err)
	require.True(t, ok, "a refused action changes nothing")
	assert.Equal(t, driver.Pending, info.State)
	assert.True(t, info.NextRun.Equal(later))
}

func opsPausedTasks(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 4)
	past := time.Now().Add(-time.Minute).Truncate(time.Microsecond)
	schedule(t, d, "p1", "paused", past)
	schedule(t, d, "p2", "paused", future(time.Hour))
	schedule(t, d, "o1", "other", future(time.Hour))
	require.NoError(t, h.Same(t, d).Pause(ctx, "paused"))

	info, _, err := d.Get(ctx, "p1")
	require.NoError(t, err)
	assert.True(t, info.Paused)
	assert.Equal(t, driver.Pending, info.State)
	assert.True(t, info.NextRun.Equal(past), "a paused task keeps its time")
	page, err := d.List(ctx, driver.ListQuery{State: driver.Pending, Limit: 10})
	require.NoError(t, err)
	var ids []string
	for _, ti := range page.Tasks {
		ids = append(ids, ti.ID)
		assert.Equal(t, ti.Kind == "paused", ti.Paused, ti.ID)
	}
	assert.Equal(t, []string{"p1", "p2", "o1"}, ids, "the paused kind's tasks are listed in order, the overdue one first")
	_, kinds, err := d.CountsByKind(ctx)
	require.NoError(t, err)
	assert.Contains(t, kinds, driver.KindCounts{Kind: "paused", Counts: driver.Counts{Pending: 2}, Paused: true})
	waiting, oldest, err := d.DueOfKind(ctx, []int{0, 1, 2, 3}, "paused", time.Now())
	require.NoError(t, err)
	assert.Equal(t, 1, waiting)
	assert.True(t, oldest.Equal(past))
	n, err := d.CountSelected(ctx, driver.Selection{State: driver.Pending})
	require.NoError(t, err)
	assert.Equal(t, 3, n, "a selection of every pending task picks the paused ones")

	require.NoError(t, d.Resume(ctx, "paused"))
	info, _, err = d.Get(ctx, "p2")
	require.NoError(t, err)
	assert.False(t, info.Paused)
	assert.Equal(t, driver.Pending, info.State)
}

func opsBulk(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 4)
	for i := range 30 {
		schedule(t, d, fmt.Sprintf("a%02d", i), "a", future(time.Hour))
	}
	for i := range 10 {
		schedule(t, d, fmt.Sprintf("b%02d", i), "b", future(time.Hour))
	}
	n, err := d.CountSelected(ctx, driver.Selection{State: driver.Pending, Kind: "a"})
	require.NoError(t, err)
	assert.Equal(t, 30, n)
	n, err = d.CountSelected(ctx, driver.Selection{State: driver.Pending, IDs: []string{"a00", "b00", "a00", "zz"}})
	require.NoError(t, err)
	assert.Equal(t, 2, n, "each ID once, a missing one not")

	res, err := d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkRunNow, Now: time.Now(),
		Selection: driver.Selection{State: driver.Pending, Kind: "b"}})
	require.NoError(t, err)
	assert.Equal(t, driver.BulkResult{Matched: 10, Changed: 10}, res)
	waiting, _, err := d.DueOfKind(ctx, []int{0, 1, 2, 3}, "b", time.Now().Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 10, waiting, "every task of b runs now")
	waiting, _, err = d.DueOfKind(ctx, []int{0, 1, 2, 3}, "a", time.Now().Add(time.Minute))
	require.NoError(t, err)
	assert.Zero(t, waiting, "no task of a moved")

	var canceled []string
	res, err = d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkCancel, Retention: time.Minute,
		Selection: driver.Selection{State: driver.Pending, Kind: "a"}, Canceled: func(id string) { canceled = append(canceled, id) }})
	require.NoError(t, err)
	assert.Equal(t, driver.BulkResult{Matched: 30, Changed: 30}, res)
	assert.Len(t, canceled, 30)
	for _, id := range canceled {
		assert.True(t, strings.HasPrefix(id, "a"), id)
	}
	counts, err := d.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, driver.Counts{Pending: 10}, counts)

	res, err = d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkRetry, Selection: driver.Selection{State: driver.Dead}})
	require.NoError(t, err)
	assert.Equal(t, driver.BulkResult{}, res, "no dead task to retry")
}

func opsBulkCancelRace(t *testing.T, h Harness) {
	ctx := context.Background()
	d := h.Open(t, 4)
	other := h.Same(t, d)
	const n = 200
	for i := range n {
		schedule(t, d, fmt.Sprintf("t%03d", i), "k", future(time.Hour))
	}
	var mu sync.Mutex // guards seen
	seen := map[string]int{}
	canceled := func(id string) {
		mu.Lock()
		seen[id]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	results := make([]driver.BulkResult, 2)
	errs := make([]error, 2)
	for i, drv := range []driver.Driver{d, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = drv.Bulk(ctx, driver.BulkRequest{Action: driver.BulkCancel, Retention: time.Minute,
				Selection: driver.Selection{State: driver.Pending, Kind: "k"}, Canceled: canceled})
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	assert.Equal(t, n, results[0].Changed+results[1].Changed, "each task canceled by exactly one")
	assert.Len(t, seen, n)
	for id, times := range seen {
		assert.Equal(t, 1, times, id)
	}
	counts, err := d.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, driver.Counts{}, counts)
}
