package schedulertest

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/internal/manualclock"
)

// ManualClock is a scheduler.Clock whose time moves only when Advance or Set
// is called. Create one with NewManualClock; the zero value is not usable.
// All methods are safe for concurrent use.
//
// It exports the module's one manual clock (internal/manualclock), which the
// scheduler package's own tests use too.
type ManualClock struct {
	clk *manualclock.Clock
}

// compile-time check that ManualClock satisfies the interface it stands in for.
var _ scheduler.Clock = (*ManualClock)(nil)

// NewManualClock returns a ManualClock that reads start until it is moved by
// Advance or Set.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{clk: manualclock.New(start)}
}

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time { return c.clk.Now() }

// NewTimer returns a timer that sends its due time, Now()+d, on C once the
// clock reaches it. As with time.NewTimer, a d <= 0 fires at once: the value
// is already in C when NewTimer returns.
func (c *ManualClock) NewTimer(d time.Duration) scheduler.Timer {
	// The timer's Reset, ResetAt and Stop keep their rules: Reset and
	// ResetAt re-arm it (at once for a time already reached) and, like
	// Stop, report whether it was active; no value from before the call
	// is received from C afterwards. ResetAt lets the scheduler arm it for
	// the head's trigger time itself, so that an Advance made while a
	// worker arms its timer cannot make the timer late.
	return c.clk.NewTimer(d)
}

// AfterFunc arranges for f to be called once the clock reaches Now()+d. The
// call is made by the Advance or Set that reaches that time, synchronously,
// on that caller's goroutine, without the clock's lock held (so f may call
// into the clock, even arm further timers), and while Now returns exactly the
// due time. A d <= 0 makes f due at the current time: it runs on the next
// Advance or Set, even Advance(0), not inside AfterFunc.
//
// The returned stop function cancels the call; like time.Timer.Stop it
// reports whether it did so, which is false once f has been called or stop
// has already succeeded.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	return c.clk.AfterFunc(d, f)
}

// Advance moves the clock forward by d, firing on the way, in due order, every
// timer due at or before Now()+d; timers due at the same instant fire in the
// order they were armed. Before firing each timer it sets the clock to that
// timer's due time, so the timer sees its own due time. A channel timer
// receives its due time on C; an AfterFunc callback is called before Advance
// moves on. A timer armed by a callback for a time still within the jump
// fires within the same Advance (so a callback that keeps re-arming itself
// with d <= 0 makes Advance loop forever, as it would busy-loop on a real
// clock). When Advance returns the clock reads the old Now()+d.
//
// A negative d does nothing: the clock never goes backwards, because the
// scheduler relies on Now being monotonic.
//
// Concurrent calls to Advance and Set are safe, but they interleave while a
// callback runs, and then a callback may see a later time than its due time.
func (c *ManualClock) Advance(d time.Duration) { c.clk.Advance(d) }

// Set moves the clock forward to t, firing the timers on the way exactly as
// Advance(t.Sub(Now())) does. A t before Now() does nothing.
func (c *ManualClock) Set(t time.Time) { c.clk.Set(t) }

// Waiters returns the number of live timers: those armed and not yet fired or
// stopped, channel timers and AfterFunc timers alike. A test uses it to know
// that the code under test has reached its timed wait.
func (c *ManualClock) Waiters() int { return c.clk.Waiters() }

// BlockUntilWaiters blocks until Waiters() >= n and returns nil, or returns
// ctx.Err() if ctx is done first. If the count is already reached it returns
// nil at once, even with a done ctx.
func (c *ManualClock) BlockUntilWaiters(ctx context.Context, n int) error {
	return c.clk.BlockUntilWaiters(ctx, n)
}

// NextDue returns the earliest due time among the live timers, and false if
// there are none. Tests use it to step the clock from timer to timer.
func (c *ManualClock) NextDue() (time.Time, bool) { return c.clk.NextDue() }
