package scheduler_test

// Regression tests for AwaitIdle and AdvanceAndSettle, for bugs found
// while writing the clock suite (fixed).

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

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
	mu   sync.Mutex    // guards gate
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
