package scheduler_test

// Shutdown, with the JDK behaviours of sections G and H of the STPE
// reference (shutdown.go). ShutdownNow and termination have files of their
// own (shutdown_now_test.go, shutdown_termination_test.go).
//
// Time is a schedulertest.ManualClock: clk.Advance(d) followed by
// s.AwaitIdle(ctx) leaves everything that came due done. Tasks that must be
// running at some point block on a taskGate; nothing here sleeps on real
// time. The few real-time timeouts (waitLimit) only turn a hang into a
// failure.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

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
