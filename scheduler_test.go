package scheduler_test

// The Scheduler's own calls (scheduler.go): New, argument checks and huge
// delays. Ordering and Remove, Purge and the remove-on-cancel policy are in
// scheduler_order_test.go and scheduler_remove_test.go.
//
// Everything timed runs on a manual clock: a test moves time with
// clk.Advance and waits with s.AwaitIdle for the work that came due.
// Where a test needs a task to be "running", the task blocks on a channel.

import (
	"context"
	"fmt"
	"math"
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
