package scheduler_test

// The testing story, part two: proofs that a scheduler runs on a synctest
// bubble's fake time and only ever blocks durably there, and that
// Advance + AwaitIdle on the manual clock is exact. The behaviour
// both kinds of time must agree on (fixed rate for 24 virtual hours, fixed
// delay with a 10-minute run, catch-up, cancel, shutdown policies) is in
// clocksuite_test.go, which runs it under both.

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

// --- a scheduler in a synctest bubble ---

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
		var mu sync.Mutex
		var runs []time.Duration
		f, err := s.ScheduleAtFixedRate(func(context.Context) error {
			mu.Lock()
			runs = append(runs, time.Since(start))
			mu.Unlock()
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
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []time.Duration{time.Hour, 2 * time.Hour}, runs)
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
	// record schedules a periodic task that records the clock at each run.
	record := func(t *testing.T, fixedRate bool) (*scheduler.Scheduler, *schedulertest.ManualClock, func() []time.Duration) {
		s, clk := newManual(t, 1)
		var mu sync.Mutex
		var runs []time.Duration
		task := func(context.Context) error {
			mu.Lock()
			runs = append(runs, since(clk))
			mu.Unlock()
			return nil
		}
		var err error
		if fixedRate {
			_, err = s.ScheduleAtFixedRate(task, p, p)
		} else {
			_, err = s.ScheduleWithFixedDelay(task, p, p)
		}
		require.NoError(t, err)
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		return s, clk, func() []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return runs
		}
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
		s, clk, runs := record(t, true)
		clk.Advance(10 * p)
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Equal(t, same(10, 10*p), runs(), "JDK catch-up: all at the end of the jump")
	})

	t.Run("fixed rate: ten Advance(p) run 10 times, each at its own instant", func(t *testing.T) {
		s, clk, runs := record(t, true)
		for range 10 {
			clk.Advance(p)
			require.NoError(t, s.AwaitIdle(testCtx(t)))
		}
		require.Equal(t, each(10), runs())
	})

	t.Run("fixed delay: one Advance(10p) runs once", func(t *testing.T) {
		s, clk, runs := record(t, false)
		clk.Advance(10 * p)
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Equal(t, []time.Duration{10 * p}, runs())
	})

	for _, fixedRate := range []bool{true, false} {
		name := map[bool]string{true: "fixed rate", false: "fixed delay"}[fixedRate]
		t.Run(name+": AdvanceAndSettle(10p) runs as real time would", func(t *testing.T) {
			s, clk, runs := record(t, fixedRate)
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

// --- regression tests for bugs found while writing this suite (fixed) ---

// TestAwaitIdleWaitsForLeaderToRearm: with several workers, a
// follower can take the head the leader's timer fired for. The leader still
// counts as parked until it re-locks, so AwaitIdle reports idle while no
// timer is armed for the next head; a test that then steps the manual clock
// to NextDue (AdvanceAndSettle) skips that head, and its run happens late.
// Here three periodic tasks on three workers, stepped as the suite's manual
// driver does, must run at exactly the instants the synctest driver records.
// Fixed: idleLocked requires a leader armed for a time still ahead.
func TestAwaitIdleWaitsForLeaderToRearm(t *testing.T) {
	const m, h = suiteMinute, suiteHour
	var want []string
	want = append(want, suiteEvery(20*m, 20*m, 6, "every 20m0s")...)
	want = append(want, suiteEvery(30*m, 30*m, 4, "every 30m0s")...)
	want = append(want, suiteEvery(h, h, 2, "every 1h0m0s")...)
	want = suiteSortLines(want)
	for _, d := range []clockDriver{suiteManualDriver{}, suiteBubbleDriver{}} {
		t.Run(d.name(), func(t *testing.T) {
			for iter := range 100 {
				var got []string
				d.run(t, func(t *testing.T, c suiteClock) {
					log := &suiteLog{c: c}
					s := c.newScheduler(t, 3)
					for _, p := range []time.Duration{20 * m, 30 * m, h} {
						_, err := s.ScheduleAtFixedRate(func(context.Context) error {
							log.add("every " + p.String())
							return nil
						}, p, p)
						require.NoError(t, err)
					}
					c.advance(t, 2*h)
					got = log.lines(true)
				})
				require.Equal(t, want, got, "iteration %d", iter)
			}
		})
	}
}

// heldStopClock is a manual clock whose timers' Stop blocks, once armed
// by hold, until release: it holds a worker inside the window between
// being woken and re-locking the queue.
type heldStopClock struct {
	*schedulertest.ManualClock
	mu   sync.Mutex
	gate chan struct{} // non-nil while armed; the next Stop waits on it
}

func (c *heldStopClock) NewTimer(d time.Duration) scheduler.Timer {
	return &heldStopTimer{Timer: c.ManualClock.NewTimer(d), c: c}
}

func (c *heldStopClock) hold() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gate = make(chan struct{})
	return c.gate
}

type heldStopTimer struct {
	scheduler.Timer
	c *heldStopClock
}

func (t *heldStopTimer) Stop() bool {
	t.c.mu.Lock()
	gate := t.c.gate
	t.c.gate = nil
	t.c.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return t.Timer.Stop()
}

// TestAwaitIdleWaitsForLeaderWokenForNewHead: a submission that
// becomes the new head clears q.leader and wakes the leader, which stays
// counted as parked until it re-locks. AwaitIdle in that window reports
// idle although no worker waits for the new head: its timer is still the
// old one (or none), so NextDue is wrong. Deterministic: the leader is held
// inside its timer's Stop, right after the wake.
func TestAwaitIdleWaitsForLeaderWokenForNewHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := &heldStopClock{ManualClock: schedulertest.NewManualClock(epoch)}
		s, err := scheduler.New(1, scheduler.WithClock(clk))
		require.NoError(t, err)
		defer stopNow(t, s)
		_, err = s.Schedule(func(context.Context) error { return nil }, 2*time.Hour)
		require.NoError(t, err)
		require.NoError(t, s.AwaitIdle(t.Context())) // the worker leads, timer at 2h

		gate := clk.hold()
		_, err = s.Schedule(func(context.Context) error { return nil }, time.Hour) // new head: wakes the leader
		require.NoError(t, err)
		idle := make(chan error, 1)
		go func() { idle <- s.AwaitIdle(t.Context()) }()
		synctest.Wait() // the worker is held in Stop; AwaitIdle returned or blocks

		returnedEarly := len(idle) == 1
		due, _ := clk.NextDue()
		close(gate)
		require.NoError(t, <-idle)
		require.False(t, returnedEarly,
			"AwaitIdle returned while the worker had no timer for the new head (NextDue %v)", due.Sub(epoch))
		due, ok := clk.NextDue()
		require.True(t, ok)
		require.Equal(t, time.Hour, due.Sub(epoch))
	})
}

// TestAdvanceAndSettleSettlesBeforeFirstStep: AdvanceAndSettle looks at
// NextDue before it ever calls AwaitIdle, so a timer the code under test has
// yet to arm is invisible to its first step. Right after
// ScheduleAtFixedRate the new worker has usually not armed its timer, and
// AdvanceAndSettle(24h) then jumps straight to 24h: 24 runs at one instant
// instead of one per hour. Fixed: AdvanceAndSettle calls AwaitIdle once
// before the loop.
func TestAdvanceAndSettleSettlesBeforeFirstStep(t *testing.T) {
	t.Run("an idler that arms its timer when it settles", func(t *testing.T) {
		clk := schedulertest.NewManualClock(epoch)
		var fired []time.Duration
		idle := idlerFunc(func(context.Context) error {
			if clk.Waiters() == 0 && len(fired) == 0 {
				clk.AfterFunc(time.Hour, func() { fired = append(fired, since(clk)) })
			}
			return nil
		})
		require.NoError(t, schedulertest.AdvanceAndSettle(t.Context(), clk, idle, 3*time.Hour))
		require.Equal(t, []time.Duration{time.Hour}, fired)
	})

	t.Run("a scheduler right after its first submission", func(t *testing.T) {
		for range 20 {
			func() {
				s, clk := newManual(t, 1)
				var mu sync.Mutex
				var runs []time.Duration
				_, err := s.ScheduleAtFixedRate(func(context.Context) error {
					mu.Lock()
					runs = append(runs, since(clk))
					mu.Unlock()
					return nil
				}, time.Hour, time.Hour)
				require.NoError(t, err)
				require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), clk, s, 3*time.Hour))
				mu.Lock()
				defer mu.Unlock()
				require.Equal(t, []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour}, runs)
			}()
		}
	})
}

// idlerFunc adapts a function to AdvanceAndSettle's idler.
type idlerFunc func(ctx context.Context) error

func (f idlerFunc) AwaitIdle(ctx context.Context) error { return f(ctx) }
