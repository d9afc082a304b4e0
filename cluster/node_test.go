package cluster_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScheduleRunsTaskAtDueWithPayload(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ran := make(chan cluster.Task, 1)
	n := newNode(t, srv, map[string]cluster.Handler{
		"email": func(_ context.Context, task cluster.Task) error { ran <- task; return nil },
	})
	start(t, n)

	due := time.Now().Add(100 * time.Millisecond)
	id, err := n.Schedule(context.Background(), "email", []byte("to: ada"), due)
	require.NoError(t, err)
	info, ok, err := n.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok, "stored once Schedule returned")
	assert.Equal(t, cluster.Pending, info.State)

	got := recv(t, ran, 10*time.Second, "the run")
	assert.Equal(t, id, got.ID)
	assert.Equal(t, "email", got.Kind)
	assert.Equal(t, []byte("to: ada"), got.Payload)
	assert.Equal(t, due.UnixMicro(), got.Due.UnixMicro())
	assert.Equal(t, 0, got.Attempt)
	assert.False(t, time.Now().Before(due), "ran before its due time")

	waitFor(t, 5*time.Second, "the completed task to leave the store", func() bool {
		return counts(t, n) == cluster.Counts{}
	})
}

func TestPastDueTimeMeansRunNow(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ran := make(chan cluster.Task, 1)
	n := newNode(t, srv, map[string]cluster.Handler{
		"k": func(_ context.Context, task cluster.Task) error { ran <- task; return nil },
	})
	start(t, n)
	due := time.Now().Add(-time.Hour)
	_, err := n.Schedule(context.Background(), "k", nil, due)
	require.NoError(t, err)
	got := recv(t, ran, 10*time.Second, "the overdue run")
	assert.Equal(t, due.UnixMicro(), got.Due.UnixMicro(), "the task keeps its past due time")
}

func TestFailedRunIsRetriedThenSucceeds(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	attempts := make(chan int, 4)
	n := newNode(t, srv, map[string]cluster.Handler{
		"flaky": func(_ context.Context, task cluster.Task) error {
			attempts <- task.Attempt
			if task.Attempt < 2 {
				return errors.New("try again")
			}
			return nil
		},
	})
	start(t, n)
	_, err := n.Schedule(context.Background(), "flaky", nil, time.Now())
	require.NoError(t, err)
	for want := range 3 {
		assert.Equal(t, want, recv(t, attempts, 10*time.Second, "a run"))
	}
	waitFor(t, 5*time.Second, "the task to complete", func() bool { return counts(t, n) == cluster.Counts{} })
}

func TestTaskFailingPastItsRetriesIsDeadWithLastError(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	var runs atomic.Int32
	n := newNode(t, srv, map[string]cluster.Handler{
		"doomed": func(_ context.Context, task cluster.Task) error {
			runs.Add(1)
			if task.Attempt == 2 {
				panic("boom")
			}
			return errors.New("no luck")
		},
	})
	start(t, n)
	id, err := n.Schedule(context.Background(), "doomed", []byte("p"), time.Now(), cluster.WithTaskMaxRetries(2))
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the task to die", func() bool { return counts(t, n).Dead == 1 })
	info, ok, err := n.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, cluster.Dead, info.State)
	assert.Equal(t, 3, info.Attempt, "first run and two retries")
	assert.Equal(t, int32(3), runs.Load())
	assert.Contains(t, info.LastError, "boom", "a panic is the last error")
	assert.Contains(t, info.LastError, "runtime/debug.Stack", "with its stack")
	assert.Equal(t, []byte("p"), info.Payload)

	c, err := n.Cancel(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, cluster.Cancellation{Removed: true}, c, "Cancel removes a dead task")
	assert.Equal(t, cluster.Counts{}, counts(t, n))
}

func TestCancelRemovesStoredTaskAndItNeverRuns(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ran := make(chan string, 2)
	// One worker runs the tasks in due order: when the later one has run,
	// the canceled one would have run before it.
	n := newNode(t, srv, map[string]cluster.Handler{
		"k": func(_ context.Context, task cluster.Task) error { ran <- string(task.Payload); return nil },
	}, cluster.WithConcurrency(1))
	start(t, n)
	ctx := context.Background()
	now := time.Now()
	far, err := n.Schedule(ctx, "k", []byte("far"), now.Add(time.Hour))
	require.NoError(t, err)
	// Seconds of margin: the two Cancels below must come before near's
	// due time even on a loaded machine.
	near, err := n.Schedule(ctx, "k", []byte("canceled"), now.Add(3*time.Second))
	require.NoError(t, err)
	_, err = n.Schedule(ctx, "k", []byte("later"), now.Add(3200*time.Millisecond))
	require.NoError(t, err)

	for _, id := range []string{far, near} {
		c, err := n.Cancel(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, cluster.Cancellation{Removed: true}, c)
		_, ok, err := n.Get(ctx, id)
		require.NoError(t, err)
		assert.False(t, ok, "canceled task still stored")
	}
	c, err := n.Cancel(ctx, near)
	require.NoError(t, err)
	assert.Equal(t, cluster.Cancellation{}, c, "a second Cancel finds nothing")

	assert.Equal(t, "later", recv(t, ran, 10*time.Second, "the task after the canceled one"))
	assert.Empty(t, ran)
}

func TestTaskScheduledByAnotherNodeReachesWindowThroughPubSub(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ran := make(chan cluster.Task, 1)
	h := map[string]cluster.Handler{"k": func(_ context.Context, task cluster.Task) error { ran <- task; return nil }}
	// A sweep every minute: only pub/sub can bring the task in time.
	slow := []cluster.Option{cluster.WithWindow(2 * time.Minute), cluster.WithSweepInterval(time.Minute)}
	worker := newNode(t, srv, h, slow...)
	start(t, worker)
	// The worker's first sweep found nothing; wait until it is done so
	// the task below is not picked up by that sweep by luck.
	producer := newNode(t, srv, h, slow...) // never started: it only stores
	_, err := producer.Schedule(context.Background(), "k", nil, time.Now().Add(50*time.Millisecond))
	require.NoError(t, err)
	recv(t, ran, 20*time.Second, "the run on the worker")
}

func TestSweepLoadsTasksThatEnterTheWindowLaterOrWereStoredBeforeStart(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ran := make(chan string, 2)
	h := map[string]cluster.Handler{"k": func(_ context.Context, task cluster.Task) error { ran <- string(task.Payload); return nil }}
	opts := []cluster.Option{cluster.WithWindow(300 * time.Millisecond), cluster.WithSweepInterval(100 * time.Millisecond)}
	producer := newNode(t, srv, h, opts...)
	_, err := producer.Schedule(context.Background(), "k", []byte("before start"), time.Now())
	require.NoError(t, err)
	// Beyond the window when published: the worker ignores the message
	// and must load it on a later sweep.
	_, err = producer.Schedule(context.Background(), "k", []byte("beyond window"), time.Now().Add(time.Second))
	require.NoError(t, err)
	worker := newNode(t, srv, h, opts...)
	start(t, worker)
	assert.Equal(t, "before start", recv(t, ran, 10*time.Second, "the task stored before Start"))
	assert.Equal(t, "beyond window", recv(t, ran, 10*time.Second, "the task beyond the window"))
}

func TestSameIDIsStoredAndRunOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ran := make(chan string, 4)
	n := newNode(t, srv, map[string]cluster.Handler{
		"k": func(_ context.Context, task cluster.Task) error { ran <- task.ID; return nil },
	}, cluster.WithConcurrency(1))
	ctx := context.Background()
	due := time.Now().Add(100 * time.Millisecond)
	for range 3 {
		id, err := n.Schedule(ctx, "k", []byte("x"), due, cluster.WithID("order-42"))
		require.NoError(t, err)
		assert.Equal(t, "order-42", id)
	}
	_, err := n.Schedule(ctx, "k", []byte("other payload"), due, cluster.WithID("order-42"))
	assert.ErrorIs(t, err, cluster.ErrIDConflict)
	assert.ErrorIs(t, err, schedulerErrInvalidArgument)
	_, err = n.Schedule(ctx, "k", []byte("x"), due.Add(time.Second), cluster.WithID("order-42"))
	assert.ErrorIs(t, err, cluster.ErrIDConflict, "another due time is another task")
	assert.Equal(t, int64(1), counts(t, n).Pending)

	start(t, n)
	assert.Equal(t, "order-42", recv(t, ran, 10*time.Second, "the run"))
	waitFor(t, 5*time.Second, "the task to complete", func() bool { return counts(t, n) == cluster.Counts{} })

	// After the run the done marker keeps the ID: scheduling it again is
	// a no-op, and the next task (due later, one worker) runs alone.
	_, err = n.Schedule(ctx, "k", []byte("x"), due, cluster.WithID("order-42"))
	require.NoError(t, err)
	_, err = n.Schedule(ctx, "k", []byte("x"), due, cluster.WithID("order-42-conflict-check"))
	require.NoError(t, err)
	_, err = n.Schedule(ctx, "k", []byte("y"), due, cluster.WithID("order-42"))
	assert.ErrorIs(t, err, cluster.ErrIDConflict, "a different task under a used ID")
	assert.Equal(t, "order-42-conflict-check", recv(t, ran, 10*time.Second, "the next task"))
	assert.Empty(t, ran)
}

func TestTasksPreferredByANodeWithoutTheirKindRunOnANodeWithIt(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	// A rolling deploy: only the new node handles "new". The old node is
	// the preferred claimer of about half the tasks; the new one must
	// still run them all, after the backup delay.
	ran := make(chan string, 40)
	newer := newNode(t, srv, map[string]cluster.Handler{
		"new": func(_ context.Context, task cluster.Task) error { ran <- task.ID; return nil },
	}, cluster.WithBackupDelay(20*time.Millisecond))
	older := newNode(t, srv, map[string]cluster.Handler{
		"old": func(context.Context, cluster.Task) error { return nil },
	}, cluster.WithBackupDelay(20*time.Millisecond))
	start(t, older)
	start(t, newer)
	want := map[string]bool{}
	for range 40 {
		id, err := newer.Schedule(context.Background(), "new", nil, time.Now().Add(50*time.Millisecond))
		require.NoError(t, err)
		want[id] = true
	}
	for range 40 {
		delete(want, recv(t, ran, 10*time.Second, "a run on the new node"))
	}
	assert.Empty(t, want, "tasks that never ran")
}
