package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHandlerThatIgnoresItsTimeLimitIsAFailedAttemptAndFreesTheTask(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	hang := make(chan struct{})
	started := make(chan cluster.Task, 4)
	n := newNode(t, srv, nil)
	// Released after the node's StopNow (cleanups run last-in first-out),
	// so the hung handler never returns while the test runs.
	t.Cleanup(func() { close(hang) })
	require.NoError(t, n.Handle("hangs", func(_ context.Context, task cluster.Task) error {
		started <- task
		<-hang // ignores its ctx
		return nil
	}, cluster.WithTaskTimeout(200*time.Millisecond)))
	start(t, n)
	id, err := n.Schedule(context.Background(), "hangs", nil, time.Now(), cluster.WithTaskMaxRetries(1))
	require.NoError(t, err)

	first := recv(t, started, 10*time.Second, "the first run")
	assert.Equal(t, 0, first.Attempt)
	second := recv(t, started, 20*time.Second, "the retry after the first run passed its time limit")
	assert.Equal(t, 1, second.Attempt, "the hung run counts as a failed attempt")
	assert.Equal(t, 0, second.Lost, "not as a lost run")
	waitFor(t, 20*time.Second, "the task to go dead after its one retry", func() bool { return counts(t, n).Dead == 1 })
	info, ok, err := n.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 2, info.Attempt)
	assert.Contains(t, info.LastError, "cluster: run "+id+": handler time limit passed after ")
}

func TestTimeLimitCancelsTheHandlersCtxWithATimeoutCause(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	causes := make(chan error, 1)
	// The node's default limit; the kind sets none of its own.
	n := newNode(t, srv, map[string]cluster.Handler{"slow": func(ctx context.Context, _ cluster.Task) error {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}}, cluster.WithTaskTimeout(100*time.Millisecond))
	start(t, n)
	id, err := n.Schedule(context.Background(), "slow", nil, time.Now(), cluster.WithTaskMaxRetries(0))
	require.NoError(t, err)
	cause := recv(t, causes, 10*time.Second, "the handler's ctx to end")
	assert.True(t, errors.Is(cause, cluster.ErrTaskTimeout), "cause %v", cause)
	waitFor(t, 10*time.Second, "the task to go dead", func() bool { return counts(t, n).Dead == 1 })
	info, _, err := n.Get(context.Background(), id)
	require.NoError(t, err)
	assert.Contains(t, info.LastError, "cluster: run "+id+": handler time limit passed after ")
}

func TestKindTimeLimitWinsOverTheNodesAndBadLimitsAreInvalid(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	done := make(chan error, 1)
	n := newNode(t, srv, nil, cluster.WithTaskTimeout(50*time.Millisecond))
	require.NoError(t, n.Handle("patient", func(ctx context.Context, _ cluster.Task) error {
		select {
		case <-ctx.Done():
			done <- context.Cause(ctx)
		case <-time.After(300 * time.Millisecond):
			done <- nil
		}
		return nil
	}, cluster.WithTaskTimeout(time.Minute)))
	assert.ErrorIs(t, n.Handle("neg", func(context.Context, cluster.Task) error { return nil }, cluster.WithTaskTimeout(-1)),
		schedulerErrInvalidArgument)
	_, err := cluster.New(client(t, srv), cluster.WithTaskTimeout(-time.Second))
	assert.ErrorIs(t, err, schedulerErrInvalidArgument)
	start(t, n)
	_, err = n.Schedule(context.Background(), "patient", nil, time.Now())
	require.NoError(t, err)
	assert.NoError(t, recv(t, done, 10*time.Second, "the run"), "the kind's one-minute limit applies, not the node's 50 ms")
}
