package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// Stop: the context-bounded stop in the style of net/http's Server.Shutdown.

func TestStopWithNothingQueuedReturnsNil(t *testing.T) {
	s, _ := newManual(t, 2)
	require.NoError(t, s.Stop(testCtx(t)))
	require.True(t, s.IsTerminated())
	require.NoError(t, s.Stop(testCtx(t)), "a second Stop is safe")
}

func TestStopDropsQueuedTasksAndReportsTheOneShots(t *testing.T) {
	s, _ := newManual(t, 2)
	tomorrow, err := s.Schedule(nop, 24*time.Hour, scheduler.WithName("tomorrow"))
	require.NoError(t, err)
	soon, err := s.Schedule(nop, time.Minute, scheduler.WithName("soon"))
	require.NoError(t, err)
	beat, err := s.ScheduleAtFixedRate(nop, time.Second, time.Second)
	require.NoError(t, err)
	gone, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	require.True(t, gone.Cancel(false), "canceled before the stop: not dropped by it")

	err = s.Stop(testCtx(t))
	var se *scheduler.StopError
	require.ErrorAs(t, err, &se)
	require.NoError(t, se.Err, "no run was in progress")
	requireFutures(t, []scheduler.ScheduledFuture{soon, tomorrow}, se.Dropped, "the one-shots, in due order")
	require.Contains(t, err.Error(), "scheduler: stop: 2 one-shot tasks dropped")
	for _, f := range []scheduler.ScheduledFuture{tomorrow, soon, beat} {
		requireCanceled(t, f)
	}
	require.True(t, s.IsTerminated(), "Stop waited for termination")
	require.Zero(t, s.Stats().Queued)
}

func TestStopDropsDueTasksThatHaveNotStarted(t *testing.T) {
	s, _ := newManual(t, 1)
	g := newTaskGate(t)
	running := g.Start(t, s, g.Task)
	waiting, err := s.Submit(nop) // due now, but the only worker is busy
	require.NoError(t, err)

	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop(context.Background()) }()
	// The stop removes the waiting task at once; the running one holds
	// the stop until it returns.
	require.ErrorIs(t, waiting.Wait(testCtx(t)), scheduler.ErrCanceled)
	g.Open()
	err = recv(t, stopped)
	var se *scheduler.StopError
	require.ErrorAs(t, err, &se)
	requireFutures(t, []scheduler.ScheduledFuture{waiting}, se.Dropped)
	require.NoError(t, se.Err)
	require.NoError(t, running.Wait(testCtx(t)))
}

func TestStopLetsRunsInProgressFinish(t *testing.T) {
	s, _ := newManual(t, 2)
	g := newTaskGate(t)
	running := g.Start(t, s, g.Stubborn)
	beat, err := s.ScheduleAtFixedRate(func(context.Context) error { return nil }, time.Hour, time.Hour)
	require.NoError(t, err)

	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop(testCtx(t)) }()
	// Removed at once, before the run in progress ends.
	require.ErrorIs(t, beat.Wait(testCtx(t)), scheduler.ErrCanceled)
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned %v while a run was in progress", err)
	default:
	}
	_, err = s.Submit(nop)
	require.ErrorIs(t, err, scheduler.ErrRejected, "no new work once stopping")

	g.Open()
	require.NoError(t, recv(t, stopped), "the run finished in time and no one-shot was dropped")
	require.NoError(t, running.Wait(testCtx(t)))
	require.True(t, s.IsTerminated())
}

func TestStopCancelsRunsInProgressWhenItsContextEnds(t *testing.T) {
	s, _ := newManual(t, 1)
	g := newTaskGate(t)
	running := g.Start(t, s, g.Task) // returns when its ctx is canceled
	periodicStarted := make(chan struct{})
	periodic, err := s.ScheduleWithFixedDelay(func(ctx context.Context) error {
		close(periodicStarted)
		<-ctx.Done()
		return nil
	}, 0, time.Hour)
	require.NoError(t, err)
	queued, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.Stop(ctx)
	var se *scheduler.StopError
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, context.Canceled)
	// The periodic task never started: the one worker was busy.
	requireFutures(t, []scheduler.ScheduledFuture{queued}, se.Dropped)
	requireCanceled(t, periodic)
	requireOpen(t, periodicStarted, "a task queued at the stop must never start")

	// The run's ctx was canceled: it returns, and the scheduler ends.
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	require.NoError(t, running.Wait(testCtx(t)))
	require.Contains(t, err.Error(), "runs still in progress when the context ended")
}

func TestStopReturnsWhenItsContextEndsEvenIfARunIgnoresIt(t *testing.T) {
	s, _ := newManual(t, 1)
	g := newTaskGate(t)
	g.Start(t, s, g.Stubborn)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Stop(ctx)
	require.ErrorIs(t, err, context.Canceled)
	var se *scheduler.StopError
	require.True(t, errors.As(err, &se))
	require.Empty(t, se.Dropped)
	require.False(t, s.IsTerminated(), "the stubborn run is still going")

	g.Open()
	require.NoError(t, s.AwaitTermination(testCtx(t)))
}
