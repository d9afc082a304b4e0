package scheduler_test

// AwaitIdle (idle.go): waiting costs nothing; Advance + AwaitIdle on
// the manual clock is exact, also with the clock used from many goroutines.
// The regressions found while writing the clock suite are in
// idle_regressions_test.go.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// TestIdlePeriodicTasksCauseNoWakeUps shows that waiting costs nothing: with
// 10,000 periodic tasks every hour queued, the first due in an hour, the
// pool sleeps on one timer, armed once, and no worker wakes up until that
// hour has passed. It runs in a synctest bubble, so the hour is virtual, and
// the scheduler reads time through a counting wrapper of the system clock.
func TestIdlePeriodicTasksCauseNoWakeUps(t *testing.T) {
	const (
		tasks  = 10_000
		period = time.Hour
		pool   = 4
	)
	synctest.Test(t, func(t *testing.T) {
		clk := &countingClock{inner: scheduler.SystemClock()}
		s, err := scheduler.New(pool, scheduler.WithClock(clk))
		require.NoError(t, err)
		defer func() {
			s.ShutdownNow()
			require.NoError(t, s.AwaitTermination(context.Background()))
		}()
		var runs atomic.Int64
		run := func(context.Context) error { runs.Add(1); return nil }
		for i := range tasks {
			// Task i first runs at 1h + i s, then hourly: the first
			// task stays the head, so queueing the others wakes nobody.
			_, err := s.ScheduleAtFixedRate(run, period+time.Duration(i)*time.Second, period)
			require.NoError(t, err)
		}
		synctest.Wait() // every worker is parked
		settled := clk.counts()
		require.Equal(t, pool, s.Stats().PoolSize, "workers started")
		require.LessOrEqual(t, clk.arms(), int64(pool), "timer arms while queueing %d tasks", tasks)

		// Sleeping in the bubble moves its virtual clock once every
		// goroutine is blocked: nothing else can run meanwhile.
		time.Sleep(period - time.Minute)
		synctest.Wait()
		require.Equal(t, settled, clk.counts(), "clock use while idle for %v", period-time.Minute)
		require.Zero(t, runs.Load(), "runs before the first is due")

		// The first task comes due: one timer fires, one run, one re-arm.
		time.Sleep(time.Minute + time.Second/2)
		synctest.Wait()
		require.Equal(t, int64(1), runs.Load(), "runs at 1h + 0.5s")
		require.LessOrEqual(t, clk.arms()-(settled.timers+settled.resets), int64(pool),
			"timer arms for one run")
	})
}

// --- AwaitIdle on the manual clock ---

func TestAwaitIdleContext(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()

	t.Run("canceled ctx on an idle scheduler returns ctx.Err()", func(t *testing.T) {
		s, _ := newManual(t, 1)
		require.ErrorIs(t, s.AwaitIdle(canceled), context.Canceled)
	})

	t.Run("canceled ctx on a busy scheduler returns ctx.Err() at once", func(t *testing.T) {
		s, _ := newManual(t, 1)
		release := make(chan struct{})
		defer close(release)
		_, err := s.Submit(func(context.Context) error { <-release; return nil })
		require.NoError(t, err)
		require.ErrorIs(t, s.AwaitIdle(canceled), context.Canceled)
	})

	t.Run("expired deadline returns DeadlineExceeded", func(t *testing.T) {
		s, _ := newManual(t, 1)
		ctx, cancel := context.WithDeadline(t.Context(), time.Unix(0, 0))
		defer cancel()
		require.ErrorIs(t, s.AwaitIdle(ctx), context.DeadlineExceeded)
	})

	t.Run("cancel while waiting returns ctx.Err()", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			clk := schedulertest.NewManualClock(epoch)
			s, err := scheduler.New(1, scheduler.WithClock(clk))
			require.NoError(t, err)
			defer stopNow(t, s)
			release := make(chan struct{})
			defer close(release)
			_, err = s.Submit(func(context.Context) error { <-release; return nil })
			require.NoError(t, err)

			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error)
			go func() { done <- s.AwaitIdle(ctx) }()
			synctest.Wait() // AwaitIdle is blocked: the task runs
			select {
			case err := <-done:
				t.Fatalf("AwaitIdle returned %v while a task runs", err)
			default:
			}
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)
		})
	})

	t.Run("an unused scheduler is idle", func(t *testing.T) {
		s, _ := newManual(t, 3)
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Zero(t, s.Stats().PoolSize, "AwaitIdle starts no worker")
	})
}

func TestAwaitIdleNegativeAdvance(t *testing.T) {
	s, clk := newManual(t, 1)
	ctx := testCtx(t)
	var runs atomic.Int64
	_, err := s.Schedule(func(context.Context) error { runs.Add(1); return nil }, time.Hour)
	require.NoError(t, err)
	require.NoError(t, s.AwaitIdle(ctx))

	clk.Advance(-time.Hour) // documented: does nothing; time never goes back
	require.NoError(t, s.AwaitIdle(ctx))
	require.Equal(t, epoch, clk.Now())
	require.Zero(t, runs.Load())

	require.NoError(t, schedulertest.AdvanceAndSettle(ctx, clk, s, -time.Hour))
	require.Equal(t, epoch, clk.Now())

	clk.Advance(time.Hour)
	require.NoError(t, s.AwaitIdle(ctx))
	require.Equal(t, int64(1), runs.Load())
}

// TestAwaitIdleOneBigAdvance pins down what one jump of the manual clock
// means, as documented on AwaitIdle and in schedulertest.
func TestAwaitIdleOneBigAdvance(t *testing.T) {
	const p = time.Minute
	// record schedules a periodic task of kind ("fixed rate" or "fixed
	// delay") that records the clock at each run.
	record := func(t *testing.T, kind string) (*scheduler.Scheduler, *schedulertest.ManualClock, func() []time.Duration) {
		s, clk := newManual(t, 1)
		var runs recorder[time.Duration]
		task := func(context.Context) error {
			runs.add(since(clk))
			return nil
		}
		schedulePeriodic(t, s, kind, task, p)
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		return s, clk, runs.get
	}
	each := func(n int) []time.Duration {
		var out []time.Duration
		for k := 1; k <= n; k++ {
			out = append(out, time.Duration(k)*p)
		}
		return out
	}
	same := func(n int, at time.Duration) []time.Duration {
		out := make([]time.Duration, n)
		for k := range out {
			out[k] = at
		}
		return out
	}

	t.Run("fixed rate: one Advance(10p) runs 10 times back to back", func(t *testing.T) {
		s, clk, runs := record(t, "fixed rate")
		clk.Advance(10 * p)
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Equal(t, same(10, 10*p), runs(), "JDK catch-up: all at the end of the jump")
	})

	t.Run("fixed rate: ten Advance(p) run 10 times, each at its own instant", func(t *testing.T) {
		s, clk, runs := record(t, "fixed rate")
		for range 10 {
			clk.Advance(p)
			require.NoError(t, s.AwaitIdle(testCtx(t)))
		}
		require.Equal(t, each(10), runs())
	})

	t.Run("fixed delay: one Advance(10p) runs once", func(t *testing.T) {
		s, clk, runs := record(t, "fixed delay")
		clk.Advance(10 * p)
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Equal(t, []time.Duration{10 * p}, runs())
	})

	for _, kind := range []string{"fixed rate", "fixed delay"} {
		t.Run(kind+": AdvanceAndSettle(10p) runs as real time would", func(t *testing.T) {
			s, clk, runs := record(t, kind)
			require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), clk, s, 10*p))
			require.Equal(t, each(10), runs())
		})
	}
}

// TestAwaitIdleAdvanceRacesRearm hammers the window in which a worker reads
// the clock and arms its timer: an Advance landing there must never be
// missed, so every count below is exact.
func TestAwaitIdleAdvanceRacesRearm(t *testing.T) {
	const step = time.Millisecond
	const n = 1000

	t.Run("Advance then AwaitIdle, each period at its own instant", func(t *testing.T) {
		s, clk := newManual(t, 1)
		ctx := testCtx(t)
		var runs atomic.Int64
		var last atomic.Int64
		_, err := s.ScheduleAtFixedRate(func(context.Context) error {
			runs.Add(1)
			last.Store(int64(since(clk)))
			return nil
		}, step, step)
		require.NoError(t, err)
		for i := 1; i <= n; i++ {
			clk.Advance(step) // the worker is re-arming for this very period
			require.NoError(t, s.AwaitIdle(ctx))
			require.Equal(t, int64(i), runs.Load(), "after %d advances", i)
			require.Equal(t, int64(i)*int64(step), last.Load(), "run %d at its own instant", i)
		}
	})

	t.Run("Advance from another goroutine without waiting, then AwaitIdle", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var runs atomic.Int64
		f, err := s.ScheduleAtFixedRate(func(context.Context) error { runs.Add(1); return nil }, step, step)
		require.NoError(t, err)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range n {
				clk.Advance(step) // lands anywhere in the worker's loop
			}
		}()
		<-done
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Equal(t, int64(n), runs.Load())
		require.Equal(t, step, f.Delay(), "the next run is one step ahead")
	})

	t.Run("Advance from many goroutines while others await idle", func(t *testing.T) {
		s, clk := newManual(t, 4)
		periods := []time.Duration{step, 2 * step, 5 * step, 8 * step}
		runs := make([]atomic.Int64, len(periods))
		for i, p := range periods {
			_, err := s.ScheduleAtFixedRate(func(context.Context) error { runs[i].Add(1); return nil }, p, p)
			require.NoError(t, err)
		}
		ctx := testCtx(t)
		var advancers, readers sync.WaitGroup
		for range 8 {
			advancers.Go(func() {
				for range n / 8 {
					clk.Advance(step)
				}
			})
		}
		stop := make(chan struct{})
		for range 2 {
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := s.AwaitIdle(ctx); err != nil {
						t.Error(err) // not require: off the test goroutine
						return
					}
					clk.Now()
					s.Stats()
				}
			})
		}
		advancers.Wait()
		close(stop)
		readers.Wait()
		require.NoError(t, s.AwaitIdle(ctx))
		require.Equal(t, epoch.Add(n*step), clk.Now())
		for i, p := range periods {
			require.Equal(t, int64(n*step/p), runs[i].Load(), "period %v", p)
		}
	})

	t.Run("Advance right after the first submission starts the worker", func(t *testing.T) {
		for range 200 {
			clk := schedulertest.NewManualClock(epoch)
			s, err := scheduler.New(1, scheduler.WithClock(clk))
			require.NoError(t, err)
			ran := make(chan struct{}, 1)
			_, err = s.Schedule(func(context.Context) error { ran <- struct{}{}; return nil }, step)
			require.NoError(t, err)
			clk.Advance(step) // the new worker may not have read the clock yet
			require.NoError(t, s.AwaitIdle(testCtx(t)))
			require.Len(t, ran, 1)
			s.ShutdownNow()
			require.NoError(t, s.AwaitTermination(testCtx(t)))
		}
	})

	t.Run("fixed delay: Advance then AwaitIdle runs once per step", func(t *testing.T) {
		s, clk := newManual(t, 2)
		ctx := testCtx(t)
		var runs atomic.Int64
		_, err := s.ScheduleWithFixedDelay(func(context.Context) error { runs.Add(1); return nil }, step, step)
		require.NoError(t, err)
		for i := 1; i <= n; i++ {
			clk.Advance(step)
			require.NoError(t, s.AwaitIdle(ctx))
			require.Equal(t, int64(i), runs.Load())
		}
	})
}

// TestManualClockConcurrentUse uses one manual clock and one scheduler from
// many goroutines at once; run under -race, it must be clean and exact.
func TestManualClockConcurrentUse(t *testing.T) {
	s, clk := newManual(t, 3)
	ctx := testCtx(t)
	var ran atomic.Int64
	var scheduled atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				switch (g + i) % 4 {
				case 0:
					clk.Advance(time.Duration(i%7) * time.Millisecond)
				case 1:
					_, err := s.Schedule(func(context.Context) error { ran.Add(1); return nil },
						time.Duration(i%13)*time.Millisecond)
					if err != nil {
						t.Error(err)
						return
					}
					scheduled.Add(1)
				case 2:
					if err := s.AwaitIdle(ctx); err != nil {
						t.Error(err)
						return
					}
				case 3:
					clk.Now()
					clk.Waiters()
					clk.NextDue()
					s.Queue()
				}
			}
		})
	}
	wg.Wait()
	clk.Advance(time.Second) // everything scheduled is due by now
	require.NoError(t, s.AwaitIdle(ctx))
	require.Equal(t, scheduled.Load(), ran.Load())
	require.Zero(t, s.Stats().Queued)
}
