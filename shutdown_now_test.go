package scheduler_test

// ShutdownNow (shutdown.go): running tasks are interrupted, queued ones are
// handed back, also after Shutdown, and a second call finds nothing.
//
// Time is a schedulertest.ManualClock; running tasks block on a taskGate.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestLifeShutdownNowInterruptsRunningTasks(t *testing.T) {
	s, _ := newManual(t, 4)
	started := make(chan struct{}, 4)
	oneShot, err := s.Submit(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	require.NoError(t, err)
	callable, err := scheduler.SubmitCallable(s, func(ctx context.Context) (int, error) {
		started <- struct{}{}
		<-ctx.Done()
		return 42, nil // returns normally once interrupted
	})
	require.NoError(t, err)
	periodic, err := s.ScheduleAtFixedRate(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return nil
	}, 0, time.Minute)
	require.NoError(t, err)
	gaveUp, err := s.ScheduleWithFixedDelay(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}, 0, time.Minute)
	require.NoError(t, err)
	for range 4 {
		recv(t, started, "a task to start")
	}
	require.Equal(t, 4, s.Stats().Active)

	require.Empty(t, s.ShutdownNow())
	require.ErrorIs(t, gaveUp.Wait(testCtx(t)), scheduler.ErrCanceled,
		"a periodic run that gives up with ctx.Err() after ShutdownNow ends canceled, not failed")
	require.True(t, gaveUp.IsCanceled())

	// Every run's ctx was canceled: each body returned.
	require.ErrorIs(t, oneShot.Wait(testCtx(t)), context.Canceled, "a task that returns ctx.Err() fails with it")
	require.False(t, oneShot.IsCanceled())
	v, err := callable.Get(testCtx(t))
	require.NoError(t, err, "a one-shot task that returns nil after the interrupt completes normally")
	require.Equal(t, 42, v)
	require.False(t, callable.IsCanceled())
	require.ErrorIs(t, periodic.Wait(testCtx(t)), scheduler.ErrCanceled, "a periodic run ending after ShutdownNow ends canceled")
	require.True(t, periodic.IsCanceled())

	require.NoError(t, s.AwaitTermination(testCtx(t)))
	_, err = s.Submit(nop)
	require.ErrorIs(t, err, scheduler.ErrRejected)
}

func TestLifeShutdownNowReturnsQueuedTasks(t *testing.T) {
	s, clk := newManual(t, 1)
	gate := newTaskGate(t)
	running := gate.Start(t, s, gate.Task) // the only worker is busy: everything below stays queued

	var runs atomic.Int32
	d3, err := s.Schedule(countRuns(&runs), 3*time.Hour, scheduler.WithName("3h"))
	require.NoError(t, err)
	d1, err := s.Schedule(countRuns(&runs), time.Hour, scheduler.WithName("1h"))
	require.NoError(t, err)
	c2, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { runs.Add(1); return 0, nil },
		2*time.Hour, scheduler.WithName("2h callable"))
	require.NoError(t, err)
	p, err := s.ScheduleAtFixedRate(countRuns(&runs), 30*time.Minute, time.Hour, scheduler.WithName("30m periodic"))
	require.NoError(t, err)
	now, err := s.Submit(countRuns(&runs), scheduler.WithName("due now"))
	require.NoError(t, err)
	gone, err := s.Schedule(countRuns(&runs), 4*time.Hour, scheduler.WithName("4h canceled"))
	require.NoError(t, err)
	require.True(t, gone.Cancel(false))
	canceledBefore := s.Stats().Canceled

	got := s.ShutdownNow()

	// Every queued task, in due order, as the very futures returned; like
	// the JDK, canceled tasks still queued are included.
	requireFutures(t, []scheduler.ScheduledFuture{now, p, d1, c2, d3, gone}, got)
	for _, f := range got[:5] {
		require.False(t, f.IsDone(), "%s: never started and not canceled", f.Name())
		require.False(t, f.IsCanceled(), f.Name())
	}
	require.Empty(t, s.Queue())
	require.Zero(t, s.Stats().Queued)
	require.Equal(t, canceledBefore, s.Stats().Canceled, "ShutdownNow cancels none of the tasks it returns")

	// The running task's ctx was canceled; it returns nil and completes normally.
	require.NoError(t, running.Wait(testCtx(t)))
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	clk.Advance(5 * time.Hour)
	require.Zero(t, runs.Load())

	// The caller may cancel what it got back.
	for _, f := range got[:5] {
		require.True(t, f.Cancel(false), f.Name())
	}
	_, err = s.Schedule(nop, 0)
	require.ErrorIs(t, err, scheduler.ErrRejected)
}

func TestLifeShutdownNowAfterShutdown(t *testing.T) {
	s, clk := newManual(t, 1)
	gate := newTaskGate(t)
	running := gate.Start(t, s, gate.Task)
	var runs atomic.Int32
	queued, err := s.Schedule(countRuns(&runs), time.Hour, scheduler.WithName("queued"))
	require.NoError(t, err)

	s.Shutdown()
	requireFutures(t, []scheduler.ScheduledFuture{queued}, s.ShutdownNow())

	require.NoError(t, running.Wait(testCtx(t)), "interrupted, it returned nil")
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	require.Empty(t, s.ShutdownNow(), "a second ShutdownNow finds nothing")
	clk.Advance(2 * time.Hour)
	require.Zero(t, runs.Load())
	require.False(t, queued.IsDone())
}
