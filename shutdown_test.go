package scheduler_test

// Lifecycle, policies, hooks and statistics: R-11 (Shutdown), R-12
// (ShutdownNow), R-13 (termination), R-15 (rejection), R-16 (hooks and the
// decorator) and R-17 (Stats and pool sizing), with the JDK behaviours of
// sections G to L of the STPE reference that the core implements.
//
// Time is a schedulertest.ManualClock: clk.Advance(d) followed by
// s.AwaitIdle(ctx) leaves everything that came due done. Tasks that must be
// running at some point block on a taskGate; nothing here sleeps on real
// time. The few real-time timeouts (waitLimit) only turn a hang into a
// failure.

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
	"github.com/stretchr/testify/require"
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
// R-11 Shutdown (JDK G-1 to G-5, I-4)

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
			_, err := s.Submit(gate.Stubborn) // ignores the interrupt: the scheduler stays stopping
			require.NoError(t, err)
			gate.WaitStarted(t)
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
				// JDK I-3: a rejection changes neither the queue nor the task count.
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
			_, err := s.Submit(gate.Task) // keeps the only worker busy
			require.NoError(t, err)
			gate.WaitStarted(t)

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
			// JDK G-1: a one-shot task already due is kept even so.
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
				// JDK A-5: setting it true again resurrects nothing.
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

func TestLifeShutdownPolicyAccessors(t *testing.T) {
	cases := []struct {
		name                      string
		opts                      []scheduler.Option
		wantContinue, wantDelay   bool
		setContinue, setDelay     *bool
		afterContinue, afterDelay bool
	}{
		{name: "JDK defaults", wantContinue: false, wantDelay: true, afterContinue: false, afterDelay: true},
		{
			name: "options",
			opts: []scheduler.Option{
				scheduler.WithContinueExistingPeriodicTasksAfterShutdown(true),
				scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false),
			},
			wantContinue: true, wantDelay: false, afterContinue: true, afterDelay: false,
		},
		{
			name:         "setters",
			wantContinue: false, wantDelay: true,
			setContinue: ptr(true), setDelay: ptr(false),
			afterContinue: true, afterDelay: false,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newManual(t, 1, tc.opts...)
			require.Equal(t, tc.wantContinue, s.ContinueExistingPeriodicTasksAfterShutdownPolicy())
			require.Equal(t, tc.wantDelay, s.ExecuteExistingDelayedTasksAfterShutdownPolicy())
			if tc.setContinue != nil {
				s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(*tc.setContinue)
			}
			if tc.setDelay != nil {
				s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(*tc.setDelay)
			}
			require.Equal(t, tc.afterContinue, s.ContinueExistingPeriodicTasksAfterShutdownPolicy())
			require.Equal(t, tc.afterDelay, s.ExecuteExistingDelayedTasksAfterShutdownPolicy())
		})
	}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

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
// R-12 ShutdownNow (JDK H-1 to H-5)

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
	running, err := s.Submit(gate.Task)
	require.NoError(t, err)
	gate.WaitStarted(t) // the only worker is busy: everything below stays queued

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
	running, err := s.Submit(gate.Task)
	require.NoError(t, err)
	gate.WaitStarted(t)
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
// R-13 termination (JDK G-5, H-5 to H-8, K-3)

func TestLifeAwaitTerminationReturnsCtxErrUntilTerminated(t *testing.T) {
	s, _ := newManual(t, 1)
	gate := newTaskGate(t)
	_, err := s.Submit(gate.Task)
	require.NoError(t, err)
	gate.WaitStarted(t)
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
	// JDK H-6: once terminated it answers at once, even with a done ctx.
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
		_, err := s.Submit(gate.Task)
		require.NoError(t, err)
		gate.WaitStarted(t)
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
		_, err := s.Submit(gate.Stubborn)
		require.NoError(t, err)
		gate.WaitStarted(t)
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
	f, err := s.Submit(gate.Stubborn)
	require.NoError(t, err)
	gate.WaitStarted(t)

	s.ShutdownNow()
	require.Equal(t, context.Canceled, s.AwaitTermination(doneCtx()))
	require.False(t, s.IsTerminated(), "JDK H-5: the pool waits for a task that ignores the interrupt")

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
				// JDK H-7: every action that may enable termination tries it.
				require.True(t, s.IsTerminated(), "terminated at once")
				require.Zero(t, time.Since(start))
				require.Zero(t, runs.Load())
				require.Zero(t, s.Stats().PoolSize, "JDK H-8")
				require.NoError(t, s.AwaitTermination(t.Context()))
			})
		})
	}
}

// ---------------------------------------------------------------------------
// R-15 rejection (JDK I-1 to I-4)

func TestLifeAbortPolicy(t *testing.T) {
	reasons := []struct {
		name  string
		enter func(s *scheduler.Scheduler)
	}{
		{"after Shutdown", func(s *scheduler.Scheduler) { s.Shutdown() }},
		{"queue full", func(*scheduler.Scheduler) {}},
	}
	for _, r := range reasons {
		t.Run(r.name, func(t *testing.T) {
			// AbortPolicy behind a recorder, to see the future it drops.
			rec := &recordingPolicy{then: scheduler.AbortPolicy.Rejected}
			s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(rec))
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			r.enter(s)

			var runs atomic.Int32
			f, err := s.Schedule(countRuns(&runs), time.Minute)
			require.ErrorIs(t, err, scheduler.ErrRejected)
			require.Nil(t, f)
			require.Len(t, rec.got.get(), 1)
			requireCanceled(t, rec.got.get()[0])
			st := s.Stats()
			require.Equal(t, uint64(1), st.Rejected)
			require.Equal(t, 1, st.Queued)

			advance(t, clk, s, 2*time.Hour)
			require.Zero(t, runs.Load())
		})
	}
	t.Run("the default policy is Abort", func(t *testing.T) {
		s, _ := newManual(t, 1, scheduler.WithMaxQueueSize(1))
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		_, err = s.Schedule(nop, time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
		s.SetRejectionPolicy(nil) // nil means Abort
		_, err = s.Schedule(nop, time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
		require.Equal(t, uint64(2), s.Stats().Rejected)
	})
}

func TestLifeCallerRunsPolicy(t *testing.T) {
	newFull := func(t *testing.T, opts ...scheduler.Option) (*scheduler.Scheduler, *schedulertest.ManualClock, scheduler.ScheduledFuture) {
		opts = append([]scheduler.Option{scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(scheduler.CallerRunsPolicy)}, opts...)
		s, clk := newManual(t, 1, opts...)
		filler, err := s.Schedule(nop, time.Hour, scheduler.WithName("filler"))
		require.NoError(t, err)
		return s, clk, filler
	}
	t.Run("a one-shot task runs in the caller's goroutine, hooks included", func(t *testing.T) {
		var beforeOn atomic.Uint64
		s, _, _ := newFull(t, scheduler.WithHooks(scheduler.Hooks{
			BeforeExecute: func(scheduler.ScheduledFuture) { beforeOn.Store(goroutineID()) },
		}))
		me := goroutineID()
		// ranOn is written by the task and read below without synchronization:
		// right only if the task ran in this goroutine (the race detector
		// would report any other goroutine).
		var ranOn uint64
		f, err := s.Schedule(func(context.Context) error { ranOn = goroutineID(); return nil }, time.Hour)
		require.NoError(t, err)
		require.Equal(t, me, ranOn, "ran before Schedule returned, in the caller")
		require.Equal(t, me, beforeOn.Load())
		require.True(t, f.IsDone())
		require.False(t, f.IsCanceled())
		require.NoError(t, f.Wait(doneCtx()))
		st := s.Stats()
		require.Equal(t, uint64(1), st.Rejected)
		require.Equal(t, uint64(1), st.Completed)
		require.Equal(t, 1, st.Queued)
	})
	t.Run("a callable's result is ready when the call returns", func(t *testing.T) {
		s, _, _ := newFull(t)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 7, nil }, time.Hour)
		require.NoError(t, err)
		v, err := f.Get(doneCtx())
		require.NoError(t, err)
		require.Equal(t, 7, v)
	})
	t.Run("a periodic task runs once in the caller, then is queued", func(t *testing.T) {
		s, clk, filler := newFull(t)
		me := goroutineID()
		ranOn := make(chan uint64, 4)
		p, err := s.ScheduleAtFixedRate(func(context.Context) error {
			ranOn <- goroutineID()
			return nil
		}, 0, 10*time.Minute, scheduler.WithName("p"))
		require.NoError(t, err)
		require.Equal(t, me, recv(t, ranOn, "the first run"))
		require.False(t, p.IsDone())
		requireFutures(t, []scheduler.ScheduledFuture{p, filler}, s.Queue()) // beyond the max: a re-queue is never rejected

		advance(t, clk, s, 10*time.Minute)
		require.NotEqual(t, me, recv(t, ranOn, "the second run"), "later runs are on a worker")
	})
	t.Run("after Shutdown it discards", func(t *testing.T) {
		s, clk := newManual(t, 1, scheduler.WithRejectionPolicy(scheduler.CallerRunsPolicy))
		keeper, err := s.Schedule(nop, time.Hour, scheduler.WithName("keeper"))
		require.NoError(t, err)
		s.Shutdown()

		var runs atomic.Int32
		f, err := s.Schedule(countRuns(&runs), 0)
		require.NoError(t, err)
		requireCanceled(t, f)
		require.Zero(t, runs.Load())
		requireFutures(t, []scheduler.ScheduledFuture{keeper}, s.Queue())
		require.Equal(t, uint64(1), s.Stats().Rejected)
		advance(t, clk, s, time.Hour)
		require.Zero(t, runs.Load())
	})
}

func TestLifeDiscardPolicy(t *testing.T) {
	reasons := []struct {
		name  string
		enter func(s *scheduler.Scheduler)
	}{
		{"after Shutdown", func(s *scheduler.Scheduler) { s.Shutdown() }},
		{"queue full", func(*scheduler.Scheduler) {}},
	}
	for _, r := range reasons {
		t.Run(r.name, func(t *testing.T) {
			s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(scheduler.DiscardPolicy))
			var keeperRuns, runs atomic.Int32
			_, err := s.Schedule(countRuns(&keeperRuns), time.Hour)
			require.NoError(t, err)
			r.enter(s)

			f, err := s.Schedule(countRuns(&runs), time.Minute)
			require.NoError(t, err, "Discard drops silently")
			requireCanceled(t, f)
			st := s.Stats()
			require.Equal(t, uint64(1), st.Rejected)
			require.Equal(t, uint64(1), st.Canceled)

			advance(t, clk, s, 2*time.Hour)
			require.Zero(t, runs.Load())
			require.Equal(t, int32(1), keeperRuns.Load())
		})
	}
}

func TestLifeDiscardOldestPolicy(t *testing.T) {
	t.Run("queue full: the earliest-due task is canceled, the new one queued", func(t *testing.T) {
		s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(2), scheduler.WithRejectionPolicy(scheduler.DiscardOldestPolicy))
		var runs [3]atomic.Int32
		later, err := s.Schedule(countRuns(&runs[0]), 2*time.Hour, scheduler.WithName("2h"))
		require.NoError(t, err)
		earliest, err := s.Schedule(countRuns(&runs[1]), time.Hour, scheduler.WithName("1h, submitted second"))
		require.NoError(t, err)

		f, err := s.Schedule(countRuns(&runs[2]), 3*time.Hour, scheduler.WithName("3h"))
		require.NoError(t, err)
		require.False(t, f.IsDone())
		requireCanceled(t, earliest)
		requireFutures(t, []scheduler.ScheduledFuture{later, f}, s.Queue())
		require.Equal(t, uint64(1), s.Stats().Rejected)

		advance(t, clk, s, 3*time.Hour)
		require.Equal(t, [3]int32{1, 0, 1}, [3]int32{runs[0].Load(), runs[1].Load(), runs[2].Load()})
	})
	t.Run("after Shutdown it discards and cancels nothing queued", func(t *testing.T) {
		s, clk := newManual(t, 1, scheduler.WithRejectionPolicy(scheduler.DiscardOldestPolicy))
		var keeperRuns, runs atomic.Int32
		keeper, err := s.Schedule(countRuns(&keeperRuns), time.Hour, scheduler.WithName("keeper"))
		require.NoError(t, err)
		s.Shutdown()

		f, err := s.Schedule(countRuns(&runs), time.Minute)
		require.NoError(t, err)
		requireCanceled(t, f)
		require.False(t, keeper.IsDone())
		requireFutures(t, []scheduler.ScheduledFuture{keeper}, s.Queue())

		advance(t, clk, s, time.Hour)
		require.NoError(t, s.AwaitTermination(testCtx(t)))
		require.Equal(t, int32(1), keeperRuns.Load())
		require.Zero(t, runs.Load())
	})
}

func TestLifeCustomRejectionPolicy(t *testing.T) {
	t.Run("called once per rejection with the future the call returns", func(t *testing.T) {
		pol := &recordingPolicy{} // leaves every future undone
		s, clk := newManual(t, 1, scheduler.WithRejectionPolicy(pol))
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		s.Shutdown()

		var runs atomic.Int32
		for i, e := range entryPoints[:7] { // the entry points that return the submission's outcome
			t.Run(e.name, func(t *testing.T) {
				me := goroutineID()
				f, err := e.submit(s, countRuns(&runs))
				require.NoError(t, err)
				seen := pol.got.get()
				require.Len(t, seen, i+1, "exactly one call per rejected submission")
				if f != nil {
					require.True(t, f == seen[i], "the policy got the future the call returned")
				}
				// The policy left it pending; the scheduler cancels it.
				requireCanceled(t, seen[i])
				require.Equal(t, me, pol.callers.get()[i], "called in the submitting goroutine")
			})
		}
		require.Equal(t, uint64(7), s.Stats().Rejected)
		advance(t, clk, s, 2*time.Hour)
		require.Zero(t, runs.Load())
	})
	t.Run("the policy's error is the call's error", func(t *testing.T) {
		errFull := errors.New("full, try later")
		pol := &recordingPolicy{then: func(*scheduler.Scheduler, scheduler.ScheduledFuture) error { return errFull }}
		s, _ := newManual(t, 1, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(pol))
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
		require.ErrorIs(t, err, errFull)
		require.Nil(t, f)
		require.Len(t, pol.got.get(), 1)
		requireCanceled(t, pol.got.get()[0])
	})
	t.Run("a panicking policy fails the submission, nothing crashes", func(t *testing.T) {
		pol := &recordingPolicy{then: func(*scheduler.Scheduler, scheduler.ScheduledFuture) error { panic("policy boom") }}
		s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(pol))
		var runs atomic.Int32
		_, err := s.Schedule(countRuns(&runs), time.Hour)
		require.NoError(t, err)

		f, err := s.Schedule(countRuns(&runs), time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "policy boom", pe.Value)
		require.Nil(t, f)
		requireCanceled(t, pol.got.get()[0])
		require.Equal(t, uint64(1), s.Stats().Rejected)

		advance(t, clk, s, time.Hour)
		require.Equal(t, int32(1), runs.Load(), "the scheduler carries on")
		g, err := s.Submit(countRuns(&runs))
		require.NoError(t, err)
		require.NoError(t, g.Wait(testCtx(t)))
	})
}

func TestLifeMaxQueueSize(t *testing.T) {
	t.Run("running tasks do not count", func(t *testing.T) {
		s, _ := newManual(t, 1, scheduler.WithMaxQueueSize(1))
		gate := newTaskGate(t)
		_, err := s.Submit(gate.Task)
		require.NoError(t, err)
		gate.WaitStarted(t)

		_, err = s.Schedule(nop, time.Hour)
		require.NoError(t, err, "the queue is empty while the only task runs")
		_, err = s.Schedule(nop, time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
	})
	t.Run("periodic re-queues are never rejected", func(t *testing.T) {
		s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(1))
		var runs atomic.Int32
		var fromRun error
		p, err := s.ScheduleAtFixedRate(func(context.Context) error {
			if runs.Add(1) == 1 {
				// The periodic task is off the queue while it runs, so this
				// fills it; the re-queue then goes beyond the max.
				_, fromRun = s.Schedule(nop, time.Hour)
			}
			return nil
		}, time.Minute, time.Minute)
		require.NoError(t, err)

		for i := int32(1); i <= 5; i++ {
			advance(t, clk, s, time.Minute)
			require.Equal(t, i, runs.Load())
		}
		require.NoError(t, fromRun)
		require.False(t, p.IsDone())
		require.Equal(t, 2, s.Stats().Queued)
		_, err = s.Schedule(nop, time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
		require.Equal(t, uint64(1), s.Stats().Rejected, "only the new submission was rejected")
	})
	for _, n := range []int{0, -1} {
		t.Run("n="+strconv.Itoa(n)+" is unbounded", func(t *testing.T) {
			s, _ := newManual(t, 1, scheduler.WithMaxQueueSize(n))
			for range 200 {
				_, err := s.Schedule(nop, time.Hour)
				require.NoError(t, err)
			}
			require.Equal(t, 200, s.Stats().Queued)
		})
	}
}

// ---------------------------------------------------------------------------
// R-16 hooks and the decorator (JDK K-1 to K-3, D-7, J-5)

func TestLifeHooksRunAroundEveryRun(t *testing.T) {
	var (
		mu        sync.Mutex
		events    []string
		afterErrs = map[string][]error{}
		hooked    = map[string][]scheduler.ScheduledFuture{}
	)
	record := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	hooks := scheduler.Hooks{
		BeforeExecute: func(f scheduler.ScheduledFuture) {
			record("before " + f.Name())
			mu.Lock()
			hooked[f.Name()] = append(hooked[f.Name()], f)
			mu.Unlock()
		},
		AfterExecute: func(f scheduler.ScheduledFuture, err error) {
			record("after " + f.Name())
			mu.Lock()
			afterErrs[f.Name()] = append(afterErrs[f.Name()], err)
			hooked[f.Name()] = append(hooked[f.Name()], f)
			mu.Unlock()
		},
	}
	s, clk := newManual(t, 1, scheduler.WithHooks(hooks))
	errBoom := errors.New("boom")
	body := func(name string, err error) scheduler.Task {
		return func(context.Context) error {
			record("run " + name)
			if name == "panics" {
				panic("task boom")
			}
			return err
		}
	}
	futures := map[string]scheduler.ScheduledFuture{}
	var err error
	futures["ok"], err = s.Schedule(body("ok", nil), 10*time.Second, scheduler.WithName("ok"))
	require.NoError(t, err)
	futures["fails"], err = s.Schedule(body("fails", errBoom), 20*time.Second, scheduler.WithName("fails"))
	require.NoError(t, err)
	futures["panics"], err = s.Schedule(body("panics", nil), 30*time.Second, scheduler.WithName("panics"))
	require.NoError(t, err)
	futures["p"], err = s.ScheduleAtFixedRate(body("p", nil), time.Minute, time.Minute, scheduler.WithName("p"))
	require.NoError(t, err)
	futures["callable"], err = asScheduledFuture(scheduler.ScheduleCallable(s, asCallable(body("callable", nil)),
		3*time.Minute+time.Second, scheduler.WithName("callable")))
	require.NoError(t, err)

	advance(t, clk, s, 3*time.Minute+time.Second) // one worker: everything in due order

	mu.Lock()
	defer mu.Unlock()
	var want []string
	for _, name := range []string{"ok", "fails", "panics", "p", "p", "p", "callable"} {
		want = append(want, "before "+name, "run "+name, "after "+name)
	}
	require.Equal(t, want, events, "BeforeExecute, the run, AfterExecute: around every run")

	require.Equal(t, []error{nil}, afterErrs["ok"])
	require.Len(t, afterErrs["fails"], 1)
	require.ErrorIs(t, afterErrs["fails"][0], errBoom)
	require.Len(t, afterErrs["panics"], 1)
	var pe *scheduler.PanicError
	require.ErrorAs(t, afterErrs["panics"][0], &pe)
	require.Equal(t, "task boom", pe.Value)
	require.Equal(t, []error{nil, nil, nil}, afterErrs["p"])
	require.Equal(t, []error{nil}, afterErrs["callable"])
	require.Len(t, hooked["callable"], 2)
	for name, fs := range hooked {
		for _, f := range fs {
			require.Truef(t, f == futures[name], "%s: the hooks got the future the call returned", name)
		}
	}
}

func TestLifeBeforeExecutePanic(t *testing.T) {
	t.Run("one-shot", func(t *testing.T) {
		var afterMu sync.Mutex
		var afterCalls []string
		hooks := scheduler.Hooks{
			BeforeExecute: func(f scheduler.ScheduledFuture) {
				if f.Name() == "bad" {
					panic("before boom")
				}
			},
			AfterExecute: func(f scheduler.ScheduledFuture, _ error) {
				afterMu.Lock()
				afterCalls = append(afterCalls, f.Name())
				afterMu.Unlock()
			},
		}
		s, _ := newManual(t, 1, scheduler.WithHooks(hooks))
		var badRan atomic.Bool
		bad, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) {
			badRan.Store(true)
			return 1, nil
		}, scheduler.WithName("bad"))
		require.NoError(t, err)
		_, err = bad.Get(testCtx(t))
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe, "the future completes with the hook's panic")
		require.Equal(t, "before boom", pe.Value)
		require.False(t, badRan.Load(), "the task did not run")

		good, err := s.Submit(nop, scheduler.WithName("good"))
		require.NoError(t, err)
		require.NoError(t, good.Wait(testCtx(t)))
		require.NoError(t, s.AwaitIdle(testCtx(t)))

		afterMu.Lock()
		require.Equal(t, []string{"good"}, afterCalls, "AfterExecute is not called for the task whose BeforeExecute panicked")
		afterMu.Unlock()
		st := s.Stats()
		require.Equal(t, 1, st.PoolSize, "the worker survived")
		require.Equal(t, 1, st.LargestPoolSize, "and was not replaced")
		require.Equal(t, uint64(1), st.Failed)
		require.Equal(t, uint64(1), st.Panicked)
	})
	t.Run("periodic: the panic stops later runs", func(t *testing.T) {
		var before atomic.Int32
		hooks := scheduler.Hooks{BeforeExecute: func(scheduler.ScheduledFuture) {
			if before.Add(1) == 2 {
				panic("second before")
			}
		}}
		s, clk := newManual(t, 1, scheduler.WithHooks(hooks))
		var runs atomic.Int32
		p, err := s.ScheduleAtFixedRate(countRuns(&runs), time.Minute, time.Minute)
		require.NoError(t, err)
		advance(t, clk, s, time.Minute)
		advance(t, clk, s, time.Minute)
		var pe *scheduler.PanicError
		require.ErrorAs(t, p.Wait(testCtx(t)), &pe)
		require.False(t, p.IsCanceled())
		advance(t, clk, s, 5*time.Minute)
		require.Equal(t, int32(1), runs.Load())
		require.Equal(t, int32(2), before.Load())
	})
}

func TestLifeAfterExecutePanicKeepsTheOutcome(t *testing.T) {
	s, clk := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
		AfterExecute: func(scheduler.ScheduledFuture, error) { panic("after boom") },
	}))
	v, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	got, err := v.Get(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 7, got)

	errX := errors.New("x")
	f, err := s.Submit(func(context.Context) error { return errX })
	require.NoError(t, err)
	err = f.Wait(testCtx(t))
	require.ErrorIs(t, err, errX)
	var pe *scheduler.PanicError
	require.False(t, errors.As(err, &pe), "the hook's panic does not replace the run's error")

	var runs atomic.Int32
	p, err := s.ScheduleAtFixedRate(countRuns(&runs), time.Minute, time.Minute)
	require.NoError(t, err)
	for range 3 {
		advance(t, clk, s, time.Minute)
	}
	require.Equal(t, int32(3), runs.Load(), "the periodic task keeps its schedule")
	require.False(t, p.IsDone())
	st := s.Stats()
	require.Equal(t, 1, st.PoolSize)
	require.Equal(t, 1, st.LargestPoolSize)
	require.Equal(t, uint64(1), st.Failed, "only errX failed")
}

func TestLifeNoHooksForDiscardedCanceledTask(t *testing.T) {
	var calls atomic.Int32
	s, clk := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
		BeforeExecute: func(scheduler.ScheduledFuture) { calls.Add(1) },
		AfterExecute:  func(scheduler.ScheduledFuture, error) { calls.Add(1) },
	}))
	var runs atomic.Int32
	f, err := s.Schedule(countRuns(&runs), time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	require.Equal(t, 1, s.Stats().Queued)

	advance(t, clk, s, time.Hour) // a worker takes it off the queue and discards it
	require.Zero(t, s.Stats().Queued)
	require.Zero(t, calls.Load())
	require.Zero(t, runs.Load())
	// Not a run, so not counted (the JDK's getCompletedTaskCount would count it, L-4).
	require.Zero(t, s.Stats().Completed)
}

func TestLifeDecorator(t *testing.T) {
	t.Run("wraps every submission once, callables included", func(t *testing.T) {
		var calls, wrapped atomic.Int32
		deco := func(task scheduler.Task) scheduler.Task {
			calls.Add(1)
			return func(ctx context.Context) error {
				wrapped.Add(1)
				return task(ctx)
			}
		}
		s, _ := newManual(t, 2, scheduler.WithDecorator(deco))
		for i, e := range entryPoints {
			_, err := e.submit(s, nop)
			require.NoError(t, err, e.name)
			require.Equal(t, int32(i+1), calls.Load(), "%s: one decorator call", e.name)
		}
		// Invoke* waited for their callables, which ran through the wrapper.
		require.GreaterOrEqual(t, wrapped.Load(), int32(2))
	})
	t.Run("a periodic task is wrapped once, every run goes through the wrapper", func(t *testing.T) {
		var calls, wrapped atomic.Int32
		s, clk := newManual(t, 1, scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
			calls.Add(1)
			return func(ctx context.Context) error { wrapped.Add(1); return task(ctx) }
		}))
		var runs atomic.Int32
		_, err := s.ScheduleWithFixedDelay(countRuns(&runs), time.Minute, time.Minute)
		require.NoError(t, err)
		for range 3 {
			advance(t, clk, s, time.Minute)
		}
		require.Equal(t, int32(1), calls.Load())
		require.Equal(t, int32(3), wrapped.Load())
		require.Equal(t, int32(3), runs.Load())
	})
	t.Run("a callable's result passes through the wrapper", func(t *testing.T) {
		var wrapped atomic.Int32
		s, _ := newManual(t, 1, scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
			return func(ctx context.Context) error { wrapped.Add(1); return task(ctx) }
		}))
		f, err := scheduler.SubmitCallable(s, func(context.Context) (string, error) { return "v", nil })
		require.NoError(t, err)
		v, err := f.Get(testCtx(t))
		require.NoError(t, err)
		require.Equal(t, "v", v)
		require.Equal(t, int32(1), wrapped.Load())
	})
	for _, e := range entryPoints {
		t.Run("a panicking decorator fails "+e.name+" and queues nothing", func(t *testing.T) {
			s, _ := newManual(t, 1, scheduler.WithDecorator(func(scheduler.Task) scheduler.Task { panic("deco boom") }))
			f, err := e.submit(s, nop)
			require.ErrorIs(t, err, scheduler.ErrRejected)
			var pe *scheduler.PanicError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, "deco boom", pe.Value)
			require.Nil(t, f)
			st := s.Stats()
			require.Zero(t, st.Queued)
			require.Zero(t, st.PoolSize, "no worker was started")
			require.Equal(t, uint64(1), st.Rejected)
		})
	}
	t.Run("a decorator returning nil is an invalid argument", func(t *testing.T) {
		s, _ := newManual(t, 1, scheduler.WithDecorator(func(scheduler.Task) scheduler.Task { return nil }))
		for _, e := range entryPoints {
			_, err := e.submit(s, nop)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument, e.name)
		}
		st := s.Stats()
		require.Zero(t, st.Queued)
		require.Zero(t, st.PoolSize)
	})
}

// ---------------------------------------------------------------------------
// R-17 Stats and pool sizing (JDK L-1 to L-5, A-8, A-9, J-1, J-2)

func TestLifeStatsRunCounters(t *testing.T) {
	s, clk := newManual(t, 1)
	errBoom := errors.New("boom")
	var n atomic.Int32
	p, err := s.ScheduleAtFixedRate(func(context.Context) error {
		switch n.Add(1) {
		case 2:
			return errBoom
		case 3:
			panic("p boom")
		}
		return nil
	}, time.Minute, time.Minute, scheduler.ContinueOnError())
	require.NoError(t, err)
	oneShots := []scheduler.Task{
		nop,
		func(context.Context) error { return errBoom },
		func(context.Context) error { panic("boom") },
	}
	for _, task := range oneShots {
		_, err := s.Submit(task)
		require.NoError(t, err)
	}
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	for range 4 {
		advance(t, clk, s, time.Minute)
	}
	require.Equal(t, int32(4), n.Load())
	require.False(t, p.IsDone())

	st := s.Stats()
	require.Equal(t, uint64(7), st.Completed, "every run counts, each periodic run and failed runs too")
	require.Equal(t, uint64(4), st.Failed, "runs that returned an error or panicked")
	require.Equal(t, uint64(2), st.Panicked, "the runs that panicked")
	require.Equal(t, 0, st.Active)
	require.Equal(t, 1, st.Queued)
	require.Equal(t, uint64(8), st.TaskCount)
}

func TestLifeStatsCanceledCountsEveryPath(t *testing.T) {
	cases := []struct {
		name string
		opts []scheduler.Option
		act  func(t *testing.T, s *scheduler.Scheduler)
		want uint64
	}{
		{"Cancel of a queued task counts once", nil, func(t *testing.T, s *scheduler.Scheduler) {
			f, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			require.True(t, f.Cancel(false))
			require.False(t, f.Cancel(true))
		}, 1},
		{"Cancel after completion does not count", nil, func(t *testing.T, s *scheduler.Scheduler) {
			f, err := s.Submit(nop)
			require.NoError(t, err)
			require.NoError(t, f.Wait(testCtx(t)))
			require.False(t, f.Cancel(true))
		}, 0},
		{"Cancel of a running task", nil, func(t *testing.T, s *scheduler.Scheduler) {
			gate := newTaskGate(t)
			f, err := s.Submit(gate.Task)
			require.NoError(t, err)
			gate.WaitStarted(t)
			require.True(t, f.Cancel(true))
			require.NoError(t, s.AwaitIdle(testCtx(t)))
		}, 1},
		{"Shutdown's policies", []scheduler.Option{scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false)},
			func(t *testing.T, s *scheduler.Scheduler) {
				_, err := s.Schedule(nop, time.Hour)
				require.NoError(t, err)
				_, err = s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
				require.NoError(t, err)
				s.Shutdown()
				require.NoError(t, s.AwaitTermination(testCtx(t)))
			}, 2},
		{"a periodic run ending after Shutdown", nil, func(t *testing.T, s *scheduler.Scheduler) {
			gate := newTaskGate(t)
			f, err := s.ScheduleAtFixedRate(gate.Task, 0, time.Minute)
			require.NoError(t, err)
			gate.WaitStarted(t)
			s.Shutdown()
			gate.Open()
			require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
		}, 1},
		{"a periodic run ending after ShutdownNow", nil, func(t *testing.T, s *scheduler.Scheduler) {
			gate := newTaskGate(t)
			f, err := s.ScheduleWithFixedDelay(gate.Task, 0, time.Minute)
			require.NoError(t, err)
			gate.WaitStarted(t)
			s.ShutdownNow()
			require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
		}, 1},
		{"AbortPolicy's dropped future", []scheduler.Option{scheduler.WithMaxQueueSize(1)}, func(t *testing.T, s *scheduler.Scheduler) {
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			_, err = s.Schedule(nop, time.Hour)
			require.ErrorIs(t, err, scheduler.ErrRejected)
		}, 1},
		{"DiscardPolicy", []scheduler.Option{scheduler.WithRejectionPolicy(scheduler.DiscardPolicy)}, func(t *testing.T, s *scheduler.Scheduler) {
			s.Shutdown()
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
		}, 1},
		{"DiscardOldestPolicy's victim", []scheduler.Option{scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(scheduler.DiscardOldestPolicy)},
			func(t *testing.T, s *scheduler.Scheduler) {
				_, err := s.Schedule(nop, time.Hour)
				require.NoError(t, err)
				_, err = s.Schedule(nop, 2*time.Hour)
				require.NoError(t, err)
			}, 1},
		{"ShutdownNow cancels none of the queued tasks it returns", nil, func(t *testing.T, s *scheduler.Scheduler) {
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			require.Len(t, s.ShutdownNow(), 1)
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newManual(t, 1, tc.opts...)
			tc.act(t, s)
			require.Equal(t, tc.want, s.Stats().Canceled)
		})
	}
}

func TestLifeStatsQueuedIncludesCanceledTasks(t *testing.T) {
	s, _ := newManual(t, 1)
	f, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	_, err = s.Schedule(nop, 2*time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	st := s.Stats()
	require.Equal(t, 2, st.Queued, "canceled, not yet removed")
	require.Equal(t, uint64(2), st.TaskCount)
	s.Purge()
	st = s.Stats()
	require.Equal(t, 1, st.Queued)
	require.Equal(t, uint64(1), st.TaskCount)
}

func TestLifeStatsTaskCount(t *testing.T) {
	s, clk := newManual(t, 2)
	for range 2 {
		_, err := s.Submit(nop)
		require.NoError(t, err)
	}
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	gate := newTaskGate(t)
	for range 2 {
		_, err := s.Submit(gate.Task)
		require.NoError(t, err)
		gate.WaitStarted(t)
	}
	for range 3 {
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
	}

	st := s.Stats()
	require.Equal(t, [3]int{2, 2, 3}, [3]int{int(st.Completed), st.Active, st.Queued}, "Completed, Active, Queued while two tasks run")
	require.Equal(t, uint64(7), st.TaskCount)
	require.Equal(t, st.Completed+uint64(st.Active)+uint64(st.Queued), st.TaskCount)

	gate.Open()
	advance(t, clk, s, time.Hour)
	st = s.Stats()
	require.Equal(t, [3]int{7, 0, 0}, [3]int{int(st.Completed), st.Active, st.Queued}, "Completed, Active, Queued at quiescence")
	require.Equal(t, uint64(7), st.TaskCount)
}

func TestLifeStatsLargestPoolSize(t *testing.T) {
	s, _ := newManual(t, 3)
	gate := newTaskGate(t)
	for i := 1; i <= 3; i++ {
		_, err := s.Submit(gate.Task)
		require.NoError(t, err)
		gate.WaitStarted(t)
		st := s.Stats()
		require.Equal(t, i, st.PoolSize, "JDK J-1: one worker per submission until the pool is full")
		require.Equal(t, i, st.LargestPoolSize)
	}
	require.NoError(t, s.SetCorePoolSize(1))
	gate.Open()
	// Each busy worker re-checks the pool size as its run ends, in the same
	// step that stops counting it as active, so once idle only one is left.
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	st := s.Stats()
	require.Equal(t, 1, st.PoolSize)
	require.Equal(t, 1, st.CorePoolSize)
	require.Equal(t, 3, st.LargestPoolSize, "a high-water mark")

	s.Shutdown()
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	st = s.Stats()
	require.Zero(t, st.PoolSize)
	require.Equal(t, 3, st.LargestPoolSize, "survives termination")
}

func TestLifeSetCorePoolSize(t *testing.T) {
	for _, n := range []int{0, -1} {
		t.Run("n="+strconv.Itoa(n)+" is an invalid argument", func(t *testing.T) {
			s, _ := newManual(t, 2)
			require.ErrorIs(t, s.SetCorePoolSize(n), scheduler.ErrInvalidArgument)
			require.Equal(t, 2, s.Stats().CorePoolSize)
		})
	}
	t.Run("growing starts a worker per queued task, up to the new size", func(t *testing.T) {
		s, _ := newManual(t, 1)
		gate := newTaskGate(t)
		_, err := s.Submit(gate.Task)
		require.NoError(t, err)
		gate.WaitStarted(t)
		var queued []scheduler.ScheduledFuture
		for range 2 {
			f, err := s.Submit(nop)
			require.NoError(t, err)
			queued = append(queued, f)
		}
		require.Equal(t, 1, s.Stats().PoolSize)

		require.NoError(t, s.SetCorePoolSize(5))
		st := s.Stats()
		require.Equal(t, 5, st.CorePoolSize)
		require.Equal(t, 3, st.PoolSize, "JDK A-8: min(delta, queued) new workers")
		for _, f := range queued {
			require.NoError(t, f.Wait(testCtx(t)), "run by the new workers while the first is still busy")
		}
	})
	t.Run("growing with nothing queued starts no worker", func(t *testing.T) {
		s, _ := newManual(t, 1)
		require.Equal(t, 1, s.PrestartAllCoreWorkers())
		require.NoError(t, s.SetCorePoolSize(4))
		require.Equal(t, 1, s.Stats().PoolSize)
		require.Equal(t, 3, s.PrestartAllCoreWorkers())
	})
	t.Run("shrinking: AwaitIdle returns once the extra workers exited", func(t *testing.T) {
		s, clk := newManual(t, 4)
		var runs atomic.Int32
		_, err := s.ScheduleAtFixedRate(countRuns(&runs), time.Minute, time.Minute)
		require.NoError(t, err)
		require.Equal(t, 3, s.PrestartAllCoreWorkers())
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Equal(t, 4, s.Stats().PoolSize)

		require.NoError(t, s.SetCorePoolSize(1))
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Equal(t, 1, s.Stats().PoolSize, "the woken extra workers are gone")
		advance(t, clk, s, 3*time.Minute)
		require.Equal(t, int32(3), runs.Load(), "the remaining worker runs the task")
	})
	t.Run("shrinking lets idle workers exit", func(t *testing.T) {
		// The same seen from synctest.Wait, which knows when every
		// goroutine is blocked.
		synctest.Test(t, func(t *testing.T) {
			s, err := scheduler.New(3, scheduler.WithLogger(slog.New(slog.DiscardHandler)))
			require.NoError(t, err)
			var runs atomic.Int32
			_, err = s.Schedule(countRuns(&runs), time.Hour) // a leader waits for it
			require.NoError(t, err)
			require.Equal(t, 2, s.PrestartAllCoreWorkers())
			synctest.Wait()
			require.Equal(t, 3, s.Stats().PoolSize)

			require.NoError(t, s.SetCorePoolSize(1))
			synctest.Wait()
			require.Equal(t, 1, s.Stats().PoolSize)

			time.Sleep(time.Hour) // virtual time in the bubble
			synctest.Wait()
			require.Equal(t, int32(1), runs.Load(), "the remaining worker still runs the queue")
			s.Shutdown()
			require.NoError(t, s.AwaitTermination(t.Context()))
		})
	})
}

func TestLifePrestartAllCoreWorkers(t *testing.T) {
	t.Run("starts every worker, then none", func(t *testing.T) {
		s, _ := newManual(t, 3)
		require.Zero(t, s.Stats().PoolSize, "workers start lazily")
		require.Equal(t, 3, s.PrestartAllCoreWorkers())
		require.Zero(t, s.PrestartAllCoreWorkers())
		st := s.Stats()
		require.Equal(t, 3, st.PoolSize)
		require.Equal(t, 3, st.LargestPoolSize)
	})
	t.Run("counts only the workers it started", func(t *testing.T) {
		s, _ := newManual(t, 3)
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.Equal(t, 1, s.Stats().PoolSize)
		require.Equal(t, 2, s.PrestartAllCoreWorkers())
	})
	t.Run("starts none after Shutdown", func(t *testing.T) {
		s, _ := newManual(t, 3)
		s.Shutdown()
		require.Zero(t, s.PrestartAllCoreWorkers())
	})
}

func TestLifeInterruptDoesNotLeakIntoNextTask(t *testing.T) {
	// JDK J-6: an interrupt delivered to one task does not reach the next
	// task on the same worker.
	s, _ := newManual(t, 1)
	gate := newTaskGate(t)
	first, err := s.Submit(gate.Task)
	require.NoError(t, err)
	gate.WaitStarted(t)
	next, err := scheduler.SubmitCallable(s, func(ctx context.Context) (error, error) { return ctx.Err(), nil })
	require.NoError(t, err)

	require.True(t, first.Cancel(true))
	ctxErr, err := next.Get(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, ctxErr, "the next task's ctx is live")
	require.Equal(t, 1, s.Stats().LargestPoolSize, "both ran on the one worker")
}
