package scheduler_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
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
