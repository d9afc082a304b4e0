package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hourBackoff retries a failed run an hour later.
var hourBackoff = cluster.WithBackoff(func(int) time.Duration { return time.Hour })

// retrying stores tasks of kind "f" with the IDs given, due now, and waits
// until a worker on srv whose handler fails has run each once: each then
// waits an hour for its retry. The worker is stopped.
func retrying(t *testing.T, srv *redistest.Server, ops *cluster.Node, ids ...string) {
	t.Helper()
	fail := func(context.Context, cluster.Task) error { return errors.New("not yet") }
	worker := newNode(t, srv, map[string]cluster.Handler{"f": fail}, hourBackoff)
	start(t, worker)
	for _, id := range ids {
		_, err := ops.Schedule(context.Background(), "f", nil, time.Now(), cluster.WithID(id))
		require.NoError(t, err)
	}
	for _, id := range ids {
		waitFor(t, 10*time.Second, id+" to wait for its retry", func() bool {
			info, _, err := ops.Get(context.Background(), id)
			return err == nil && info.Retrying
		})
	}
	worker.StopNow()
}

// TestNextRunOfARetryingTaskIsItsRetryTime: a task that failed and waits
// for its backoff shows NextRun = Redis's time of the failure plus the
// backoff, while Due keeps the time it was scheduled for; RunNow moves
// NextRun and keeps Due; a paused kind's task keeps its NextRun.
func TestNextRunOfARetryingTaskIsItsRetryTime(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ops := newNode(t, srv, map[string]cluster.Handler{"f": func(context.Context, cluster.Task) error { return nil }})
	retrying(t, srv, ops, "x")
	info, ok, err := ops.Get(ctx, "x")
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, info.History, 1)
	failedAt := info.History[0].End
	assert.Equal(t, cluster.Pending, info.State)
	assert.Equal(t, failedAt.Add(time.Hour), info.NextRun, "the retry's time: Redis's time of the failure plus the backoff")
	assert.True(t, info.Due.Before(failedAt), "Due %v keeps the time it was scheduled for", info.Due)

	require.NoError(t, ops.Pause(ctx, "f"))
	paused, _, err := ops.Get(ctx, "x")
	require.NoError(t, err)
	assert.True(t, paused.Paused)
	assert.Equal(t, info.NextRun, paused.NextRun, "a paused kind's task keeps its next run")
	require.NoError(t, ops.Resume(ctx, "f"))

	require.NoError(t, ops.RunNow(ctx, "x"))
	moved, _, err := ops.Get(ctx, "x")
	require.NoError(t, err)
	assert.True(t, moved.NextRun.After(failedAt) && moved.NextRun.Before(info.NextRun),
		"run now: next run %v, between the failure %v and the retry %v", moved.NextRun, failedAt, info.NextRun)
	assert.Equal(t, info.Due, moved.Due, "RunNow keeps Due")

	later := time.Now().Add(3 * time.Hour).Truncate(time.Microsecond)
	require.NoError(t, ops.Reschedule(ctx, "x", later))
	resched, _, err := ops.Get(ctx, "x")
	require.NoError(t, err)
	assert.Equal(t, later, resched.NextRun)
	assert.Equal(t, later, resched.Due)

	dead, _, err := ops.Get(ctx, "nope")
	require.NoError(t, err)
	assert.True(t, dead.NextRun.IsZero())
}

// TestListOfPendingIsOrderedByNextRunAndPagesCorrectly lists retrying tasks
// (scheduled long ago, retried in an hour) among fresh ones due around
// that hour, in pages of every size: the order is by NextRun then ID, as
// shown, each NextRun is Get's, and the cursor lists each task exactly
// once.
func TestListOfPendingIsOrderedByNextRunAndPagesCorrectly(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ok := func(context.Context, cluster.Task) error { return nil }
	ops := newNode(t, srv, map[string]cluster.Handler{"f": ok, "k": ok})
	retrying(t, srv, ops, "r0", "r1", "r2")
	base := time.Now().Add(time.Hour).Truncate(time.Second)
	want := map[string]bool{"r0": true, "r1": true, "r2": true}
	for i := range 24 {
		id, err := ops.Schedule(ctx, "k", nil, base.Add(time.Duration(i%8-4)*time.Second), cluster.WithID(fmt.Sprintf("k%02d", i)))
		require.NoError(t, err)
		want[id] = true
	}
	for _, kind := range []string{"", "f"} {
		for _, size := range []int{1, 2, 5, 100} {
			seen := map[string]int{}
			var last cluster.Info
			cursor := ""
			for pages := 0; ; pages++ {
				require.Less(t, pages, 100, "the listing does not end")
				page, err := ops.List(ctx, cluster.ListQuery{State: cluster.Pending, Kind: kind, Cursor: cursor, Limit: size})
				require.NoError(t, err)
				for _, info := range page.Tasks {
					got, _, err := ops.Get(ctx, info.ID)
					require.NoError(t, err)
					assert.Equal(t, got.NextRun, info.NextRun, "NextRun of %s listed and got", info.ID)
					if last.ID != "" {
						assert.True(t, last.NextRun.Before(info.NextRun) ||
							last.NextRun.Equal(info.NextRun) && last.ID < info.ID,
							"kind %q pages of %d: %s (%v) listed after %s (%v)", kind, size, info.ID, info.NextRun, last.ID, last.NextRun)
					}
					last = info
					seen[info.ID]++
				}
				if page.Next == "" {
					break
				}
				cursor = page.Next
			}
			for id := range want {
				if kind == "" || id[0] == 'r' {
					assert.Equal(t, 1, seen[id], "kind %q pages of %d: %s listed", kind, size, id)
				}
			}
		}
	}
}

// TestDoneRecordOfACanceledTaskSaysCanceled: with WithKeepDone, the done
// record of a task removed by Cancel says Canceled, that of a completed
// one does not, in Get and in List alike.
func TestDoneRecordOfACanceledTaskSaysCanceled(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ran := make(chan string, 1)
	w := newNode(t, srv, map[string]cluster.Handler{"k": func(_ context.Context, task cluster.Task) error {
		ran <- task.ID
		return nil
	}}, cluster.WithKeepDone(time.Hour, 100))
	start(t, w)
	_, err := w.Schedule(ctx, "k", nil, time.Now(), cluster.WithID("ran"))
	require.NoError(t, err)
	recv(t, ran, 10*time.Second, "the run")
	_, err = w.Schedule(ctx, "k", nil, time.Now().Add(time.Hour), cluster.WithID("canceled"))
	require.NoError(t, err)
	c, err := w.Cancel(ctx, "canceled")
	require.NoError(t, err)
	require.True(t, c.Removed)
	waitFor(t, 10*time.Second, "both done records", func() bool { return counts(t, w).Done == 2 })

	for id, want := range map[string]bool{"ran": false, "canceled": true} {
		info, ok, err := w.Get(ctx, id)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, cluster.Done, info.State)
		assert.Equal(t, want, info.Canceled, "Get %s", id)
		assert.True(t, info.NextRun.IsZero())
	}
	page, err := w.List(ctx, cluster.ListQuery{State: cluster.Done, Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 2)
	for _, info := range page.Tasks {
		assert.Equal(t, info.ID == "canceled", info.Canceled, "List %s", info.ID)
	}
}
