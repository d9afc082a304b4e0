package scheduler_test

// AwaitIdle (idle.go): waiting costs nothing; Advance + AwaitIdle on
// the manual clock is exact, also with the clock used from many goroutines;
// and the regressions found while writing the clock suite.

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

// --- regression tests for bugs found while writing the clock suite (fixed) ---

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
				var runs recorder[time.Duration]
				_, err := s.ScheduleAtFixedRate(func(context.Context) error {
					runs.add(since(clk))
					return nil
				}, time.Hour, time.Hour)
				require.NoError(t, err)
				require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), clk, s, 3*time.Hour))
				require.Equal(t, []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour}, runs.get())
			}()
		}
	})
}

// idlerFunc adapts a function to AdvanceAndSettle's idler.
type idlerFunc func(ctx context.Context) error

func (f idlerFunc) AwaitIdle(ctx context.Context) error { return f(ctx) }
