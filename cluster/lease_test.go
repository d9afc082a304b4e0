package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blocking returns a handler that reports each run on started and holds it
// until its ctx ends.
func blocking(started chan<- cluster.Task) cluster.Handler {
	return func(ctx context.Context, task cluster.Task) error {
		started <- task
		<-ctx.Done()
		return ctx.Err()
	}
}

func TestStopNowLeavesTaskToItsLeaseThenAnotherNodeRunsIt(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	startedA := make(chan cluster.Task, 1)
	a := newNode(t, srv, map[string]cluster.Handler{"k": blocking(startedA)})
	start(t, a)
	id, err := a.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, startedA, 10*time.Second, "the run on A")

	a.StopNow()
	info, ok, err := a.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, cluster.Running, info.State, "StopNow leaves the lease in place")

	ranB := make(chan cluster.Task, 1)
	b := newNode(t, srv, map[string]cluster.Handler{
		"k": func(_ context.Context, task cluster.Task) error { ranB <- task; return nil },
	})
	start(t, b)
	got := recv(t, ranB, 10*time.Second, "the run on B after A's lease expired")
	assert.Equal(t, id, got.ID)
	assert.Equal(t, 0, got.Attempt, "a lost run uses up no retry")
	assert.Equal(t, 1, got.Lost, "the lost run is counted as lost")
	waitFor(t, 5*time.Second, "the task to complete", func() bool { return counts(t, b) == cluster.Counts{} })
}

func TestStopPastItsDeadlineHandsRunningTaskBackAtOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	startedA := make(chan cluster.Task, 1)
	// A lease far longer than the test: only the hand-back can let B run
	// the task in time.
	long := cluster.WithLease(time.Minute)
	a := newNode(t, srv, map[string]cluster.Handler{"k": blocking(startedA)}, long)
	start(t, a)
	id, err := a.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, startedA, 10*time.Second, "the run on A")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, a.Stop(ctx), context.DeadlineExceeded)
	info, ok, err := a.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, cluster.Pending, info.State, "handed back")
	assert.Equal(t, 0, info.Attempt, "a hand-back is no failed attempt")

	ranB := make(chan cluster.Task, 1)
	b := newNode(t, srv, map[string]cluster.Handler{
		"k": func(_ context.Context, task cluster.Task) error { ranB <- task; return nil },
	}, long)
	start(t, b)
	got := recv(t, ranB, 10*time.Second, "the run on B")
	assert.Equal(t, id, got.ID)
	assert.Equal(t, 0, got.Attempt)
}

func TestGracefulStopWaitsForRunningHandlerAndCompletesIt(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	started, release := make(chan struct{}), make(chan struct{})
	var ctxErr atomic.Value
	a := newNode(t, srv, map[string]cluster.Handler{"k": func(ctx context.Context, _ cluster.Task) error {
		close(started)
		<-release
		ctxErr.Store(ctx.Err() == nil)
		return nil
	}})
	start(t, a)
	_, err := a.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	// One more task not yet due: Stop must leave it stored, unclaimed.
	later, err := a.Schedule(context.Background(), "k", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	<-started
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(context.Background()) }()
	close(release)
	require.NoError(t, recv(t, stopped, 10*time.Second, "Stop"))
	assert.Equal(t, true, ctxErr.Load(), "a graceful Stop does not cancel running handlers")
	assert.Equal(t, cluster.Counts{Pending: 1}, counts(t, a))
	info, ok, err := a.Get(context.Background(), later)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, cluster.Pending, info.State)
}

func TestHeartbeatKeepsALongRunLeasedSoNoOtherNodeRunsIt(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := client(t, srv)
	started, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	h := map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error {
		if runs.Add(1) == 1 {
			close(started)
		}
		<-release
		return nil
	}}
	const lease = 3 * time.Second
	a := newNode(t, srv, h, cluster.WithLease(lease))
	b := newNode(t, srv, h, cluster.WithLease(lease))
	start(t, a)
	start(t, b)
	id, err := a.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	<-started
	// Wait until the lease has been renewed to half a lease past the
	// first expiry plus a lease: without the heartbeat the lease would
	// have expired half a lease ago, and the reaper (every quarter lease)
	// would have handed the task to the other node.
	first := rdb.ZScore(context.Background(), cluster.PartitionKey("{scheduler}", id, "lease"), id).Val()
	waitFor(t, 20*time.Second, "the lease to be renewed", func() bool {
		s, err := rdb.ZScore(context.Background(), cluster.PartitionKey("{scheduler}", id, "lease"), id).Result()
		return err == nil && s > first+float64((lease+lease/2).Microseconds())
	})
	close(release)
	waitFor(t, 10*time.Second, "the task to complete", func() bool { return counts(t, a) == cluster.Counts{} })
	assert.Equal(t, int32(1), runs.Load(), "run once")
}

func TestCancelOfARunningTaskCancelsItsCtxAndDropsItsOutcome(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	started := make(chan cluster.Task, 1)
	a := newNode(t, srv, map[string]cluster.Handler{"k": func(ctx context.Context, task cluster.Task) error {
		started <- task
		<-ctx.Done()
		return context.Cause(ctx)
	}})
	start(t, a)
	id, err := a.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run")
	c, err := a.Cancel(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, cluster.Cancellation{Removed: true, WasRunning: true}, c)
	require.NoError(t, a.Stop(context.Background()))
	assert.Equal(t, cluster.Counts{}, counts(t, a), "the failed outcome was not recorded as a retry")
	assert.Empty(t, started)
}
