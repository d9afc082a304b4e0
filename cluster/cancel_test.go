package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCancelOnAnotherNodeCancelsTheRunInFlightWithinAThirdOfTheLease(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	// A lease of a minute: without Cancel's notice the run would hold on
	// for far longer than the third of a lease the test waits.
	const lease = time.Minute
	started := make(chan cluster.Task, 2)
	causes := make(chan error, 1)
	a := newNode(t, srv, map[string]cluster.Handler{"k": func(ctx context.Context, task cluster.Task) error {
		started <- task
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return errors.New("canceled run's error, to be dropped")
	}}, cluster.WithLease(lease))
	start(t, a)
	b := newNode(t, srv, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error { return nil }},
		cluster.WithLease(lease))
	id, err := b.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run on A")

	c, err := b.Cancel(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, cluster.Cancellation{Removed: true, WasRunning: true}, c)
	recv(t, causes, lease/3, "the run's ctx to be canceled")
	waitFor(t, 10*time.Second, "A to drop the run's outcome", func() bool {
		info, ok, err := a.Get(context.Background(), id)
		require.NoError(t, err)
		return !ok && info.ID == ""
	})
	require.NoError(t, a.Stop(context.Background()))
	assert.Equal(t, cluster.Counts{}, counts(t, a), "no retry was stored for the canceled run")
	assert.Empty(t, started, "claimed again after Cancel")
}

func TestCanceledOccurrenceIsNotStoredAgainByANodeStartedLater(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	due := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
	once := scheduler.TriggerFunc(func(t time.Time) time.Time {
		if t.Before(due) {
			return due
		}
		return time.Time{}
	})
	ran := make(chan cluster.Task, 2)
	h := func(_ context.Context, task cluster.Task) error { ran <- task; return nil }
	a := newNode(t, srv, nil)
	require.NoError(t, a.Periodic("nightly", once, h))
	start(t, a)
	id := cluster.OccurrenceID("nightly", due)
	waitFor(t, 10*time.Second, "A to store the occurrence", func() bool {
		_, ok, err := a.Get(context.Background(), id)
		require.NoError(t, err)
		return ok
	})
	c, err := a.Cancel(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, cluster.Cancellation{Removed: true}, c)

	b := newNode(t, srv, nil)
	require.NoError(t, b.Periodic("nightly", once, h))
	start(t, b)
	waitFor(t, 20*time.Second, "the occurrence's due time to pass", func() bool { return time.Now().After(due.Add(time.Second)) })
	_, ok, err := b.Get(context.Background(), id)
	require.NoError(t, err)
	assert.False(t, ok, "B stored the canceled occurrence again")
	assert.Empty(t, ran, "the canceled occurrence ran")
}
