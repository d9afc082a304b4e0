package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// The scheduler works on every Clock a user can write: clocks that read real
// time with an offset, wrap the system clock or truncate it, and manual
// clocks whether or not their timers can be armed for an instant. It never
// waits for a clock to stand still while it holds the queue's lock.

// offsetClock reads real time shifted by a fixed offset, as a replica whose
// clock runs ahead or behind.
type offsetClock struct{ offset time.Duration }

func (c offsetClock) Now() time.Time { return time.Now().Add(c.offset) }

func (c offsetClock) NewTimer(d time.Duration) scheduler.Timer {
	return scheduler.SystemClock().NewTimer(d)
}

// wrappedClock wraps the system clock: a distinct type, as a user's
// instrumented clock would be.
type wrappedClock struct{ scheduler.Clock }

// truncatingClock reads real time truncated to the millisecond, as a clock
// of coarse resolution does.
type truncatingClock struct{ scheduler.Clock }

func (c truncatingClock) Now() time.Time { return c.Clock.Now().Truncate(time.Millisecond) }

// TestRealTimeClocksDoNotHoldTheQueue: with a task queued an hour ahead, a
// second Schedule returns and its task runs on every clock that reads real
// time. A queue that waited, holding its lock, for such a clock to stand
// still would block the second Schedule for the hour; the generous deadline
// below only bounds the failure.
func TestRealTimeClocksDoNotHoldTheQueue(t *testing.T) {
	clocks := map[string]scheduler.Clock{
		"offset ahead":  offsetClock{offset: 40 * time.Millisecond},
		"offset behind": offsetClock{offset: -1500 * time.Millisecond},
		"wrapped":       wrappedClock{scheduler.SystemClock()},
		"truncated":     truncatingClock{scheduler.SystemClock()},
	}
	for name, clk := range clocks {
		t.Run(name, func(t *testing.T) {
			s, err := scheduler.New(2, scheduler.WithClock(clk))
			require.NoError(t, err)
			defer stopNow(t, s)

			far, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			// The far task's leader is parked once AwaitIdle returns
			// (on a real clock: nothing is due now).
			require.NoError(t, s.AwaitIdle(testCtx(t)))

			const delay = 5 * time.Millisecond
			scheduled := clk.Now()
			startedBy := make(chan time.Time, 1)
			f, err := s.Schedule(func(context.Context) error {
				startedBy <- clk.Now()
				return nil
			}, delay)
			require.NoError(t, err)
			require.NoError(t, f.Wait(testCtx(t)))
			started := recv(t, startedBy)
			require.False(t, started.Before(scheduled.Add(delay)),
				"started at %v by the clock, before its due time %v", started, scheduled.Add(delay))
			require.False(t, far.IsDone(), "the far task ran early")
		})
	}
}

// hookedClock is a manual clock for a user's test: its timers have no
// ResetAt, and before each of the first arms armings it runs onArm, which
// moves the clock. That puts an Advance exactly between the worker's reading
// of the clock and its arming of the timer, the window a fake clock can
// make a timer late in.
type hookedClock struct {
	*schedulertest.ManualClock
	// mu guards arms and onArm.
	mu    sync.Mutex
	arms  int
	onArm func(arming int)
}

func (c *hookedClock) hook() {
	c.mu.Lock()
	c.arms++
	n, f := c.arms, c.onArm
	c.mu.Unlock()
	if f != nil {
		f(n)
	}
}

func (c *hookedClock) NewTimer(d time.Duration) scheduler.Timer {
	c.hook()
	return hookedTimer{t: c.ManualClock.NewTimer(d), c: c}
}

// hookedTimer hides the manual timer's ResetAt, so the scheduler arms it
// by delay, as it would a user's timer.
type hookedTimer struct {
	t scheduler.Timer
	c *hookedClock
}

func (t hookedTimer) C() <-chan time.Time { return t.t.C() }
func (t hookedTimer) Stop() bool          { return t.t.Stop() }
func (t hookedTimer) Reset(d time.Duration) bool {
	t.c.hook()
	return t.t.Reset(d)
}

// instantHookedClock is hookedClock whose timers keep ResetAt, with the
// hook run before it too.
type instantHookedClock struct{ *hookedClock }

func (c instantHookedClock) NewTimer(d time.Duration) scheduler.Timer {
	return instantHookedTimer{c.hookedClock.NewTimer(d).(hookedTimer)}
}

type instantHookedTimer struct{ hookedTimer }

func (t instantHookedTimer) ResetAt(at time.Time) bool {
	t.c.hook()
	return t.t.(interface{ ResetAt(time.Time) bool }).ResetAt(at)
}

// TestAdvanceDuringArmingIsNeverMissed: an Advance that lands between a
// worker's reading of the clock and the arming of its timer, once or again
// at the re-arming, still fires the head exactly at its trigger time, with
// Advance(d); AwaitIdle(ctx), whether or not the clock's timers have
// ResetAt. None of this depends on the clock standing still.
func TestAdvanceDuringArmingIsNeverMissed(t *testing.T) {
	const delay = 10 * time.Second
	cases := []struct {
		name    string
		instant bool
		// steps says how far each of the first armings moves the
		// clock, as a fraction of delay (their sum is delay).
		steps []time.Duration
	}{
		{"by delay, moved once", false, []time.Duration{delay}},
		{"by delay, moved at the arming and again at the re-arming", false, []time.Duration{delay / 2, delay / 2}},
		{"by delay, moved three times", false, []time.Duration{delay / 4, delay / 4, delay / 2}},
		{"by instant, moved once", true, []time.Duration{delay}},
		{"by instant, moved twice", true, []time.Duration{delay / 2, delay / 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			manual := schedulertest.NewManualClock(epoch)
			hooked := &hookedClock{ManualClock: manual}
			var clk scheduler.Clock = hooked
			if tc.instant {
				clk = instantHookedClock{hooked}
			}
			s, err := scheduler.New(1, scheduler.WithClock(clk))
			require.NoError(t, err)
			defer stopNow(t, s)

			ran := make(chan scheduler.RunInfo, 1)
			hooked.mu.Lock()
			hooked.onArm = func(n int) {
				if n <= len(tc.steps) {
					manual.Advance(tc.steps[n-1])
				}
			}
			hooked.mu.Unlock()
			_, err = s.Schedule(func(ctx context.Context) error {
				info, _ := scheduler.CurrentRun(ctx)
				ran <- info
				return nil
			}, delay)
			require.NoError(t, err)
			require.NoError(t, s.AwaitIdle(testCtx(t)))

			info := recv(t, ran, "the head was not fired though the clock reached it")
			require.Equal(t, epoch.Add(delay), info.Due)
			require.Equal(t, info.Due, info.Started, "started late by the clock")
			require.Equal(t, epoch.Add(delay), manual.Now())
		})
	}
}

// TestManualClockTimersHaveResetAt: schedulertest's timers can be armed for
// an instant, which is how the scheduler arms them exactly.
func TestManualClockTimersHaveResetAt(t *testing.T) {
	clk := schedulertest.NewManualClock(epoch)
	tm := clk.NewTimer(time.Hour)
	at, ok := tm.(interface{ ResetAt(time.Time) bool })
	require.True(t, ok)
	require.True(t, at.ResetAt(epoch.Add(time.Second)), "the timer was active")
	clk.Advance(time.Second - 1)
	select {
	case <-tm.C():
		t.Fatal("fired before its instant")
	default:
	}
	clk.Advance(1)
	require.Equal(t, epoch.Add(time.Second), recv(t, tm.C()))
	require.False(t, at.ResetAt(epoch), "the timer had fired")
	require.Equal(t, epoch.Add(time.Second), recv(t, tm.C()), "an instant in the past fires at once, with the clock's time")
}
