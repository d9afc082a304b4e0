package scheduler_test

// A scheduler in a testing/synctest bubble: it runs on the bubble's
// fake time and only ever blocks durably there. The behaviour both kinds of
// time must agree on (fixed rate for 24 virtual hours, fixed delay with a
// 10-minute run, catch-up, cancel, shutdown policies) is in
// clocksuite_test.go, which runs it under both; AwaitIdle on the manual
// clock is in idle_test.go.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// --- A scheduler in a synctest bubble ---

func TestSynctestRunsOnBubbleTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s, err := scheduler.New(1) // created inside the bubble: on its fake time
		require.NoError(t, err)
		defer stopNow(t, s)

		f, err := scheduler.ScheduleCallable(s, func(context.Context) (time.Duration, error) {
			return time.Since(start), nil
		}, 90*time.Minute)
		require.NoError(t, err)
		require.Equal(t, 90*time.Minute, f.Delay())

		at, err := f.Get(t.Context()) // blocks durably: the bubble jumps to the task's time
		require.NoError(t, err)
		require.Equal(t, 90*time.Minute, at)
		require.Equal(t, 90*time.Minute, time.Since(start), "no more virtual time passed than the task needed")
	})
}

func TestSynctestWorkersParkDurably(t *testing.T) {
	t.Run("a prestarted pool with a far-future task", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			s, err := scheduler.New(4)
			require.NoError(t, err)
			defer stopNow(t, s)
			require.Equal(t, 4, s.PrestartAllCoreWorkers())
			ran := make(chan time.Duration, 1)
			_, err = s.Schedule(func(context.Context) error {
				ran <- time.Since(start)
				return nil
			}, 1000*time.Hour)
			require.NoError(t, err)

			// Returns only once all four workers are durably blocked: one
			// leader on its timer, three followers on the cond. A worker
			// spinning, polling or blocked on a mutex would keep it waiting.
			synctest.Wait()
			st := s.Stats()
			require.Equal(t, 0, st.Active)
			require.Equal(t, 4, st.PoolSize)
			require.Equal(t, 1, st.Queued)
			require.Zero(t, time.Since(start), "parking took no virtual time")

			time.Sleep(1000 * time.Hour) // virtual
			synctest.Wait()
			require.Equal(t, 1000*time.Hour, <-ran)
		})
	})

	t.Run("three workers park while the fourth runs a blocked task", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, err := scheduler.New(4)
			require.NoError(t, err)
			defer stopNow(t, s)
			s.PrestartAllCoreWorkers()
			release := make(chan struct{})
			f, err := s.Submit(func(context.Context) error { <-release; return nil })
			require.NoError(t, err)
			_, err = s.ScheduleAtFixedRate(func(context.Context) error { return nil }, time.Hour, time.Hour)
			require.NoError(t, err)

			synctest.Wait()
			require.Equal(t, 1, s.Stats().Active)
			close(release)
			require.NoError(t, f.Wait(t.Context()))
			synctest.Wait()
			require.Equal(t, 0, s.Stats().Active)
		})
	})

	t.Run("no worker wakes before something is due", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			clk := &countingClock{inner: scheduler.SystemClock()}
			s, err := scheduler.New(4, scheduler.WithClock(clk))
			require.NoError(t, err)
			defer stopNow(t, s)
			s.PrestartAllCoreWorkers()
			var runs atomic.Int64
			_, err = s.ScheduleAtFixedRate(func(context.Context) error {
				runs.Add(1)
				return nil
			}, 24*time.Hour, 24*time.Hour)
			require.NoError(t, err)
			synctest.Wait()
			arms := clk.arms()

			// A poll loop would re-arm a timer (or sleep) again and again
			// during this virtual day; the parked pool arms nothing.
			time.Sleep(24*time.Hour - time.Nanosecond)
			synctest.Wait()
			require.Equal(t, arms, clk.arms(), "a worker woke with nothing due")
			require.Zero(t, runs.Load())

			time.Sleep(time.Nanosecond)
			synctest.Wait()
			require.Equal(t, int64(1), runs.Load())
		})
	})
}

func TestSynctestCancelFromAnotherGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s, err := scheduler.New(2)
		require.NoError(t, err)
		defer stopNow(t, s)
		var runs recorder[time.Duration]
		f, err := s.ScheduleAtFixedRate(func(context.Context) error {
			runs.add(time.Since(start))
			return nil
		}, time.Hour, time.Hour)
		require.NoError(t, err)

		canceled := make(chan bool, 1)
		go func() {
			time.Sleep(2*time.Hour + 30*time.Minute) // virtual
			canceled <- f.Cancel(false)
		}()
		time.Sleep(24 * time.Hour) // virtual
		synctest.Wait()

		require.True(t, <-canceled)
		require.ErrorIs(t, f.Wait(t.Context()), scheduler.ErrCanceled)
		require.Equal(t, []time.Duration{time.Hour, 2 * time.Hour}, runs.get())
	})
}

func TestSynctestShutdownAndAwaitTermination(t *testing.T) {
	t.Run("Shutdown with only periodic tasks terminates at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			s, err := scheduler.New(4)
			require.NoError(t, err)
			var runs atomic.Int64
			for _, p := range []time.Duration{time.Minute, 7 * time.Minute, time.Hour} {
				_, err := s.ScheduleAtFixedRate(func(context.Context) error { runs.Add(1); return nil }, p, p)
				require.NoError(t, err)
			}
			time.Sleep(3 * time.Hour) // virtual
			synctest.Wait()           // the runs due at 3h are done
			s.Shutdown()
			require.NoError(t, s.AwaitTermination(t.Context()))
			require.True(t, s.IsTerminated())
			require.Equal(t, 3*time.Hour, time.Since(start), "termination took no virtual time")
			require.Equal(t, int64(180+25+3), runs.Load())
			// synctest.Test fails if any goroutine of the scheduler is left.
		})
	})

	t.Run("Shutdown waits for a delayed one-shot, on virtual time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			s, err := scheduler.New(2)
			require.NoError(t, err)
			f, err := s.Schedule(func(context.Context) error { return nil }, 5*time.Hour)
			require.NoError(t, err)
			s.Shutdown()

			ctx, cancel := context.WithTimeout(t.Context(), time.Hour) // virtual
			defer cancel()
			require.ErrorIs(t, s.AwaitTermination(ctx), context.DeadlineExceeded)
			require.Equal(t, time.Hour, time.Since(start))
			require.False(t, f.IsDone())

			require.NoError(t, s.AwaitTermination(t.Context()))
			require.Equal(t, 5*time.Hour, time.Since(start))
			require.True(t, f.IsDone())
		})
	})

	t.Run("Shutdown waits for a running task that takes an hour", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			s, err := scheduler.New(1)
			require.NoError(t, err)
			_, err = s.Submit(func(context.Context) error {
				time.Sleep(time.Hour) // virtual
				return nil
			})
			require.NoError(t, err)
			synctest.Wait()
			s.Shutdown()
			require.NoError(t, s.AwaitTermination(t.Context()))
			require.Equal(t, time.Hour, time.Since(start))
		})
	})

	t.Run("ShutdownNow interrupts a running task", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			s, err := scheduler.New(1)
			require.NoError(t, err)
			f, err := s.Submit(func(ctx context.Context) error {
				select {
				case <-time.After(time.Hour):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			require.NoError(t, err)
			time.Sleep(time.Minute) // virtual
			require.Empty(t, s.ShutdownNow())
			require.NoError(t, s.AwaitTermination(t.Context()))
			require.Equal(t, time.Minute, time.Since(start))
			require.ErrorIs(t, f.Wait(t.Context()), context.Canceled)
		})
	})
}

// TestSynctestPreciseTimingRunsEachTaskAtItsInstant: WithPreciseTiming
// inside a bubble turns itself off at its first fine wait (a real sleep
// does not move the bubble's time), and from then on the scheduler is the
// default one: each one-shot runs exactly at its due instant of the
// bubble's clock, also those due within the precise margin (1.5 ms) of
// the start, while another worker may be leading with its timer armed
// for the fine waiter's watchdog, past the head.
func TestSynctestPreciseTimingRunsEachTaskAtItsInstant(t *testing.T) {
	due := []time.Duration{50 * time.Microsecond, 250 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond}
	for _, pool := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("pool=%d", pool), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				s, err := scheduler.New(pool, scheduler.WithPreciseTiming(true))
				require.NoError(t, err)
				defer stopNow(t, s)
				s.PrestartAllCoreWorkers()
				var ran recorder[time.Duration]
				var futures []scheduler.ScheduledFuture
				for _, d := range due {
					f, err := s.Schedule(func(context.Context) error {
						ran.add(time.Since(start))
						return nil
					}, d)
					require.NoError(t, err)
					futures = append(futures, f)
				}
				for _, f := range futures {
					require.NoError(t, f.Wait(t.Context()))
				}
				require.Equal(t, due, ran.get())
			})
		})
	}
}
