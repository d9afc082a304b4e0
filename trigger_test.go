package scheduler_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// everyTen is a trigger that fires on every whole 10 seconds of wall time.
var everyTen = scheduler.TriggerFunc(func(t time.Time) time.Time {
	return t.Truncate(10 * time.Second).Add(10 * time.Second)
})

func TestTriggerRunsAtTheTriggersTimes(t *testing.T) {
	s, clk := newManual(t, 1)
	clk.Advance(3 * time.Second) // not on the grid: the first run is at 10 s
	var r dueRecorder
	f, err := s.ScheduleWithTrigger(r.task, everyTen, scheduler.WithName("ten"))
	require.NoError(t, err)
	require.True(t, f.IsPeriodic())
	require.Equal(t, 7*time.Second, f.Delay())
	advance(t, clk, s, 6*time.Second)
	require.Empty(t, r.get(), "nothing before 10 s")
	advance(t, clk, s, time.Second)
	require.Equal(t, []time.Duration{10 * time.Second}, r.get())
	for range 3 {
		advance(t, clk, s, 10*time.Second)
	}
	require.Equal(t, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 40 * time.Second}, r.get())
	require.Equal(t, 10*time.Second, f.Delay())
	st := s.Stats()
	require.Equal(t, uint64(4), st.Completed)
	require.Equal(t, 1, st.Queued)
	requireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
	require.True(t, f.Cancel(false))
	require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
}

func TestTriggerNextIsAskedAfterThePreviousDueTime(t *testing.T) {
	// Each later run is at the trigger's next time after the
	// previous run's due time, not after its end.
	s, clk := newManual(t, 1)
	var args recorder[time.Duration]
	trig := scheduler.TriggerFunc(func(t time.Time) time.Time {
		args.add(t.Sub(epoch))
		return t.Truncate(10 * time.Second).Add(10 * time.Second)
	})
	_, err := s.ScheduleWithTrigger(func(context.Context) error {
		clk.Advance(4 * time.Second) // a run that takes 4 s
		return nil
	}, trig)
	require.NoError(t, err)
	require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), clk, s, 30*time.Second))
	require.Equal(t, []time.Duration{0, 10 * time.Second, 20 * time.Second, 30 * time.Second}, args.get())
}

func TestTriggerEndsWhenNextReturnsZero(t *testing.T) {
	t.Run("after two runs", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var n atomic.Int32
		calls := 0
		trig := scheduler.TriggerFunc(func(t time.Time) time.Time {
			calls++
			if calls > 2 {
				return time.Time{}
			}
			return t.Add(time.Second)
		})
		f, err := s.ScheduleWithTrigger(countRuns(&n), trig)
		require.NoError(t, err)
		advance(t, clk, s, time.Second)
		advance(t, clk, s, time.Second)
		require.Equal(t, int32(2), n.Load())
		require.True(t, f.IsDone())
		require.False(t, f.IsCanceled())
		require.NoError(t, f.Wait(testCtx(t)))
		require.Zero(t, s.Stats().Queued)
	})
	t.Run("before the first run", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var n atomic.Int32
		f, err := s.ScheduleWithTrigger(countRuns(&n), scheduler.TriggerFunc(func(time.Time) time.Time { return time.Time{} }))
		require.NoError(t, err)
		advance(t, clk, s, time.Hour)
		require.Zero(t, n.Load())
		require.True(t, f.IsDone())
		require.False(t, f.IsCanceled())
		require.NoError(t, f.Wait(testCtx(t)))
	})
}

func TestBrokenTriggerFailsTheTaskAndNeverSpins(t *testing.T) {
	notAfter := func(calls int) scheduler.Trigger {
		n := 0
		return scheduler.TriggerFunc(func(t time.Time) time.Time {
			n++
			if n > calls {
				return t // not after its argument
			}
			return t.Add(time.Second)
		})
	}
	panics := func(calls int) scheduler.Trigger {
		n := 0
		return scheduler.TriggerFunc(func(t time.Time) time.Time {
			n++
			if n > calls {
				panic("calendar on fire")
			}
			return t.Add(time.Second)
		})
	}
	t.Run("not after, on a later call", func(t *testing.T) {
		logger, logs := newLogger()
		s, clk := newManual(t, 1, scheduler.WithLogger(logger))
		f, err := s.ScheduleWithTrigger(nop, notAfter(1), scheduler.WithName("stuck"))
		require.NoError(t, err)
		advance(t, clk, s, time.Second)
		require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrInvalidArgument)
		require.False(t, f.IsCanceled())
		logs.requireErrorRecord(t, "stuck", "not after")
		require.Zero(t, s.Stats().Queued)
	})
	t.Run("panics, on a later call", func(t *testing.T) {
		logger, logs := newLogger()
		s, clk := newManual(t, 1, scheduler.WithLogger(logger))
		f, err := s.ScheduleWithTrigger(nop, panics(1), scheduler.WithName("boom"))
		require.NoError(t, err)
		advance(t, clk, s, time.Second)
		var pe *scheduler.PanicError
		require.ErrorAs(t, f.Wait(testCtx(t)), &pe)
		require.Equal(t, "calendar on fire", pe.Value)
		logs.requireErrorRecord(t, "boom", "calendar on fire")
	})
	t.Run("on the first call", func(t *testing.T) {
		s, _ := newManual(t, 1)
		_, err := s.ScheduleWithTrigger(nop, notAfter(0))
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		_, err = s.ScheduleWithTrigger(nop, panics(0))
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe)
		require.Zero(t, s.Stats().Queued, "nothing is queued")
	})
}

func TestScheduleWithTriggerRejectsNils(t *testing.T) {
	s, _ := newManual(t, 1)
	_, err := s.ScheduleWithTrigger(nil, everyTen)
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	_, err = s.ScheduleWithTrigger(nop, nil)
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	_, err = s.ScheduleWithTrigger(nop, scheduler.TriggerFunc(nil))
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	require.Zero(t, s.Stats().Queued)
}

func TestTriggerTaskIsPeriodicInEveryOtherRespect(t *testing.T) {
	t.Run("a failed run stops it", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var n atomic.Int32
		f, err := s.ScheduleWithTrigger(func(context.Context) error { n.Add(1); return errBoom }, everyTen)
		require.NoError(t, err)
		advance(t, clk, s, time.Minute)
		require.Equal(t, int32(1), n.Load())
		require.ErrorIs(t, f.Wait(testCtx(t)), errBoom)
	})
	t.Run("unless ContinueOnError", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var n atomic.Int32
		f, err := s.ScheduleWithTrigger(func(context.Context) error { n.Add(1); return errBoom }, everyTen,
			scheduler.ContinueOnError())
		require.NoError(t, err)
		for range 3 {
			advance(t, clk, s, 10*time.Second)
		}
		require.Equal(t, int32(3), n.Load())
		require.False(t, f.IsDone())
	})
	t.Run("shutdown cancels it by default", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := s.ScheduleWithTrigger(nop, everyTen)
		require.NoError(t, err)
		s.Shutdown()
		require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
	})
	t.Run("and keeps it with the continue-existing-periodic policy", func(t *testing.T) {
		s, clk := newManual(t, 1, scheduler.WithContinueExistingPeriodicTasksAfterShutdown(true))
		var n atomic.Int32
		f, err := s.ScheduleWithTrigger(countRuns(&n), everyTen)
		require.NoError(t, err)
		s.Shutdown()
		advance(t, clk, s, 10*time.Second)
		advance(t, clk, s, 10*time.Second)
		require.Equal(t, int32(2), n.Load())
		require.True(t, f.Cancel(false))
	})
	t.Run("Remove and ShutdownNow hand it out", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := s.ScheduleWithTrigger(nop, everyTen)
		require.NoError(t, err)
		g, err := s.ScheduleWithTrigger(nop, everyTen)
		require.NoError(t, err)
		require.True(t, s.Remove(g))
		requireFutures(t, []scheduler.ScheduledFuture{f}, s.ShutdownNow())
	})
	t.Run("runs never overlap", func(t *testing.T) {
		s, clk := newManual(t, 2)
		var running, overlaps, n atomic.Int32
		_, err := s.ScheduleWithTrigger(func(context.Context) error {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			if n.Add(1) == 1 {
				clk.Advance(25 * time.Second) // the first run overruns two due times
			}
			running.Add(-1)
			return nil
		}, everyTen, scheduler.WithMissedRuns(scheduler.CatchUpMissed))
		require.NoError(t, err)
		advance(t, clk, s, 10*time.Second)
		require.Zero(t, overlaps.Load())
		require.Equal(t, int32(3), n.Load(), "the run at 10 s, then 20 s and 30 s caught up, back to back")
	})
}

// steppingClock is a manual clock whose wall-clock reading can be stepped
// apart from the time its timers run on, as NTP steps the system clock.
type steppingClock struct {
	*schedulertest.ManualClock
	mu   sync.Mutex
	step time.Duration
}

func (c *steppingClock) WallNow() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Now().Add(c.step)
}

func (c *steppingClock) stepWall(d time.Duration) {
	c.mu.Lock()
	c.step += d
	c.mu.Unlock()
}

func TestTriggerNeverStartsBeforeItsWallClockTime(t *testing.T) {
	clk := &steppingClock{ManualClock: schedulertest.NewManualClock(epoch)}
	s, err := scheduler.New(1, scheduler.WithClock(clk))
	require.NoError(t, err)
	shutdownAtEnd(t, s)
	var walls, dues recorder[time.Duration]
	_, err = s.ScheduleWithTrigger(func(ctx context.Context) error {
		walls.add(clk.WallNow().Sub(epoch))
		info, _ := scheduler.CurrentRun(ctx)
		dues.add(info.Due.Sub(epoch))
		return nil
	}, everyTen)
	require.NoError(t, err)
	// While the task waits for 10 s, the wall clock is stepped back 4 s:
	// when its timer fires, the wall clock reads 6 s.
	clk.stepWall(-4 * time.Second)
	advance(t, clk.ManualClock, s, 10*time.Second)
	require.Empty(t, walls.get(), "the run must wait for 10 s by the wall clock")
	advance(t, clk.ManualClock, s, 3*time.Second)
	require.Empty(t, walls.get())
	advance(t, clk.ManualClock, s, time.Second)
	require.Equal(t, []time.Duration{10 * time.Second}, walls.get())
	// Stepped forward by 25 s while the next run (20 s) waits 10 s on the
	// timer: it starts when the timer fires, at 45 s by the wall clock,
	// late, and the runs it missed meanwhile (20 s, 30 s, 40 s) are
	// coalesced into one, due at 40 s.
	clk.stepWall(25 * time.Second)
	advance(t, clk.ManualClock, s, 9*time.Second)
	require.Len(t, walls.get(), 1)
	advance(t, clk.ManualClock, s, time.Second)
	require.Equal(t, []time.Duration{10 * time.Second, 45 * time.Second}, walls.get())
	require.Equal(t, []time.Duration{10 * time.Second, 40 * time.Second}, dues.get())
}
