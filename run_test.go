package scheduler_test

// Running a periodic task (run.go): the timing of its runs, a failed run
// that stops the later ones unless ContinueOnError, Wait, and the re-queue
// before the run counts as finished. Panics, the hooks and the decorator
// are in run_panic_test.go and run_hooks_test.go.
//
// Everything timed runs on a manual clock; tasks that must be running block
// on a gate.

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

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
// Periodic failure, Wait, re-queue before the run counts.

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
				f := schedulePeriodic(t, s, kind, task, period)
				for range 10 {
					advance(t, clk, s, period)
				}
				require.EqualValues(t, 3, runs.Load(), "no run after the failed one")
				require.True(t, f.IsDone())
				require.False(t, f.IsCanceled())
				require.Empty(t, s.Queue())
				require.False(t, f.Cancel(true), "a failed future cannot be canceled")

				err := f.Wait(testCtx(t))
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
			f := schedulePeriodic(t, s, kind, task, period, scheduler.ContinueOnError())
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
			f := schedulePeriodic(t, s, kind, nop, period)
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
