package scheduler_test

// Bad input to every call that submits a task: a nil task, a submission
// after Shutdown, ShutdownNow or termination, zero, negative and extreme
// delays, and bad periods and initial delays of the periodic calls.

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// submittersDueNow lists every way to submit a task due now (periodic ones
// every hour), for the rows that hold for all of them.
var submittersDueNow = entryPointsAt(0, time.Hour)

// addBadSubmitRows adds the rows for every submission: a nil task, a call
// after Shutdown, ShutdownNow or termination, zero, negative and extreme
// delays, and bad periods and initial delays.
func addBadSubmitRows(add func(...badCase)) {
	for _, sub := range submittersDueNow {
		add(badCase{name: sub.name + "/nil task: ErrInvalidArgument, nothing queued", run: func(t *testing.T, e *badEnv) {
			f, err := sub.submit(e.s, nil)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, f)
			e.nothingQueued(t)
		}})
		for _, stop := range []struct {
			name string
			do   func(t *testing.T, e *badEnv)
		}{
			{"after Shutdown", func(t *testing.T, e *badEnv) { e.s.Shutdown() }},
			{"after ShutdownNow", func(t *testing.T, e *badEnv) { e.s.ShutdownNow() }},
			{"after termination", func(t *testing.T, e *badEnv) {
				e.s.Shutdown()
				require.NoError(t, e.s.AwaitTermination(e.ctx))
			}},
		} {
			add(badCase{name: sub.name + "/" + stop.name + ": ErrRejected", run: func(t *testing.T, e *badEnv) {
				stop.do(t, e)
				var ran atomic.Int32
				f, err := sub.submit(e.s, countRuns(&ran))
				require.ErrorIs(t, err, scheduler.ErrRejected)
				require.Nil(t, f)
				require.NoError(t, e.s.AwaitTermination(e.ctx))
				require.Zero(t, ran.Load())
				st := e.s.Stats()
				require.Equal(t, uint64(1), st.Rejected)
				require.Equal(t, uint64(1), st.Canceled, "the rejected task's future is canceled")
				require.Zero(t, st.Queued)
			}})
		}
	}

	// --- Schedule: delays -------------------------------------------------
	for _, d := range []time.Duration{0, -1, -time.Hour, math.MinInt64} {
		add(badCase{name: fmt.Sprintf("Schedule/delay %v: runs now", d), run: func(t *testing.T, e *badEnv) {
			var ran atomic.Int32
			f, err := e.s.Schedule(countRuns(&ran), d)
			require.NoError(t, err)
			require.Zero(t, f.Delay(), "a delay <= 0 is clamped to 0")
			require.NoError(t, f.Wait(e.ctx))
			require.Equal(t, int32(1), ran.Load())
		}})
	}
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 >> 1, math.MaxInt64>>1 - 1} {
		add(badCase{name: fmt.Sprintf("Schedule/delay %d: queued far away, near tasks still run first", d), run: func(t *testing.T, e *badEnv) {
			e.settle(t, time.Hour) // the clock is no longer at its origin: now+delay wraps
			var far, near atomic.Int32
			ff, err := e.s.Schedule(countRuns(&far), d)
			require.NoError(t, err)
			require.Equal(t, d, ff.Delay())
			fn, err := e.s.Schedule(countRuns(&near), time.Minute)
			require.NoError(t, err)
			require.Equal(t, []scheduler.ScheduledFuture{fn, ff}, e.s.Queue())
			e.settle(t, 1000*time.Hour)
			require.Equal(t, int32(1), near.Load())
			require.Zero(t, far.Load())
			require.Equal(t, d-1000*time.Hour, ff.Delay())
		}})
	}
	add(badCase{name: "Schedule/delay MaxInt64 while the head is overdue: ordered after it (overflowFree)", run: func(t *testing.T, e *badEnv) {
		started := make(chan struct{})
		blocker, err := e.s.Submit(blockUntilCanceled(started)) // holds the only worker
		require.NoError(t, err)
		<-started
		var order recorder[string]
		rec := func(name string) scheduler.Task {
			return func(context.Context) error { order.add(name); return nil }
		}
		_, err = e.s.Schedule(rec("overdue"), time.Minute)
		require.NoError(t, err)
		e.clk.Advance(time.Hour) // the head is 59m overdue; the worker is busy
		far, err := e.s.Schedule(rec("far"), math.MaxInt64)
		require.NoError(t, err)
		require.Positive(t, far.Delay())
		require.True(t, blocker.Cancel(true))
		require.NoError(t, e.s.AwaitIdle(e.ctx))
		e.settle(t, 1000*time.Hour)
		require.Equal(t, []string{"overdue"}, order.get())
		require.Equal(t, []scheduler.ScheduledFuture{far}, e.s.Queue())
	}})
	add(badCase{name: "Schedule/ContinueOnError on a one-shot: ignored", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(func(context.Context) error { return errBoom }, 0, scheduler.ContinueOnError())
		require.NoError(t, err)
		require.ErrorIs(t, f.Wait(e.ctx), errBoom)
		require.True(t, f.IsDone())
		require.False(t, f.IsPeriodic())
	}})
	add(badCase{name: "Schedule/WithName(\"\"): unnamed", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, 0, scheduler.WithName(""))
		require.NoError(t, err)
		require.Empty(t, f.Name())
		require.NoError(t, f.Wait(e.ctx))
	}})

	// --- periodic: periods and initial delays -----------------------------
	periodic := []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task, initial, period time.Duration) (scheduler.ScheduledFuture, error)
	}{
		{"ScheduleAtFixedRate", func(s *scheduler.Scheduler, task scheduler.Task, initial, period time.Duration) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, initial, period)
		}},
		{"ScheduleWithFixedDelay", func(s *scheduler.Scheduler, task scheduler.Task, initial, period time.Duration) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, initial, period)
		}},
	}
	for _, p := range periodic {
		for _, period := range []time.Duration{0, -1, -time.Hour, math.MinInt64} {
			add(badCase{name: fmt.Sprintf("%s/period or delay %v: ErrInvalidArgument, nothing queued", p.name, period), run: func(t *testing.T, e *badEnv) {
				f, err := p.schedule(e.s, nop, 0, period)
				require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
				require.Nil(t, f)
				e.nothingQueued(t)
			}})
		}
		for _, initial := range []time.Duration{-time.Nanosecond, -10 * time.Hour, math.MinInt64} {
			add(badCase{name: fmt.Sprintf("%s/initial delay %v: one run now, no catch-up burst", p.name, initial), run: func(t *testing.T, e *badEnv) {
				var ran atomic.Int32
				f, err := p.schedule(e.s, countRuns(&ran), initial, time.Hour)
				require.NoError(t, err)
				require.NoError(t, e.s.AwaitIdle(e.ctx))
				require.Equal(t, int32(1), ran.Load())
				require.Equal(t, time.Hour, f.Delay())
				e.settle(t, time.Hour)
				require.Equal(t, int32(2), ran.Load())
			}})
		}
		add(badCase{name: p.name + "/initial delay MaxInt64: never due", run: func(t *testing.T, e *badEnv) {
			var ran atomic.Int32
			f, err := p.schedule(e.s, countRuns(&ran), math.MaxInt64, time.Nanosecond)
			require.NoError(t, err)
			e.settle(t, 1000*time.Hour)
			require.Zero(t, ran.Load())
			require.Positive(t, f.Delay())
		}})
		add(badCase{name: p.name + "/period MaxInt64: runs once, next run far away", run: func(t *testing.T, e *badEnv) {
			e.settle(t, time.Hour) // next run time now+MaxInt64 wraps
			var ran, near atomic.Int32
			f, err := p.schedule(e.s, countRuns(&ran), time.Minute, math.MaxInt64)
			require.NoError(t, err)
			e.settle(t, time.Minute)
			require.Equal(t, int32(1), ran.Load())
			require.Positive(t, f.Delay())
			_, err = e.s.Schedule(countRuns(&near), time.Minute)
			require.NoError(t, err)
			e.settle(t, 1000*time.Hour)
			require.Equal(t, int32(1), ran.Load())
			require.Equal(t, int32(1), near.Load())
			require.Equal(t, []scheduler.ScheduledFuture{f}, e.s.Queue())
		}})
	}
}
