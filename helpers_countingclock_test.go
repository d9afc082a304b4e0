package scheduler_test

// A clock that counts what the scheduler asks of it, for the tests that
// prove a worker did not wake up.

import (
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler"
)

// countingClock wraps a Clock and counts what the scheduler asks of it. Every
// worker wake-up, whether by its timer or by a signal, reads the clock
// before deciding what to do, so an unchanged Now count over a stretch of
// time proves that no worker woke up in it.
type countingClock struct {
	inner  scheduler.Clock
	nows   atomic.Int64 // Now calls
	timers atomic.Int64 // NewTimer calls
	resets atomic.Int64 // Timer.Reset calls
	stops  atomic.Int64 // Timer.Stop calls
}

func (c *countingClock) Now() time.Time {
	c.nows.Add(1)
	return c.inner.Now()
}

func (c *countingClock) NewTimer(d time.Duration) scheduler.Timer {
	c.timers.Add(1)
	return &countingTimer{c: c, t: c.inner.NewTimer(d)}
}

// arms returns how many times a timer was armed: made or reset.
func (c *countingClock) arms() int64 { return c.timers.Load() + c.resets.Load() }

// clockCounts is a snapshot of an countingClock's counters.
type clockCounts struct{ nows, timers, resets, stops int64 }

func (c *countingClock) counts() clockCounts {
	return clockCounts{c.nows.Load(), c.timers.Load(), c.resets.Load(), c.stops.Load()}
}

type countingTimer struct {
	c *countingClock
	t scheduler.Timer
}

func (t *countingTimer) C() <-chan time.Time { return t.t.C() }

func (t *countingTimer) Reset(d time.Duration) bool {
	t.c.resets.Add(1)
	return t.t.Reset(d)
}

func (t *countingTimer) Stop() bool {
	t.c.stops.Add(1)
	return t.t.Stop()
}
