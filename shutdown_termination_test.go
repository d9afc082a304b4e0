package scheduler_test

// Termination (shutdown.go): AwaitTermination, the Terminated hook, the
// run-state predicates, and the tasks that delay or allow termination.
//
// Time is a schedulertest.ManualClock; running tasks block on a taskGate.

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestLifeAwaitTerminationReturnsCtxErrUntilTerminated(t *testing.T) {
	s, _ := newManual(t, 1)
	gate := newTaskGate(t)
	gate.Start(t, s, gate.Task)
	s.Shutdown()

	require.Equal(t, context.Canceled, s.AwaitTermination(doneCtx()))
	past, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	require.Equal(t, context.DeadlineExceeded, s.AwaitTermination(past))

	// A waiter already blocked returns when its ctx is canceled.
	ctx, cancelWaiter := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- s.AwaitTermination(ctx) }()
	cancelWaiter()
	require.Equal(t, context.Canceled, recv(t, res, "AwaitTermination to return"))
	require.False(t, s.IsTerminated())

	gate.Open()
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	// As in the JDK, once terminated it answers at once, even with a done ctx.
	require.NoError(t, s.AwaitTermination(doneCtx()))
}

func TestLifeTerminatedHookRunsOnceBeforeAwaitTerminationReturns(t *testing.T) {
	// In a bubble, synctest.Wait lets every goroutine that could return
	// from AwaitTermination do so while the hook is held.
	synctest.Test(t, func(t *testing.T) {
		var (
			runs                      atomic.Int32
			sawTerminating, sawTermed atomic.Bool
			entered, release          = make(chan struct{}), make(chan struct{})
			s                         *scheduler.Scheduler
		)
		hooks := scheduler.Hooks{Terminated: func() {
			sawTerminating.Store(s.IsTerminating())
			sawTermed.Store(s.IsTerminated())
			close(entered)
			<-release
			runs.Add(1)
		}}
		s, err := scheduler.New(2, scheduler.WithHooks(hooks), scheduler.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		taskRelease := make(chan struct{})
		_, err = s.Submit(func(context.Context) error { <-taskRelease; return nil })
		require.NoError(t, err)
		s.Shutdown()

		type result struct {
			err  error
			runs int32
		}
		results := make(chan result, 3)
		for range 3 {
			go func() {
				err := s.AwaitTermination(context.Background())
				results <- result{err, runs.Load()}
			}()
		}
		synctest.Wait()
		require.Empty(t, results, "the task still runs")

		close(taskRelease)
		<-entered
		synctest.Wait()
		require.Empty(t, results, "AwaitTermination does not return while the hook runs")
		require.Equal(t, context.Canceled, s.AwaitTermination(doneCtx()))
		require.True(t, sawTerminating.Load(), "the hook runs while the scheduler is still terminating")
		require.False(t, sawTermed.Load())

		close(release)
		for range 3 {
			r := <-results
			require.NoError(t, r.err)
			require.Equal(t, int32(1), r.runs, "the hook ran before AwaitTermination returned")
		}
		s.Shutdown()
		s.ShutdownNow()
		require.Equal(t, int32(1), runs.Load(), "exactly once")
	})
}

func TestLifeRunStatePredicates(t *testing.T) {
	t.Run("Shutdown", func(t *testing.T) {
		s, _ := newManual(t, 1)
		requireRunState(t, s, false, false, false)
		gate := newTaskGate(t)
		gate.Start(t, s, gate.Task)
		requireRunState(t, s, false, false, false)
		s.Shutdown()
		requireRunState(t, s, true, true, false)
		gate.Open()
		require.NoError(t, s.AwaitTermination(testCtx(t)))
		requireRunState(t, s, true, false, true)
	})
	t.Run("ShutdownNow", func(t *testing.T) {
		s, _ := newManual(t, 1)
		gate := newTaskGate(t)
		gate.Start(t, s, gate.Stubborn)
		s.ShutdownNow()
		requireRunState(t, s, true, true, false)
		gate.Open()
		require.NoError(t, s.AwaitTermination(testCtx(t)))
		requireRunState(t, s, true, false, true)
	})
	t.Run("a scheduler that never ran a task terminates at once", func(t *testing.T) {
		var terminated atomic.Int32
		s, _ := newManual(t, 4, scheduler.WithHooks(scheduler.Hooks{Terminated: func() { terminated.Add(1) }}))
		s.Shutdown()
		requireRunState(t, s, true, false, true)
		require.Equal(t, int32(1), terminated.Load())
	})
}

func TestLifeTaskThatBlocksUntilInterrupted(t *testing.T) {
	var terminated atomic.Int32
	s, _ := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{Terminated: func() { terminated.Add(1) }}))
	blocked := make(chan struct{})
	f, err := s.Submit(func(ctx context.Context) error {
		close(blocked)
		<-ctx.Done()
		return ctx.Err()
	})
	require.NoError(t, err)
	recv(t, blocked, "the task to block")

	s.Shutdown()
	// The orderly shutdown waits for it forever: AwaitTermination gives up
	// when its ctx does.
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- s.AwaitTermination(ctx) }()
	cancel()
	require.Equal(t, context.Canceled, recv(t, res, "AwaitTermination to give up"))
	requireRunState(t, s, true, true, false)

	require.Empty(t, s.ShutdownNow())
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	require.ErrorIs(t, f.Wait(testCtx(t)), context.Canceled)
	require.Equal(t, int32(1), terminated.Load())
}

func TestLifeTaskIgnoringInterruptDelaysTermination(t *testing.T) {
	s, _ := newManual(t, 1)
	gate := newTaskGate(t)
	f := gate.Start(t, s, gate.Stubborn)

	s.ShutdownNow()
	require.Equal(t, context.Canceled, s.AwaitTermination(doneCtx()))
	require.False(t, s.IsTerminated(), "as in the JDK, the pool waits for a task that ignores the interrupt")

	gate.Open()
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	require.NoError(t, f.Wait(testCtx(t)))
}

func TestLifeTerminationWhenTheQueueEmpties(t *testing.T) {
	cases := []struct {
		name string
		opts []scheduler.Option
		act  func(t *testing.T, s *scheduler.Scheduler, f scheduler.ScheduledFuture)
	}{
		{"Remove", nil, func(t *testing.T, s *scheduler.Scheduler, f scheduler.ScheduledFuture) {
			require.True(t, s.Remove(f))
		}},
		{"Cancel under remove-on-cancel", []scheduler.Option{scheduler.WithRemoveOnCancel(true)},
			func(t *testing.T, _ *scheduler.Scheduler, f scheduler.ScheduledFuture) {
				require.True(t, f.Cancel(false))
			}},
		{"Purge of a task canceled after Shutdown", nil, func(t *testing.T, s *scheduler.Scheduler, f scheduler.ScheduledFuture) {
			require.True(t, f.Cancel(false))
			synctest.Wait()
			require.False(t, s.IsTerminated(), "still queued until purged")
			s.Purge()
		}},
		{"execute-delayed policy set false", nil, func(t *testing.T, s *scheduler.Scheduler, _ scheduler.ScheduledFuture) {
			s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(false)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// In a bubble, synctest.Wait settles the workers after each step,
			// and the scheduler's time does not move unless the test sleeps.
			synctest.Test(t, func(t *testing.T) {
				s, err := scheduler.New(2, append([]scheduler.Option{scheduler.WithLogger(slog.New(slog.DiscardHandler))}, tc.opts...)...)
				require.NoError(t, err)
				start := time.Now()
				var runs atomic.Int32
				f, err := s.Schedule(countRuns(&runs), time.Hour)
				require.NoError(t, err)
				s.Shutdown()
				synctest.Wait()
				require.False(t, s.IsTerminated())

				tc.act(t, s, f)
				synctest.Wait()
				// As in the JDK, every action that may enable termination tries it.
				require.True(t, s.IsTerminated(), "terminated at once")
				require.Zero(t, time.Since(start))
				require.Zero(t, runs.Load())
				require.Zero(t, s.Stats().PoolSize, "as in the JDK")
				require.NoError(t, s.AwaitTermination(t.Context()))
			})
		})
	}
}
