package scheduler_test

// Behavioural tests for the core of the contract, SPEC.md R-1 to R-10 (with
// R-8a and R-8b): construction, argument checks, huge delays, ordering,
// periodic timing, failures and panics, futures, Invoke*, cancel and the
// remove-on-cancel policy. Shutdown, rejection, hooks and stats (R-11 and
// on) are tested in lifecycle_test.go.
//
// Everything timed runs on a manual clock: a test moves time with
// clk.Advance and waits with s.AwaitIdle for the work that came due.
// Where a test needs a task to be "running", the task blocks on a channel.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
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

func TestWorkersStartOnePerTaskUpToPoolSize(t *testing.T) {
	s, _ := newManual(t, 3)
	require.Zero(t, s.Stats().PoolSize)
	for i := 1; i <= 6; i++ {
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		st := s.Stats()
		require.Equal(t, min(i, 3), st.PoolSize, "after %d tasks", i)
		require.Equal(t, min(i, 3), st.LargestPoolSize, "after %d tasks", i)
	}
}

// ---------------------------------------------------------------------------
// argument checks, delays clamped to now, ContinueOnError on one-shots.

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
// huge delays.

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
	started := make(chan struct{})
	release, openRelease := gate(t)
	_, err := s.Submit(func(ctx context.Context) error {
		hold(ctx, started, release)
		return nil
	})
	require.NoError(t, err)
	recv(t, started) // the only worker is busy

	var order recorder[string]
	overdue, err := s.Submit(func(context.Context) error { order.add("overdue"); return nil })
	require.NoError(t, err)
	clk.Advance(time.Hour) // the queued task is now an hour overdue
	far, err := s.Schedule(func(context.Context) error { order.add("far"); return nil }, math.MaxInt64)
	require.NoError(t, err)
	requireFutures(t, []scheduler.ScheduledFuture{overdue, far}, s.Queue())
	require.Greater(t, far.Delay(), hundredYears)

	openRelease()
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
// ordering.

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
		started := make(chan struct{})
		release, openRelease := gate(t)
		_, err := s.Submit(func(context.Context) error { close(started); <-release; return nil })
		require.NoError(t, err)
		recv(t, started)
		var order recorder[int]
		for i := range n {
			require.NoError(t, s.Execute(func(context.Context) error { order.add(i); return nil }))
		}
		openRelease()
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
// periodic timing.

func TestFixedRateRunKIsDueAtInitialDelayPlusKPeriods(t *testing.T) {
	s, clk := newManual(t, 2)
	clk.Advance(7 * time.Second) // schedule at an instant other than the origin
	const initial, period = 3 * time.Second, 10 * time.Second
	var at recorder[time.Duration]
	f, err := s.ScheduleAtFixedRate(func(context.Context) error { at.add(since(clk)); return nil }, initial, period)
	require.NoError(t, err)
	require.Equal(t, initial, f.Delay())

	var want []time.Duration
	step := initial
	for k := range 6 {
		advance(t, clk, s, step-1)
		require.Len(t, at.get(), k, "run %d must not start a nanosecond early", k)
		advance(t, clk, s, 1)
		want = append(want, 7*time.Second+initial+time.Duration(k)*period)
		require.Equal(t, want, at.get())
		require.Equal(t, period, f.Delay())
		step = period
	}
}

func TestFixedRateCatchesUpAfterOverrun(t *testing.T) {
	s, clk := newManual(t, 1)
	const period = 10 * time.Second
	var at recorder[time.Duration]
	f, err := s.ScheduleAtFixedRate(func(context.Context) error {
		at.add(since(clk))
		if at.len() == 1 {
			clk.Advance(3 * period) // the first run takes three periods
		}
		return nil
	}, period, period)
	require.NoError(t, err)

	advance(t, clk, s, period)
	// Run 0 started at 10s and ended at 40s. Runs 1 to 3, due at 20s, 30s
	// and 40s, start right after it, back to back; none is skipped.
	require.Equal(t, []time.Duration{10 * time.Second, 40 * time.Second, 40 * time.Second, 40 * time.Second}, at.get())
	require.Equal(t, period, f.Delay(), "run 4 is due at 50s, on the original grid")

	advance(t, clk, s, period)
	require.Equal(t, 50*time.Second, at.get()[4])
}

func TestFixedDelayNextRunIsDueDelayAfterPreviousEnded(t *testing.T) {
	s, clk := newManual(t, 1)
	const initial, delay, runTime = time.Minute, 5 * time.Minute, 10 * time.Minute
	var at recorder[time.Duration]
	f, err := s.ScheduleWithFixedDelay(func(context.Context) error {
		at.add(since(clk))
		clk.Advance(runTime) // each run takes ten minutes
		return nil
	}, initial, delay)
	require.NoError(t, err)

	advance(t, clk, s, initial)
	require.Equal(t, []time.Duration{time.Minute}, at.get())
	require.Equal(t, delay, f.Delay(), "run 1 is due 5m after run 0 ended at 11m")

	advance(t, clk, s, delay-1)
	require.Len(t, at.get(), 1)
	advance(t, clk, s, 1)
	require.Equal(t, []time.Duration{time.Minute, 16 * time.Minute}, at.get())
	require.Equal(t, delay, f.Delay())
}

func TestPeriodicTaskNeverOverlapsItself(t *testing.T) {
	const period, runs = time.Millisecond, 200
	for _, tc := range []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
		step     time.Duration // how far to move time per Advance
	}{
		// One big jump: the fixed-rate task is 200 periods behind and
		// catches up with back-to-back runs while three workers are idle.
		{"fixed rate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, 0, period)
		}, runs * period},
		{"fixed delay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, 0, period)
		}, period},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newManual(t, 4)
			var inRun, maxInRun, total atomic.Int32
			_, err := tc.schedule(s, func(context.Context) error {
				n := inRun.Add(1)
				for {
					m := maxInRun.Load()
					if n <= m || maxInRun.CompareAndSwap(m, n) {
						break
					}
				}
				total.Add(1)
				runtime.Gosched() // give another worker the chance to overlap
				inRun.Add(-1)
				return nil
			})
			require.NoError(t, err)
			idle(t, s)
			for total.Load() < runs+1 {
				advance(t, clk, s, tc.step)
			}
			require.EqualValues(t, 1, maxInRun.Load())
		})
	}
}

// ---------------------------------------------------------------------------
// periodic failure, Wait, re-queue before the run counts.

func TestPeriodicRunFailureStopsLaterRuns(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		for _, failure := range []string{"error", "panic"} {
			t.Run(kind+"/"+failure, func(t *testing.T) {
				s, clk := newManual(t, 1)
				var runs atomic.Int32
				task := func(context.Context) error {
					if runs.Add(1) < 3 {
						return nil
					}
					if failure == "panic" {
						panic("periodic kaboom")
					}
					return fmt.Errorf("run 3: %w", errBoom)
				}
				var f scheduler.ScheduledFuture
				var err error
				if kind == "fixed rate" {
					f, err = s.ScheduleAtFixedRate(task, period, period)
				} else {
					f, err = s.ScheduleWithFixedDelay(task, period, period)
				}
				require.NoError(t, err)
				for range 10 {
					advance(t, clk, s, period)
				}
				require.EqualValues(t, 3, runs.Load(), "no run after the failed one")
				require.True(t, f.IsDone())
				require.False(t, f.IsCanceled())
				require.Empty(t, s.Queue())
				require.False(t, f.Cancel(true), "a failed future cannot be canceled")

				err = f.Wait(testCtx(t))
				if failure == "panic" {
					var pe *scheduler.PanicError
					require.ErrorAs(t, err, &pe)
					require.Equal(t, "periodic kaboom", pe.Value)
				} else {
					require.ErrorIs(t, err, errBoom)
				}
			})
		}
	}
}

func TestContinueOnErrorKeepsPeriodicTaskRunning(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		t.Run(kind, func(t *testing.T) {
			s, clk := newManual(t, 1)
			var runs atomic.Int32
			task := func(context.Context) error {
				switch runs.Add(1) % 3 {
				case 1:
					return errBoom
				case 2:
					panic("tolerated")
				}
				return nil
			}
			var f scheduler.ScheduledFuture
			var err error
			if kind == "fixed rate" {
				f, err = s.ScheduleAtFixedRate(task, period, period, scheduler.ContinueOnError())
			} else {
				f, err = s.ScheduleWithFixedDelay(task, period, period, scheduler.ContinueOnError())
			}
			require.NoError(t, err)
			for range 9 {
				advance(t, clk, s, period)
			}
			require.EqualValues(t, 9, runs.Load())
			require.False(t, f.IsDone())
			requireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
			st := s.Stats()
			require.EqualValues(t, 9, st.Completed)
			require.EqualValues(t, 6, st.Failed)
			require.EqualValues(t, 3, st.Panicked)
		})
	}
}

func TestPeriodicWaitBlocksUntilCancel(t *testing.T) {
	const period = time.Second
	s, clk := newManual(t, 1)
	f, err := s.ScheduleAtFixedRate(nop, period, period)
	require.NoError(t, err)
	for range 3 {
		advance(t, clk, s, period)
	}
	require.False(t, f.IsDone(), "successful runs never complete a periodic future")

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, context.Canceled, f.Wait(canceled))
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	require.Equal(t, context.DeadlineExceeded, f.Wait(expired))

	waitCtx, cancelWait := context.WithCancel(testCtx(t))
	waited := make(chan error, 1)
	go func() { waited <- f.Wait(waitCtx) }()
	advance(t, clk, s, period)
	select {
	case err := <-waited:
		t.Fatalf("Wait returned %v before the periodic task was canceled", err)
	default:
	}
	require.True(t, f.Cancel(false))
	require.ErrorIs(t, recv(t, waited), scheduler.ErrCanceled)

	cancelWait()
	waited2 := make(chan error, 1)
	go func() { waited2 <- f.Wait(waitCtx) }()
	require.ErrorIs(t, recv(t, waited2), scheduler.ErrCanceled, "a done future answers even after ctx ended")
}

func TestPeriodicTaskIsRequeuedBeforeItsRunCountsAsFinished(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		t.Run(kind, func(t *testing.T) {
			type seen struct {
				inQueue   bool
				queued    int
				completed uint64
			}
			var got recorder[seen]
			var s *scheduler.Scheduler
			s, clk := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
				AfterExecute: func(f scheduler.ScheduledFuture, _ error) {
					st := s.Stats()
					got.add(seen{slices.Contains(s.Queue(), f), st.Queued, st.Completed})
				},
			}))
			var f scheduler.ScheduledFuture
			var err error
			if kind == "fixed rate" {
				f, err = s.ScheduleAtFixedRate(nop, period, period)
			} else {
				f, err = s.ScheduleWithFixedDelay(nop, period, period)
			}
			require.NoError(t, err)
			for k := range 3 {
				advance(t, clk, s, period)
				require.Equal(t, seen{inQueue: true, queued: 1, completed: uint64(k)}, got.get()[k],
					"at the end of run %d the task is queued again and the run is not yet counted", k)
				require.EqualValues(t, k+1, s.Stats().Completed)
			}
			requireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
		})
	}
}

// ---------------------------------------------------------------------------
// panics.

func TestTaskPanicIsRecoveredAndWorkerSurvives(t *testing.T) {
	s, _ := newManual(t, 1)
	f1, err := s.Submit(func(context.Context) error { panic("kaboom") })
	require.NoError(t, err)
	f2, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	idle(t, s)

	err = f1.Wait(testCtx(t))
	var pe *scheduler.PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "kaboom", pe.Value)
	require.NotEmpty(t, pe.Stack)
	require.Contains(t, string(pe.Stack), "TestTaskPanicIsRecoveredAndWorkerSurvives",
		"the stack is the panicking goroutine's")
	require.NoError(t, pe.Unwrap(), "a non-error panic value unwraps to nil")
	require.Contains(t, pe.Error(), "kaboom")

	v, err := f2.Get(testCtx(t))
	require.NoError(t, err, "the pool of one ran the next task")
	require.Equal(t, 7, v)

	// And keeps running tasks.
	f3, err := s.Submit(nop)
	require.NoError(t, err)
	idle(t, s)
	require.NoError(t, f3.Wait(testCtx(t)))
	st := s.Stats()
	require.Equal(t, 1, st.PoolSize)
	require.EqualValues(t, 1, st.Panicked)
}

func TestPanicErrorUnwrapsAnErrorValue(t *testing.T) {
	s, _ := newManual(t, 1)
	f, err := scheduler.SubmitCallable(s, func(context.Context) (string, error) {
		panic(fmt.Errorf("wrapped: %w", errBoom))
	})
	require.NoError(t, err)
	idle(t, s)
	v, err := f.Get(testCtx(t))
	require.Empty(t, v)
	require.ErrorIs(t, err, errBoom, "errors.Is sees through a panic(err)")
	var pe *scheduler.PanicError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, pe.Unwrap(), errBoom)
	require.NotEmpty(t, pe.Stack)
}

func TestFailuresAreLoggedAtErrorWithNameAndValue(t *testing.T) {
	const period = time.Second
	cases := []struct {
		name     string
		schedule func(s *scheduler.Scheduler) error
		want     []string
	}{
		{"one-shot panic", func(s *scheduler.Scheduler) error {
			_, err := s.Submit(func(context.Context) error { panic("kaboom-4711") }, scheduler.WithName("exploder"))
			return err
		}, []string{"exploder", "kaboom-4711"}},
		{"callable panic with an error", func(s *scheduler.Scheduler) error {
			_, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) {
				panic(errors.New("disk on fire"))
			}, scheduler.WithName("callable-exploder"))
			return err
		}, []string{"callable-exploder", "disk on fire"}},
		{"periodic panic", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleAtFixedRate(func(context.Context) error { panic("tick-panic") },
				0, period, scheduler.WithName("ticker"))
			return err
		}, []string{"ticker", "tick-panic"}},
		{"periodic stopped by error", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleWithFixedDelay(func(context.Context) error { return errors.New("quota exceeded") },
				0, period, scheduler.WithName("poller"))
			return err
		}, []string{"poller", "quota exceeded"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logger, logs := newLogger()
			s, _ := newManual(t, 1, scheduler.WithLogger(logger))
			require.NoError(t, tc.schedule(s))
			idle(t, s) // the run, and its logging, are over
			logs.requireErrorRecord(t, tc.want...)
		})
	}
}

// ---------------------------------------------------------------------------
// futures.

func TestGetReturnsTheOutcome(t *testing.T) {
	t.Run("value", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 42, nil })
		require.NoError(t, err)
		v, err := f.Get(testCtx(t))
		require.NoError(t, err)
		require.Equal(t, 42, v)
		require.NoError(t, f.Wait(testCtx(t)))
	})
	t.Run("task nil", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := s.Submit(nop)
		require.NoError(t, err)
		require.NoError(t, f.Wait(testCtx(t)))
	})
	t.Run("task error", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) {
			return 5, fmt.Errorf("lookup: %w", errBoom)
		})
		require.NoError(t, err)
		v, err := f.Get(testCtx(t))
		require.ErrorIs(t, err, errBoom)
		require.Zero(t, v, "no value with an error")
		require.ErrorIs(t, f.Wait(testCtx(t)), errBoom)
	})
	t.Run("canceled", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
		require.NoError(t, err)
		require.True(t, f.Cancel(false))
		v, err := f.Get(testCtx(t))
		require.ErrorIs(t, err, scheduler.ErrCanceled)
		require.Zero(t, v)
		require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
	})
	t.Run("panic", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { panic(17) })
		require.NoError(t, err)
		_, err = f.Get(testCtx(t))
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, 17, pe.Value)
	})
	t.Run("ctx ends first", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
		require.NoError(t, err)
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		v, err := f.Get(canceled)
		require.Equal(t, context.Canceled, err)
		require.Zero(t, v)
		require.Equal(t, context.Canceled, f.Wait(canceled))
		expired, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
		defer cancel()
		_, err = f.Get(expired)
		require.Equal(t, context.DeadlineExceeded, err)
		require.False(t, f.IsDone(), "Get with an ended ctx leaves the future alone")
	})
	t.Run("done future answers an ended ctx", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 3, nil })
		require.NoError(t, err)
		idle(t, s)
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		v, err := f.Get(canceled)
		require.NoError(t, err)
		require.Equal(t, 3, v)
	})
}

func TestDoneIsClosedExactlyWhenIsDone(t *testing.T) {
	cases := []struct {
		name   string
		result func(ctx context.Context) error // what the run returns once released
		finish func(f scheduler.ScheduledFuture, openRelease func())
	}{
		{"normal", func(context.Context) error { return nil },
			func(_ scheduler.ScheduledFuture, open func()) { open() }},
		{"error", func(context.Context) error { return errBoom },
			func(_ scheduler.ScheduledFuture, open func()) { open() }},
		{"panic", func(context.Context) error { panic("done-panic") },
			func(_ scheduler.ScheduledFuture, open func()) { open() }},
		{"cancel", func(context.Context) error { return nil },
			func(f scheduler.ScheduledFuture, _ func()) { f.Cancel(false) }},
		{"cancel with interrupt", func(ctx context.Context) error { return ctx.Err() },
			func(f scheduler.ScheduledFuture, _ func()) { f.Cancel(true) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newManual(t, 1)
			started := make(chan struct{})
			release, openRelease := gate(t)
			f, err := s.Submit(func(ctx context.Context) error {
				hold(ctx, started, release)
				return tc.result(ctx)
			})
			require.NoError(t, err)
			recv(t, started)
			require.False(t, f.IsDone())
			requireOpen(t, f.Done(), "Done is closed while the task runs")

			woke := make(chan bool, 1)
			go func() {
				<-f.Done()
				woke <- f.IsDone()
			}()
			tc.finish(f, openRelease)
			require.True(t, recv(t, woke), "a goroutine woken by Done sees IsDone")
			if tc.name == "cancel" {
				openRelease() // let the run finish; its outcome is discarded
			}
			idle(t, s)
			requireClosed(t, f.Done(), "Done of a done future")
		})
	}
}

func TestDoneIsClosedBeforeCancelReturnsTrue(t *testing.T) {
	for _, interrupt := range []bool{false, true} {
		t.Run(fmt.Sprintf("queued/interrupt=%v", interrupt), func(t *testing.T) {
			s, _ := newManual(t, 1)
			f, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			done := f.Done()
			require.True(t, f.Cancel(interrupt))
			requireClosed(t, done, "Done is not closed when Cancel returns true")
		})
		t.Run(fmt.Sprintf("periodic between runs/interrupt=%v", interrupt), func(t *testing.T) {
			s, clk := newManual(t, 1)
			f, err := s.ScheduleAtFixedRate(nop, time.Second, time.Second)
			require.NoError(t, err)
			advance(t, clk, s, time.Second)
			done := f.Done()
			require.True(t, f.Cancel(interrupt))
			requireClosed(t, done, "Done is not closed when Cancel returns true")
		})
		t.Run(fmt.Sprintf("running/interrupt=%v", interrupt), func(t *testing.T) {
			s, _ := newManual(t, 1)
			started := make(chan struct{})
			release, openRelease := gate(t)
			f, err := s.Submit(func(ctx context.Context) error {
				hold(ctx, started, release)
				return nil
			})
			require.NoError(t, err)
			recv(t, started)
			done := f.Done()
			require.True(t, f.Cancel(interrupt))
			requireClosed(t, done, "Done is not closed when Cancel returns true")
			openRelease()
		})
	}
}

// ---------------------------------------------------------------------------
// R-8a: identity.

func TestFuturesKeepTheirIdentity(t *testing.T) {
	t.Run("Queue", func(t *testing.T) {
		s, clk := newManual(t, 1)
		task, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 2*time.Hour)
		require.NoError(t, err)
		periodic, err := s.ScheduleAtFixedRate(nop, time.Minute, 3*time.Hour)
		require.NoError(t, err)
		q := s.Queue()
		require.Len(t, q, 3)
		require.True(t, q[0] == periodic)
		require.True(t, q[1] == task)
		require.True(t, q[2] == scheduler.ScheduledFuture(callable))

		advance(t, clk, s, time.Minute) // the periodic task ran and is queued again
		require.True(t, s.Queue()[2] == periodic, "a periodic task is re-queued as itself")
	})
	t.Run("ShutdownNow", func(t *testing.T) {
		s, _ := newManual(t, 1)
		task, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 2*time.Hour)
		require.NoError(t, err)
		periodic, err := s.ScheduleWithFixedDelay(nop, 3*time.Hour, time.Hour)
		require.NoError(t, err)
		got := s.ShutdownNow()
		require.Len(t, got, 3)
		require.True(t, got[0] == task)
		require.True(t, got[1] == scheduler.ScheduledFuture(callable))
		require.True(t, got[2] == periodic)
	})
	t.Run("hooks", func(t *testing.T) {
		var before, after recorder[scheduler.ScheduledFuture]
		s, clk := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
			BeforeExecute: func(f scheduler.ScheduledFuture) { before.add(f) },
			AfterExecute:  func(f scheduler.ScheduledFuture, _ error) { after.add(f) },
		}))
		task, err := s.Schedule(nop, time.Second)
		require.NoError(t, err)
		callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 2*time.Second)
		require.NoError(t, err)
		periodic, err := s.ScheduleAtFixedRate(nop, 3*time.Second, time.Hour)
		require.NoError(t, err)
		advance(t, clk, s, 3*time.Second)
		want := []scheduler.ScheduledFuture{task, callable, periodic}
		for _, got := range [][]scheduler.ScheduledFuture{before.get(), after.get()} {
			require.Len(t, got, 3)
			for i := range want {
				require.True(t, got[i] == want[i], "hook argument %d is not the scheduled future", i)
			}
		}
	})
	t.Run("rejection policy", func(t *testing.T) {
		for _, why := range []string{"shut down", "queue full"} {
			t.Run(why, func(t *testing.T) {
				p := &recordingPolicy{}
				s, _ := newManual(t, 1, scheduler.WithRejectionPolicy(p), scheduler.WithMaxQueueSize(1))
				if why == "shut down" {
					s.Shutdown()
				} else {
					_, err := s.Schedule(nop, time.Hour) // fills the queue
					require.NoError(t, err)
				}
				task, err := s.Schedule(nop, time.Hour)
				require.NoError(t, err)
				callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
				require.NoError(t, err)
				periodic, err := s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
				require.NoError(t, err)
				got := p.got.get()
				require.Len(t, got, 3)
				require.True(t, got[0] == task)
				require.True(t, got[1] == scheduler.ScheduledFuture(callable))
				require.True(t, got[2] == periodic)
			})
		}
	})
}

// ---------------------------------------------------------------------------
// R-8b: InvokeAll, InvokeAny.

func TestInvokeAllWaitsForEveryTaskAndKeepsOrder(t *testing.T) {
	s, _ := newManual(t, 3)
	lastDone := make(chan struct{})
	fns := []scheduler.Callable[int]{
		func(ctx context.Context) (int, error) {
			// Finishes last: only once the third task has run.
			select {
			case <-lastDone:
			case <-ctx.Done():
			}
			return 10, nil
		},
		func(context.Context) (int, error) { return 0, errBoom },
		func(context.Context) (int, error) { close(lastDone); return 30, nil },
	}
	futures, err := scheduler.InvokeAll(testCtx(t), s, fns)
	require.NoError(t, err, "a failed task is not InvokeAll's error (JDK invokeAll)")
	require.Len(t, futures, 3)
	for i, f := range futures {
		require.True(t, f.IsDone(), "future %d", i)
	}
	v, err := futures[0].Get(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 10, v)
	_, err = futures[1].Get(testCtx(t))
	require.ErrorIs(t, err, errBoom)
	v, err = futures[2].Get(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 30, v)
}

func TestInvokeAllCancelsUnfinishedTasksWhenCtxEnds(t *testing.T) {
	s, _ := newManual(t, 2)
	started := make(chan struct{}, 2)
	interrupted := make(chan error, 2)
	finish, openFinish := gate(t)
	var neverRan atomic.Bool
	blocker := func(ctx context.Context) (int, error) {
		started <- struct{}{}
		<-ctx.Done()
		interrupted <- ctx.Err()
		// Hold the worker until the test is done checking, so that the
		// queued fourth task cannot start while InvokeAll is still
		// canceling the futures one by one.
		<-finish
		return 0, ctx.Err()
	}
	fns := []scheduler.Callable[int]{
		func(context.Context) (int, error) { return 1, nil },
		blocker,
		blocker,
		func(context.Context) (int, error) { neverRan.Store(true); return 4, nil }, // queued behind the blockers
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	type result struct {
		futures []*scheduler.Future[int]
		err     error
	}
	res := make(chan result, 1)
	go func() {
		futures, err := scheduler.InvokeAll(ctx, s, fns)
		res <- result{futures, err}
	}()
	recv(t, started)
	recv(t, started)
	cancel()
	r := recv(t, res)
	require.Equal(t, context.Canceled, r.err)
	require.Len(t, r.futures, 4)

	v, err := r.futures[0].Get(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 1, v)
	for _, i := range []int{1, 2, 3} {
		require.True(t, r.futures[i].IsCanceled(), "future %d", i)
	}
	// With interrupt: the running tasks' ctx was canceled.
	require.ErrorIs(t, recv(t, interrupted), context.Canceled)
	require.ErrorIs(t, recv(t, interrupted), context.Canceled)
	openFinish()
	idle(t, s)
	require.False(t, neverRan.Load(), "the queued task was canceled before it could run")
}

func TestInvokeAnyReturnsFirstSuccessAndCancelsTheRest(t *testing.T) {
	s, _ := newManual(t, 3)
	started := make(chan struct{})
	interrupted := make(chan error, 1)
	fns := []scheduler.Callable[string]{
		func(ctx context.Context) (string, error) {
			close(started)
			<-ctx.Done()
			interrupted <- ctx.Err()
			return "late", nil
		},
		func(context.Context) (string, error) { return "", errBoom },
		func(ctx context.Context) (string, error) {
			select { // succeed once the other is surely running
			case <-started:
			case <-ctx.Done():
			}
			return "winner", nil
		},
	}
	v, err := scheduler.InvokeAny(testCtx(t), s, fns)
	require.NoError(t, err)
	require.Equal(t, "winner", v)
	require.ErrorIs(t, recv(t, interrupted), context.Canceled, "the running loser's ctx was canceled")
}

func TestInvokeAnyFailsWithOneTasksErrorWhenAllFail(t *testing.T) {
	s, _ := newManual(t, 2)
	fns := []scheduler.Callable[int]{
		func(context.Context) (int, error) { return 0, fmt.Errorf("first: %w", errBoom) },
		func(context.Context) (int, error) { return 0, fmt.Errorf("second: %w", errBoom) },
		func(context.Context) (int, error) { panic(fmt.Errorf("third: %w", errBoom)) },
	}
	v, err := scheduler.InvokeAny(testCtx(t), s, fns)
	require.ErrorIs(t, err, errBoom)
	require.NotErrorIs(t, err, scheduler.ErrCanceled)
	require.Zero(t, v)
}

func TestInvokeAnyReturnsCtxErrWhenCtxEndsFirst(t *testing.T) {
	s, _ := newManual(t, 2)
	interrupted := make(chan error, 2)
	blocker := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		interrupted <- ctx.Err()
		return 1, nil
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	v, err := scheduler.InvokeAny(ctx, s, []scheduler.Callable[int]{blocker, blocker})
	require.Equal(t, context.Canceled, err)
	require.Zero(t, v)
	idle(t, s) // the blockers, canceled with interrupt, returned or never ran
}

func TestInvokeRejectsNilElementsAndEmptyLists(t *testing.T) {
	ok := func(context.Context) (int, error) { return 1, nil }
	t.Run("InvokeAll/nil element", func(t *testing.T) {
		s, _ := newManual(t, 1)
		futures, err := scheduler.InvokeAll(testCtx(t), s, []scheduler.Callable[int]{ok, nil, ok})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Empty(t, futures)
		require.Zero(t, s.Stats().TaskCount, "nothing scheduled")
	})
	t.Run("InvokeAny/nil element", func(t *testing.T) {
		s, _ := newManual(t, 1)
		_, err := scheduler.InvokeAny(testCtx(t), s, []scheduler.Callable[int]{ok, ok, nil})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Zero(t, s.Stats().TaskCount, "nothing scheduled")
	})
	t.Run("InvokeAny/empty", func(t *testing.T) {
		s, _ := newManual(t, 1)
		_, err := scheduler.InvokeAny(testCtx(t), s, []scheduler.Callable[int]{})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		_, err = scheduler.InvokeAny[int](testCtx(t), s, nil)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	})
	t.Run("InvokeAll/empty", func(t *testing.T) {
		s, _ := newManual(t, 1)
		futures, err := scheduler.InvokeAll(testCtx(t), s, []scheduler.Callable[int]{})
		require.NoError(t, err)
		require.Empty(t, futures)
		futures, err = scheduler.InvokeAll[int](testCtx(t), s, nil)
		require.NoError(t, err)
		require.Empty(t, futures)
		require.Zero(t, s.Stats().TaskCount)
	})
}

// ---------------------------------------------------------------------------
// Cancel.

// scheduleKinds schedules a task one hour from now in each of the ways
// the scheduler knows, for tests that must hold for every kind of future.
var scheduleKinds = []struct {
	name     string
	schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
}{
	{"one-shot", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return s.Schedule(task, time.Hour)
	}},
	{"callable", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return scheduler.ScheduleCallable(s, func(ctx context.Context) (int, error) { return 1, task(ctx) }, time.Hour)
	}},
	{"fixed rate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return s.ScheduleAtFixedRate(task, time.Hour, time.Minute)
	}},
	{"fixed delay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return s.ScheduleWithFixedDelay(task, time.Hour, time.Minute)
	}},
}

func TestCancelBeforeRunPreventsTheRun(t *testing.T) {
	for _, kind := range scheduleKinds {
		for _, interrupt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/interrupt=%v", kind.name, interrupt), func(t *testing.T) {
				s, clk := newManual(t, 1)
				var ran atomic.Bool
				f, err := kind.schedule(s, func(context.Context) error { ran.Store(true); return nil })
				require.NoError(t, err)
				require.True(t, f.Cancel(interrupt))
				require.True(t, f.IsDone())
				require.True(t, f.IsCanceled())
				require.False(t, f.Cancel(interrupt), "a second Cancel returns false")
				require.False(t, f.Cancel(!interrupt))
				advance(t, clk, s, 2*time.Hour)
				require.False(t, ran.Load())
				require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
			})
		}
	}
}

func TestCancelAfterCompletionReturnsFalse(t *testing.T) {
	for _, outcome := range []struct {
		name string
		err  error
	}{{"normal", nil}, {"failed", errBoom}} {
		t.Run(outcome.name, func(t *testing.T) {
			s, _ := newManual(t, 1)
			f, err := s.Submit(func(context.Context) error { return outcome.err })
			require.NoError(t, err)
			idle(t, s)
			require.False(t, f.Cancel(true))
			require.False(t, f.Cancel(false))
			require.False(t, f.IsCanceled())
			require.True(t, f.IsDone())
			require.ErrorIs(t, f.Wait(testCtx(t)), outcome.err)
		})
	}
}

func TestCancelWithInterruptCancelsTheRunningTasksCtx(t *testing.T) {
	s, _ := newManual(t, 1)
	started := make(chan struct{})
	ctxErr := make(chan error, 1)
	f, err := s.Submit(func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		ctxErr <- ctx.Err()
		return ctx.Err()
	})
	require.NoError(t, err)
	recv(t, started)
	require.True(t, f.Cancel(true))
	require.True(t, f.IsCanceled(), "the future reports canceled at once")
	require.True(t, f.IsDone())
	require.ErrorIs(t, recv(t, ctxErr), context.Canceled)
	idle(t, s)
	require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
}

func TestCancelWithoutInterruptLetsTheRunFinish(t *testing.T) {
	s, _ := newManual(t, 1)
	started := make(chan struct{})
	release, openRelease := gate(t)
	ctxErr := make(chan error, 1)
	f, err := scheduler.SubmitCallable(s, func(ctx context.Context) (int, error) {
		close(started)
		<-release
		ctxErr <- ctx.Err()
		return 99, nil
	})
	require.NoError(t, err)
	recv(t, started)
	require.True(t, f.Cancel(false))
	require.True(t, f.IsCanceled(), "the future reports canceled at once")
	require.True(t, f.IsDone())
	openRelease()
	require.NoError(t, recv(t, ctxErr), "the run's ctx is not canceled")
	idle(t, s)
	v, err := f.Get(testCtx(t))
	require.ErrorIs(t, err, scheduler.ErrCanceled, "the run's result is discarded")
	require.Zero(t, v)
}

func TestPeriodicTaskCanceledWhileRunningNeverRunsAgain(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		for _, interrupt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/interrupt=%v", kind, interrupt), func(t *testing.T) {
				s, clk := newManual(t, 2)
				var runs atomic.Int32
				started := make(chan struct{})
				release, openRelease := gate(t)
				task := func(ctx context.Context) error {
					if runs.Add(1) == 2 {
						hold(ctx, started, release)
					}
					return nil
				}
				var f scheduler.ScheduledFuture
				var err error
				if kind == "fixed rate" {
					f, err = s.ScheduleAtFixedRate(task, period, period)
				} else {
					f, err = s.ScheduleWithFixedDelay(task, period, period)
				}
				require.NoError(t, err)
				advance(t, clk, s, period)
				clk.Advance(period)
				recv(t, started) // run 2 is in progress
				require.True(t, f.Cancel(interrupt))
				require.True(t, f.IsCanceled())
				openRelease()
				idle(t, s)
				// As in the JDK's runAndReset, a run that ends canceled
				// does not re-queue its task.
				require.Empty(t, s.Queue(), "not re-queued after the canceled run")
				for range 5 {
					advance(t, clk, s, period)
				}
				require.EqualValues(t, 2, runs.Load())
				require.Empty(t, s.Queue())
				require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
			})
		}
	}
}

// ---------------------------------------------------------------------------
// remove-on-cancel, Purge, Remove.

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
		started := make(chan struct{})
		release, openRelease := gate(t)
		f, err := s.Submit(func(context.Context) error { close(started); <-release; return nil })
		require.NoError(t, err)
		recv(t, started)
		require.False(t, s.Remove(f))
		openRelease()
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
