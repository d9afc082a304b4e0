package scheduler_test

// The Scheduler's own calls (scheduler.go):
// New, argument checks, huge delays, ordering, and Remove, Purge and the
// remove-on-cancel policy.
//
// Everything timed runs on a manual clock: a test moves time with
// clk.Advance and waits with s.AwaitIdle for the work that came due.
// Where a test needs a task to be "running", the task blocks on a channel.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// hundredYears is "a huge positive delay" for the overflow tests.
const hundredYears = 100 * 365 * 24 * time.Hour

// ---------------------------------------------------------------------------
// New, lazy workers.

func TestNewRejectsPoolSizeBelowOne(t *testing.T) {
	for _, n := range []int{0, -1, math.MinInt} {
		t.Run(fmt.Sprintf("poolSize=%d", n), func(t *testing.T) {
			s, err := scheduler.New(n)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, s)
		})
	}
}

func TestNewStartsNoGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []scheduler.Option
	}{
		{"system clock", nil},
		{"manual clock", []scheduler.Option{scheduler.WithClock(schedulertest.NewManualClock(epoch))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			s, err := scheduler.New(8, tc.opts...)
			require.NoError(t, err)
			shutdownAtEnd(t, s)
			st := s.Stats()
			require.Zero(t, st.PoolSize)
			require.Zero(t, st.LargestPoolSize)
			require.Equal(t, 8, st.CorePoolSize)
			goleak.VerifyNone(t, before)
		})
	}
}

// ---------------------------------------------------------------------------
// Argument checks, delays clamped to now, ContinueOnError on one-shots.

func TestSchedulingRejectsInvalidArguments(t *testing.T) {
	type testCase struct {
		name string
		call func(s *scheduler.Scheduler) error
	}
	cases := []testCase{
		{"Schedule/nil task", func(s *scheduler.Scheduler) error {
			_, err := s.Schedule(nil, time.Second)
			return err
		}},
		{"ScheduleAtFixedRate/nil task", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleAtFixedRate(nil, time.Second, time.Second)
			return err
		}},
		{"ScheduleWithFixedDelay/nil task", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleWithFixedDelay(nil, time.Second, time.Second)
			return err
		}},
		{"Execute/nil task", func(s *scheduler.Scheduler) error {
			return s.Execute(nil)
		}},
		{"Submit/nil task", func(s *scheduler.Scheduler) error {
			_, err := s.Submit(nil)
			return err
		}},
		{"ScheduleCallable/nil callable", func(s *scheduler.Scheduler) error {
			_, err := scheduler.ScheduleCallable[int](s, nil, time.Second)
			return err
		}},
		{"SubmitCallable/nil callable", func(s *scheduler.Scheduler) error {
			_, err := scheduler.SubmitCallable[int](s, nil)
			return err
		}},
	}
	for _, p := range []time.Duration{0, -1, -time.Hour, math.MinInt64} {
		cases = append(cases,
			testCase{fmt.Sprintf("ScheduleAtFixedRate/period=%v", p), func(s *scheduler.Scheduler) error {
				_, err := s.ScheduleAtFixedRate(nop, time.Second, p)
				return err
			}},
			testCase{fmt.Sprintf("ScheduleWithFixedDelay/delay=%v", p), func(s *scheduler.Scheduler) error {
				_, err := s.ScheduleWithFixedDelay(nop, time.Second, p)
				return err
			}},
		)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newManual(t, 1)
			require.ErrorIs(t, tc.call(s), scheduler.ErrInvalidArgument)
			st := s.Stats()
			require.Zero(t, st.Queued, "nothing is queued")
			require.Zero(t, st.TaskCount)
			require.Zero(t, st.PoolSize, "no worker started")
			require.Empty(t, s.Queue())
		})
	}
}

func TestNegativeDelayRunsOnceNow(t *testing.T) {
	const period = time.Second
	cases := []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
	}{
		{"one-shot", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.Schedule(task, -10*period)
		}},
		{"fixed rate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, -10*period, period)
		}},
		{"fixed delay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, -10*period, period)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newManual(t, 1)
			var runs atomic.Int32
			f, err := tc.schedule(s, func(context.Context) error { runs.Add(1); return nil })
			require.NoError(t, err)
			idle(t, s)
			require.EqualValues(t, 1, runs.Load(), "one run now, not a catch-up burst")
			if !f.IsPeriodic() {
				require.True(t, f.IsDone())
				return
			}
			require.Equal(t, period, f.Delay(), "the next run is one period after now")
			advance(t, clk, s, period)
			require.EqualValues(t, 2, runs.Load())
		})
	}
}

func TestContinueOnErrorIsIgnoredForOneShotTasks(t *testing.T) {
	t.Run("task", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var runs atomic.Int32
		f, err := s.Submit(func(context.Context) error { runs.Add(1); return errBoom }, scheduler.ContinueOnError())
		require.NoError(t, err)
		idle(t, s)
		require.False(t, f.IsPeriodic())
		require.True(t, f.IsDone())
		require.False(t, f.IsCanceled())
		require.ErrorIs(t, f.Wait(testCtx(t)), errBoom)
		advance(t, clk, s, time.Hour)
		require.EqualValues(t, 1, runs.Load())
		require.Zero(t, s.Stats().Queued)
	})
	t.Run("callable", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 1, errBoom },
			scheduler.ContinueOnError())
		require.NoError(t, err)
		idle(t, s)
		v, err := f.Get(testCtx(t))
		require.ErrorIs(t, err, errBoom)
		require.Zero(t, v)
		require.Zero(t, s.Stats().Queued)
	})
}

// ---------------------------------------------------------------------------
// Huge delays.

func TestHugeDelayDoesNotOverflow(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    time.Duration
	}{
		{"math.MaxInt64", math.MaxInt64},
		{"time.Duration(math.MaxInt64)", time.Duration(math.MaxInt64)},
		{"math.MaxInt64-1", math.MaxInt64 - 1},
		{"overflowFree threshold", math.MaxInt64 >> 1},
		{"just below the threshold", math.MaxInt64>>1 - 1},
		{"math.MaxInt64-1h", math.MaxInt64 - time.Hour},
	} {
		d := tc.d
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newManual(t, 1)
			// Move the clock away from the scheduler's origin, so that
			// now+delay wraps past math.MaxInt64.
			clk.Advance(time.Hour)
			var farRan, nearRan atomic.Bool
			var far scheduler.ScheduledFuture
			require.NotPanics(t, func() {
				var err error
				far, err = s.Schedule(func(context.Context) error { farRan.Store(true); return nil }, d)
				require.NoError(t, err)
			})
			require.Greater(t, far.Delay(), hundredYears)

			near, err := s.Schedule(func(context.Context) error { nearRan.Store(true); return nil }, time.Second)
			require.NoError(t, err)
			requireFutures(t, []scheduler.ScheduledFuture{near, far}, s.Queue(), "the near task is the head")

			advance(t, clk, s, time.Second)
			require.True(t, nearRan.Load(), "the near task ran first")
			require.False(t, farRan.Load())
			advance(t, clk, s, 1000*time.Hour)
			require.False(t, farRan.Load())
			require.Greater(t, far.Delay(), hundredYears)
		})
	}
}

func TestHugePeriodDoesNotOverflow(t *testing.T) {
	cases := []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
		runs     int32 // runs once scheduled
	}{
		{"fixed rate/period=MaxInt64", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, 0, math.MaxInt64)
		}, 1},
		{"fixed delay/delay=MaxInt64", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, 0, math.MaxInt64)
		}, 1},
		{"fixed rate/initialDelay=MaxInt64", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, math.MaxInt64, time.Second)
		}, 0},
		{"fixed delay/initialDelay=MaxInt64", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, math.MaxInt64, time.Second)
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newManual(t, 1)
			clk.Advance(time.Hour)
			var runs atomic.Int32
			var f scheduler.ScheduledFuture
			require.NotPanics(t, func() {
				var err error
				f, err = tc.schedule(s, func(context.Context) error { runs.Add(1); return nil })
				require.NoError(t, err)
				idle(t, s)
			})
			require.Equal(t, tc.runs, runs.Load())
			require.Greater(t, f.Delay(), hundredYears)

			var nearRan atomic.Bool
			_, err := s.Schedule(func(context.Context) error { nearRan.Store(true); return nil }, time.Second)
			require.NoError(t, err)
			advance(t, clk, s, time.Second)
			require.True(t, nearRan.Load(), "a near task still runs")
			require.Equal(t, tc.runs, runs.Load(), "the far run stays far")
		})
	}
}

// An overdue head and a huge new delay: without the JDK's overflowFree the
// new task's trigger time would be more than MaxInt64 after the head's, the
// comparison by subtraction would wrap, and the far task would sort first and
// block the overdue one.
func TestHugeDelayQueuesBehindOverdueTask(t *testing.T) {
	s, clk := newManual(t, 1)
	busy := newTaskGate(t)
	busy.Start(t, s, busy.Task) // the only worker is busy

	var order recorder[string]
	overdue, err := s.Submit(func(context.Context) error { order.add("overdue"); return nil })
	require.NoError(t, err)
	clk.Advance(time.Hour) // the queued task is now an hour overdue
	far, err := s.Schedule(func(context.Context) error { order.add("far"); return nil }, math.MaxInt64)
	require.NoError(t, err)
	requireFutures(t, []scheduler.ScheduledFuture{overdue, far}, s.Queue())
	require.Greater(t, far.Delay(), hundredYears)

	busy.Open()
	idle(t, s)
	require.Equal(t, []string{"overdue"}, order.get())
}

// JDK-8051859 (testScheduleWithFixedDelay_overflow): a fixed-delay task with
// a huge delay submits an immediate task from inside its run; its re-queue
// must not sort before that task and starve it. The run moves the clock so
// that the immediate task is overdue when the periodic one is re-queued.
func TestFixedDelayHugeDelayDoesNotStarveTaskItSubmits(t *testing.T) {
	s, clk := newManual(t, 1)
	var periodicRuns atomic.Int32
	immediateRan := make(chan struct{})
	var submitErr error
	_, err := s.ScheduleWithFixedDelay(func(context.Context) error {
		if periodicRuns.Add(1) == 1 {
			_, submitErr = s.Submit(func(context.Context) error { close(immediateRan); return nil })
			clk.Advance(time.Second)
		}
		return nil
	}, 0, math.MaxInt64)
	require.NoError(t, err)
	idle(t, s)
	require.NoError(t, submitErr)
	requireClosed(t, immediateRan, "the immediate task submitted by the periodic run was starved")
	require.EqualValues(t, 1, periodicRuns.Load())
}

// ---------------------------------------------------------------------------
// Ordering.

func TestTasksDueAtSameInstantRunInSubmissionOrder(t *testing.T) {
	const n = 40
	t.Run("same delay", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var order recorder[int]
		for i := range n {
			var err error
			switch i % 3 {
			case 0:
				_, err = s.Schedule(func(context.Context) error { order.add(i); return nil }, time.Second)
			case 1:
				_, err = scheduler.ScheduleCallable(s, func(context.Context) (int, error) { order.add(i); return i, nil }, time.Second)
			case 2:
				// A periodic task's first run takes its turn too.
				_, err = s.ScheduleAtFixedRate(func(context.Context) error { order.add(i); return nil }, time.Second, time.Hour)
			}
			require.NoError(t, err)
		}
		advance(t, clk, s, time.Second)
		require.Equal(t, indices(n), order.get())
	})
	t.Run("submitted while the worker is busy", func(t *testing.T) {
		s, _ := newManual(t, 1)
		busy := newTaskGate(t)
		busy.Start(t, s, busy.Stubborn)
		var order recorder[int]
		for i := range n {
			require.NoError(t, s.Execute(func(context.Context) error { order.add(i); return nil }))
		}
		busy.Open()
		idle(t, s)
		require.Equal(t, indices(n), order.get())
	})
}

// indices returns 0, 1, ..., n-1.
func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestPoolOfOneRunsInDueThenSubmissionOrder(t *testing.T) {
	s, clk := newManual(t, 1)
	delays := []time.Duration{5, 3, 9, 3, 1, 5, 9, 1, 3, 7, 2, 7, 1}
	var order recorder[int]
	for i, d := range delays {
		_, err := s.Schedule(func(context.Context) error { order.add(i); return nil }, d*time.Second)
		require.NoError(t, err)
	}
	want := indices(len(delays))
	slices.SortStableFunc(want, func(a, b int) int { return int(delays[a] - delays[b]) })

	advance(t, clk, s, 10*time.Second)
	require.Equal(t, want, order.get())
}

// ---------------------------------------------------------------------------
// Remove-on-cancel, Purge, Remove.

func TestCanceledTaskStaysQueuedUntilDueByDefault(t *testing.T) {
	s, clk := newManual(t, 1)
	require.False(t, s.RemoveOnCancelPolicy(), "the JDK default")
	var ran atomic.Bool
	f, err := s.Schedule(func(context.Context) error { ran.Store(true); return nil }, time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	requireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
	require.Equal(t, 1, s.Stats().Queued)

	advance(t, clk, s, time.Hour-1)
	require.Equal(t, 1, s.Stats().Queued)
	advance(t, clk, s, 1)
	require.Zero(t, s.Stats().Queued, "discarded once due")
	require.Empty(t, s.Queue())
	require.False(t, ran.Load())
}

func TestRemoveOnCancelRemovesCanceledTaskAtOnce(t *testing.T) {
	for _, how := range []string{"option", "setter"} {
		for _, kind := range scheduleKinds {
			t.Run(how+"/"+kind.name, func(t *testing.T) {
				var opts []scheduler.Option
				if how == "option" {
					opts = append(opts, scheduler.WithRemoveOnCancel(true))
				}
				s, clk := newManual(t, 1, opts...)
				if how == "setter" {
					s.SetRemoveOnCancelPolicy(true)
				}
				require.True(t, s.RemoveOnCancelPolicy())
				before, err := s.Schedule(nop, time.Minute)
				require.NoError(t, err)
				var ran atomic.Bool
				f, err := kind.schedule(s, func(context.Context) error { ran.Store(true); return nil })
				require.NoError(t, err)
				after, err := s.Schedule(nop, 2*time.Hour)
				require.NoError(t, err)

				require.True(t, f.Cancel(false))
				requireFutures(t, []scheduler.ScheduledFuture{before, after}, s.Queue())
				require.Equal(t, 2, s.Stats().Queued)
				advance(t, clk, s, 90*time.Minute)
				require.False(t, ran.Load())
			})
		}
	}
}

func TestSetRemoveOnCancelPolicyDoesNotRemoveEarlierCancels(t *testing.T) {
	s, _ := newManual(t, 1)
	f, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	s.SetRemoveOnCancelPolicy(true)
	requireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue(), "JDK: the setter only stores the flag")
	s.Purge()
	require.Empty(t, s.Queue())
	s.SetRemoveOnCancelPolicy(false)
	require.False(t, s.RemoveOnCancelPolicy())
}

func TestPurgeRemovesOnlyCanceledTasks(t *testing.T) {
	s, clk := newManual(t, 1)
	var futures []scheduler.ScheduledFuture
	for i := range 6 {
		f, err := s.Schedule(nop, time.Duration(i+1)*time.Minute)
		require.NoError(t, err)
		futures = append(futures, f)
	}
	periodic, err := s.ScheduleAtFixedRate(nop, 10*time.Minute, time.Minute)
	require.NoError(t, err)
	canceledPeriodic, err := s.ScheduleWithFixedDelay(nop, 11*time.Minute, time.Minute)
	require.NoError(t, err)
	for _, i := range []int{0, 2, 3} {
		require.True(t, futures[i].Cancel(false))
	}
	require.True(t, canceledPeriodic.Cancel(true))
	require.Len(t, s.Queue(), 8)

	s.Purge()
	requireFutures(t, []scheduler.ScheduledFuture{futures[1], futures[4], futures[5], periodic}, s.Queue())
	require.Equal(t, 4, s.Stats().Queued)
	for _, f := range []scheduler.ScheduledFuture{futures[1], futures[4], futures[5], periodic} {
		require.False(t, f.IsDone())
	}
	advance(t, clk, s, 10*time.Minute)
	for _, i := range []int{1, 4, 5} {
		require.NoError(t, futures[i].Wait(testCtx(t)), "a kept task still runs")
	}
}

func TestRemoveTakesQueuedTaskOutWithoutCanceling(t *testing.T) {
	t.Run("queued", func(t *testing.T) {
		for _, kind := range scheduleKinds {
			t.Run(kind.name, func(t *testing.T) {
				s, clk := newManual(t, 1)
				var ran atomic.Bool
				f, err := kind.schedule(s, func(context.Context) error { ran.Store(true); return nil })
				require.NoError(t, err)
				other, err := s.Schedule(nop, 2*time.Hour)
				require.NoError(t, err)

				require.True(t, s.Remove(f))
				require.False(t, f.IsDone(), "Remove does not cancel")
				require.False(t, f.IsCanceled())
				requireFutures(t, []scheduler.ScheduledFuture{other}, s.Queue())
				require.False(t, s.Remove(f), "a second Remove finds nothing")

				advance(t, clk, s, 3*time.Hour)
				require.False(t, ran.Load())
				require.True(t, f.Cancel(false), "the removed task can still be canceled")
			})
		}
	})
	t.Run("running", func(t *testing.T) {
		s, _ := newManual(t, 1)
		running := newTaskGate(t)
		f := running.Start(t, s, running.Stubborn)
		require.False(t, s.Remove(f))
		running.Open()
		require.NoError(t, f.Wait(testCtx(t)))
	})
	t.Run("done", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := s.Submit(nop)
		require.NoError(t, err)
		idle(t, s)
		require.False(t, s.Remove(f))
	})
	t.Run("another scheduler's", func(t *testing.T) {
		s, _ := newManual(t, 1)
		other, _ := newManual(t, 1)
		f, err := other.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.False(t, s.Remove(f))
		requireFutures(t, []scheduler.ScheduledFuture{f}, other.Queue())
		require.False(t, f.IsDone())
	})
	t.Run("nil", func(t *testing.T) {
		s, _ := newManual(t, 1)
		require.False(t, s.Remove(nil))
	})
}
