package scheduler_test

// Shutdown, ShutdownNow and termination, with the JDK
// behaviours of sections G and H of the STPE reference (shutdown.go).
//
// Time is a schedulertest.ManualClock: clk.Advance(d) followed by
// s.AwaitIdle(ctx) leaves everything that came due done. Tasks that must be
// running at some point block on a taskGate; nothing here sleeps on real
// time. The few real-time timeouts (waitLimit) only turn a hang into a
// failure.

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// requireRunState checks the three run-state predicates at once.
func requireRunState(t *testing.T, s *scheduler.Scheduler, shutdown, terminating, terminated bool) {
	t.Helper()
	require.Equal(t,
		[3]bool{shutdown, terminating, terminated},
		[3]bool{s.IsShutdown(), s.IsTerminating(), s.IsTerminated()},
		"IsShutdown, IsTerminating, IsTerminated")
}

// ---------------------------------------------------------------------------
// Shutdown.

func TestLifeShutdownRejectsEveryEntryPoint(t *testing.T) {
	// enter brings s to the phase and returns what lets it settle.
	phases := []struct {
		name  string
		enter func(t *testing.T, s *scheduler.Scheduler) (leave func())
	}{
		{"while shutting down", func(t *testing.T, s *scheduler.Scheduler) func() {
			_, err := s.Schedule(nop, time.Hour) // keeps it from terminating
			require.NoError(t, err)
			s.Shutdown()
			requireRunState(t, s, true, true, false)
			return func() {}
		}},
		{"after termination", func(t *testing.T, s *scheduler.Scheduler) func() {
			s.Shutdown()
			require.NoError(t, s.AwaitTermination(testCtx(t)))
			return func() {}
		}},
		{"while stopping", func(t *testing.T, s *scheduler.Scheduler) func() {
			gate := newTaskGate(t)
			gate.Start(t, s, gate.Stubborn) // ignores the interrupt: the scheduler stays stopping
			s.ShutdownNow()
			requireRunState(t, s, true, true, false)
			return gate.Open
		}},
		{"after ShutdownNow", func(t *testing.T, s *scheduler.Scheduler) func() {
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			s.ShutdownNow()
			require.NoError(t, s.AwaitTermination(testCtx(t)))
			return func() {}
		}},
	}
	for _, ph := range phases {
		for _, e := range entryPoints {
			t.Run(ph.name+"/"+e.name, func(t *testing.T) {
				s, clk := newManual(t, 2)
				leave := ph.enter(t, s)
				before := s.Stats()
				var ran atomic.Int32

				f, err := e.submit(s, countRuns(&ran))
				require.ErrorIs(t, err, scheduler.ErrRejected)
				require.Nil(t, f, "AbortPolicy returns no future")

				after := s.Stats()
				require.Equal(t, before.Rejected+1, after.Rejected)
				// As in the JDK, a rejection changes neither the queue nor the task count.
				require.Equal(t, before.Queued, after.Queued)
				require.Equal(t, before.TaskCount, after.TaskCount)
				leave()
				advance(t, clk, s, 2*time.Hour)
				require.Zero(t, ran.Load(), "a rejected task never runs")
			})
		}
	}
}

func TestLifeShutdownRunsQueuedOneShotsAndCancelsPeriodics(t *testing.T) {
	s, clk := newManual(t, 2)
	var oneShotRuns, periodicRuns atomic.Int32
	a, err := s.Schedule(countRuns(&oneShotRuns), time.Hour, scheduler.WithName("a"))
	require.NoError(t, err)
	b, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 5, nil }, 2*time.Hour, scheduler.WithName("b"))
	require.NoError(t, err)
	rate, err := s.ScheduleAtFixedRate(countRuns(&periodicRuns), 30*time.Minute, 30*time.Minute)
	require.NoError(t, err)
	delay, err := s.ScheduleWithFixedDelay(countRuns(&periodicRuns), 10*time.Minute, 10*time.Minute)
	require.NoError(t, err)

	s.Shutdown()

	// Periodic tasks are removed and canceled at once (continue policy false).
	requireCanceled(t, rate)
	requireCanceled(t, delay)
	// One-shot tasks stay queued (execute-delayed policy true) and run when due.
	require.False(t, a.IsDone())
	require.False(t, b.IsDone())
	requireFutures(t, []scheduler.ScheduledFuture{a, b}, s.Queue())
	requireRunState(t, s, true, true, false)

	advance(t, clk, s, time.Hour)
	require.Equal(t, int32(1), oneShotRuns.Load())
	require.NoError(t, a.Wait(testCtx(t)))
	require.False(t, s.IsTerminated(), "b is still queued")

	advance(t, clk, s, time.Hour)
	v, err := b.Get(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 5, v)
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	require.Zero(t, periodicRuns.Load())
}

func TestLifeShutdownWithoutExecuteDelayedPolicy(t *testing.T) {
	cases := []struct {
		name          string
		opts          []scheduler.Option
		before, after bool // call the setter before / after Shutdown
	}{
		{name: "option", opts: []scheduler.Option{scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false)}},
		{name: "setter before Shutdown", before: true},
		{name: "setter after Shutdown applies at once", after: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newManual(t, 1, tc.opts...)
			gate := newTaskGate(t)
			gate.Start(t, s, gate.Task) // keeps the only worker busy

			var dueRuns, lateRuns atomic.Int32
			dueNow, err := s.Submit(countRuns(&dueRuns), scheduler.WithName("due now"))
			require.NoError(t, err)
			becameDue, err := s.Schedule(countRuns(&dueRuns), 10*time.Minute, scheduler.WithName("became due"))
			require.NoError(t, err)
			clk.Advance(10 * time.Minute) // no worker is free: it stays queued, now due
			notDue, err := s.Schedule(countRuns(&lateRuns), time.Hour, scheduler.WithName("not yet due"))
			require.NoError(t, err)

			if tc.before {
				s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(false)
			}
			s.Shutdown()
			if tc.after {
				require.False(t, notDue.IsDone(), "the default policy keeps it")
				s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(false)
			}

			require.False(t, s.ExecuteExistingDelayedTasksAfterShutdownPolicy())
			requireCanceled(t, notDue)
			// As in the JDK, a one-shot task already due is kept even so.
			requireFutures(t, []scheduler.ScheduledFuture{dueNow, becameDue}, s.Queue())
			require.False(t, dueNow.IsDone())
			require.False(t, becameDue.IsDone())

			gate.Open()
			require.NoError(t, s.AwaitTermination(testCtx(t)))
			require.Equal(t, int32(2), dueRuns.Load())
			require.Zero(t, lateRuns.Load())
		})
	}
}

func TestLifeShutdownRemovesCanceledQueuedTasks(t *testing.T) {
	t.Run("canceled ones leave, live ones stay", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var runs atomic.Int32
		a, err := s.Schedule(countRuns(&runs), time.Hour, scheduler.WithName("a"))
		require.NoError(t, err)
		b, err := s.Schedule(countRuns(&runs), 2*time.Hour, scheduler.WithName("b"))
		require.NoError(t, err)
		require.True(t, a.Cancel(false))
		require.Equal(t, 2, s.Stats().Queued, "remove-on-cancel is off: a stays queued")

		s.Shutdown()
		require.Equal(t, 1, s.Stats().Queued)
		requireFutures(t, []scheduler.ScheduledFuture{b}, s.Queue())

		advance(t, clk, s, 2*time.Hour)
		require.NoError(t, s.AwaitTermination(testCtx(t)))
		require.Equal(t, int32(1), runs.Load())
	})
	t.Run("a queue of canceled tasks does not delay termination", func(t *testing.T) {
		var terminated atomic.Int32
		s, _ := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{Terminated: func() { terminated.Add(1) }}))
		a, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.True(t, a.Cancel(false))

		s.Shutdown()
		require.NoError(t, s.AwaitTermination(testCtx(t)), "terminates without the clock moving")
		require.Equal(t, int32(1), terminated.Load())
	})
}

func TestLifeShutdownCancelsPeriodicRunInProgress(t *testing.T) {
	cases := []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
	}{
		{"fixed rate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, 0, time.Minute)
		}},
		{"fixed delay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, 0, time.Minute)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newManual(t, 1)
			gate := newTaskGate(t)
			f, err := tc.schedule(s, gate.Task)
			require.NoError(t, err)
			gate.WaitStarted(t)

			s.Shutdown()
			require.False(t, f.IsDone(), "Shutdown does not touch a running task")

			gate.Open()
			require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
			require.True(t, f.IsCanceled())
			require.NoError(t, s.AwaitTermination(testCtx(t)))
			clk.Advance(time.Hour)
			require.Empty(t, gate.started, "no run after the one in progress")
		})
	}
}

func TestLifeShutdownContinuePeriodicPolicy(t *testing.T) {
	ends := []struct {
		name string
		opts []scheduler.Option
		end  func(t *testing.T, s *scheduler.Scheduler, clk *schedulertest.ManualClock, f scheduler.ScheduledFuture)
	}{
		{"the policy set false after Shutdown cancels at once", nil,
			func(t *testing.T, s *scheduler.Scheduler, _ *schedulertest.ManualClock, f scheduler.ScheduledFuture) {
				s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(false)
				require.False(t, s.ContinueExistingPeriodicTasksAfterShutdownPolicy())
				requireCanceled(t, f)
				// As in the JDK, setting it true again resurrects nothing.
				s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(true)
				require.True(t, f.IsCanceled())
			}},
		{"Cancel under remove-on-cancel", []scheduler.Option{scheduler.WithRemoveOnCancel(true)},
			func(t *testing.T, _ *scheduler.Scheduler, _ *schedulertest.ManualClock, f scheduler.ScheduledFuture) {
				require.True(t, f.Cancel(false))
			}},
		{"Cancel, then the canceled task comes due", nil,
			func(t *testing.T, s *scheduler.Scheduler, clk *schedulertest.ManualClock, f scheduler.ScheduledFuture) {
				require.True(t, f.Cancel(false))
				require.False(t, s.IsTerminated(), "the canceled task is still queued")
				clk.Advance(time.Minute)
			}},
		{"ShutdownNow", nil,
			func(t *testing.T, s *scheduler.Scheduler, _ *schedulertest.ManualClock, f scheduler.ScheduledFuture) {
				requireFutures(t, []scheduler.ScheduledFuture{f}, s.ShutdownNow())
			}},
	}
	for _, tc := range ends {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]scheduler.Option{scheduler.WithContinueExistingPeriodicTasksAfterShutdown(true)}, tc.opts...)
			s, clk := newManual(t, 2, opts...)
			var runs atomic.Int32
			f, err := s.ScheduleAtFixedRate(countRuns(&runs), time.Minute, time.Minute, scheduler.WithName("p"))
			require.NoError(t, err)

			s.Shutdown()
			require.False(t, f.IsDone())
			for i := int32(1); i <= 3; i++ {
				advance(t, clk, s, time.Minute)
				require.Equal(t, i, runs.Load(), "the periodic task keeps running after Shutdown")
			}
			requireRunState(t, s, true, true, false)

			tc.end(t, s, clk, f)
			require.NoError(t, s.AwaitTermination(testCtx(t)))
			require.Equal(t, int32(3), runs.Load())
		})
	}
	t.Run("set by the setter before Shutdown", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var runs atomic.Int32
		f, err := s.ScheduleWithFixedDelay(countRuns(&runs), time.Minute, time.Minute)
		require.NoError(t, err)
		s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(true)
		s.Shutdown()
		advance(t, clk, s, time.Minute)
		require.Equal(t, int32(1), runs.Load())
		require.False(t, f.IsDone())
	})
}

func TestLifeShutdownTwiceIsHarmless(t *testing.T) {
	var terminated atomic.Int32
	s, clk := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{Terminated: func() { terminated.Add(1) }}))
	var runs atomic.Int32
	_, err := s.Schedule(countRuns(&runs), time.Hour)
	require.NoError(t, err)

	s.Shutdown()
	s.Shutdown()
	require.Equal(t, 1, s.Stats().Queued, "the second Shutdown drops nothing")
	requireRunState(t, s, true, true, false)

	advance(t, clk, s, time.Hour)
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	s.Shutdown()
	require.Equal(t, int32(1), runs.Load())
	require.Equal(t, int32(1), terminated.Load())
	requireRunState(t, s, true, false, true)
}

// ---------------------------------------------------------------------------
// ShutdownNow.

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

// ---------------------------------------------------------------------------
// Termination.

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
