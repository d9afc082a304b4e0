package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runToDone schedules a task of kind on n, due now, and waits for its
// done record.
func runToDone(t *testing.T, n *cluster.Node, kind, id string) {
	t.Helper()
	ctx := context.Background()
	_, err := n.Schedule(ctx, kind, []byte(id), time.Now(), cluster.WithID(id))
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the done record of "+id, func() bool {
		info, ok, err := n.Get(ctx, id)
		return err == nil && ok && info.State == cluster.Done
	})
}

// doneIDs lists every done record, newest first.
func doneIDs(t *testing.T, n *cluster.Node) []string {
	t.Helper()
	page, err := n.List(context.Background(), cluster.ListQuery{State: cluster.Done, Limit: cluster.MaxPage})
	require.NoError(t, err)
	var ids []string
	for _, info := range page.Tasks {
		ids = append(ids, info.ID)
	}
	return ids
}

func TestKeepDoneKeepsTheNewestRecordsUpToItsCount(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ok := func(context.Context, cluster.Task) error { return nil }
	w := newNode(t, srv, map[string]cluster.Handler{"k": ok}, cluster.WithKeepDone(time.Hour, 5))
	start(t, w)
	for i := range 12 {
		runToDone(t, w, "k", fmt.Sprintf("t%02d", i))
		want := int64(min(i+1, 5))
		// The records are trimmed soon after each completion.
		waitFor(t, 10*time.Second, fmt.Sprintf("%d done records after %d runs", want, i+1), func() bool {
			return counts(t, w) == cluster.Counts{Done: want}
		})
	}
	assert.Equal(t, []string{"t11", "t10", "t09", "t08", "t07"}, doneIDs(t, w), "the newest five, newest first")
	for _, id := range []string{"t00", "t06"} {
		_, found, err := w.Get(context.Background(), id)
		require.NoError(t, err)
		assert.False(t, found, "record %s past the count is gone", id)
	}
	info := get(t, w, "t11")
	assert.Equal(t, "t11", string(info.Payload))
	assert.False(t, info.Finished.IsZero())
}

// TestKeepDoneRemovesRecordsOlderThanItsAge checks both ways a record past
// the age goes: the reaper's round, and the next completion. A record may
// age past 300 ms while a loaded box stalls the test, so the test never
// needs to see a record its reaper could already have removed: the first
// node's run is known by its handler, and the second node, whose reaper
// never comes round in the test, is the only one left when a record must
// wait for the next completion.
func TestKeepDoneRemovesRecordsOlderThanItsAge(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ok := func(context.Context, cluster.Task) error { return nil }
	const age = 300 * time.Millisecond
	ran := make(chan cluster.Task, 1)
	w := newNode(t, srv, map[string]cluster.Handler{"k": func(_ context.Context, task cluster.Task) error {
		ran <- task
		return nil
	}}, cluster.WithKeepDone(age, 1000))
	start(t, w)
	_, err := w.Schedule(ctx, "k", nil, time.Now(), cluster.WithID("old"))
	require.NoError(t, err)
	recv(t, ran, 10*time.Second, "the run of old")
	// The reaper (every quarter lease) removes it once it is older than
	// the age, with no new completion to trim it.
	waitFor(t, 10*time.Second, "the old record to go", func() bool {
		_, found, err := w.Get(ctx, "old")
		return err == nil && !found
	})
	w.StopNow()

	// A completion trims too: a record past the age is gone once the
	// next one is added, whichever node adds it.
	other := newNode(t, srv, map[string]cluster.Handler{"k": ok}, cluster.WithKeepDone(age, 1000),
		cluster.WithLease(time.Hour)) // its reaper would not come round in the test
	start(t, other)
	runToDone(t, other, "k", "a")
	first := get(t, other, "a")
	waitFor(t, 10*time.Second, "the first record to age", func() bool { return time.Since(first.Finished) > 2*age })
	assert.Equal(t, []string{"a"}, doneIDs(t, other), "no completion yet: a's record stays past the age")
	runToDone(t, other, "k", "b")
	waitFor(t, 10*time.Second, "a's record, older than the age, to go with b's completion", func() bool {
		return slices.Equal(doneIDs(t, other), []string{"b"})
	})
}

func TestDoneRecordsAreDeletedPurgedAndTheirFixedIDsScheduledAgain(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ran := make(chan cluster.Task, 10)
	h := func(_ context.Context, task cluster.Task) error { ran <- task; return nil }
	w := newNode(t, srv, map[string]cluster.Handler{"k": h, "bad": func(context.Context, cluster.Task) error {
		return errors.New("boom")
	}}, cluster.WithKeepDone(time.Hour, 100), cluster.WithRetention(time.Millisecond), cluster.WithMaxRetries(0))
	start(t, w)
	for _, id := range []string{"a", "b", "c"} {
		runToDone(t, w, "k", id)
		recv(t, ran, time.Second, "the run of "+id)
	}
	dead, err := w.Schedule(ctx, "bad", nil, time.Now())
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the dead task", func() bool { return counts(t, w).Dead == 1 })

	require.NoError(t, w.Delete(ctx, "a"))
	assert.ErrorIs(t, w.Delete(ctx, "a"), cluster.ErrNotFound)
	assert.ErrorIs(t, w.RunNow(ctx, "b"), cluster.ErrWrongState, "a done record is not pending")
	assert.ErrorIs(t, w.Retry(ctx, "b"), cluster.ErrWrongState, "a done record is not dead")

	// The done marker of a fixed ID lasts the retention (1 ms here); past
	// it the ID is free, and the same task stored again replaces its done
	// record and runs again.
	waitFor(t, 5*time.Second, "the done marker to expire", func() bool {
		_, err := w.Schedule(ctx, "k", []byte("b"), time.Now().Add(time.Hour), cluster.WithID("b"))
		return err == nil && get(t, w, "b").State == cluster.Pending
	})
	info := get(t, w, "b")
	assert.Empty(t, info.History, "a new task under the ID")
	require.NoError(t, w.RunNow(ctx, "b"))
	recv(t, ran, 10*time.Second, "the run of b again")
	waitFor(t, 10*time.Second, "b done again", func() bool {
		info, ok, err := w.Get(ctx, "b")
		return err == nil && ok && info.State == cluster.Done
	})

	k, err := w.PurgeDone(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.Zero(t, k, "nothing finished an hour ago")
	k, err = w.PurgeDone(ctx, time.Now().Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 2, k)
	assert.Equal(t, cluster.Counts{Dead: 1}, counts(t, w), "PurgeDone leaves the dead")
	_, byKind, err := w.CountsByKind(ctx)
	require.NoError(t, err)
	assert.Equal(t, []cluster.KindCounts{{Kind: "bad", Counts: cluster.Counts{Dead: 1}}}, byKind)
	k, err = w.Purge(ctx, time.Now().Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 1, k)
	_, found, err := w.Get(ctx, dead)
	require.NoError(t, err)
	assert.False(t, found)
}

func TestKeepDoneBadBoundsAreInvalid(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	for name, o := range map[string]cluster.Option{
		"zero age":   cluster.WithKeepDone(0, 10),
		"no records": cluster.WithKeepDone(time.Hour, 0),
	} {
		_, err := cluster.New(client(t, srv), o)
		assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, name)
	}
}
