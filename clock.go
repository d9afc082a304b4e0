package scheduler

import "time"

// The Clock seam: every reading of time and every timed wait of the
// scheduler goes through a Clock, so tests can replace real time.

// Clock is the scheduler's only source of time: every trigger time, delay
// and timed wait goes through it. The default is the system clock (monotonic
// readings and runtime timers); tests typically pass a manual clock such as
// schedulertest.NewManualClock, or run the scheduler on the system clock
// inside a testing/synctest bubble. The JDK counterpart is System.nanoTime
// together with the timed waits of the DelayedWorkQueue.
//
// A Clock must be safe for use by many goroutines at once. Now must never go
// backwards.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a started Timer that delivers the clock's time on C
	// once d has elapsed on this clock. A d <= 0 fires at once.
	NewTimer(d time.Duration) Timer
}

// Timer is the timed-wait half of a Clock (the JDK's Condition.awaitNanos).
// It must behave as a *time.Timer does since Go 1.23: C has room for one
// value, and after Reset or Stop returns no value from before the call is
// received from C.
//
// A Timer of a fake clock should also have a method ResetAt(t time.Time)
// bool that arms it to fire once its clock reads t (at once if it already
// does), reporting whether it was active; schedulertest's timers have it.
// The scheduler then arms the timer for the head's trigger time itself, so
// a test that moves the clock while a worker arms its timer cannot make it
// late. Without it the scheduler re-reads the clock once after arming.
type Timer interface {
	// C returns the channel on which the timer delivers its firing.
	C() <-chan time.Time
	// Reset re-arms the timer to fire after d and reports whether it was
	// active before the call.
	Reset(d time.Duration) bool
	// Stop disarms the timer and reports whether it was active.
	Stop() bool
}

// instantTimer is a Timer that can also be armed for an instant on its
// clock rather than for a span from the clock's current reading:
// ResetAt(t) re-arms it to fire once its clock reads t (at once when t is
// not after the clock's current time) and reports whether it was active,
// as Reset does. A fake clock's timers should have it (schedulertest's
// do): the scheduler then arms them for the head's trigger time itself, so
// a test that moves the clock while a worker arms its timer never makes
// the timer late. The scheduler finds the method by a type assertion.
type instantTimer interface {
	Timer
	ResetAt(t time.Time) bool
}

// SystemClock returns the real clock, the default (JDK System.nanoTime and
// the queue's timed waits): time.Now and runtime timers. Inside a
// testing/synctest bubble it reads and waits on the bubble's fake time, so a
// scheduler created in the bubble runs on virtual time.
func SystemClock() Clock { return systemClock{} }

// systemClock is the default Clock. It is a distinct type so the queue can
// recognise it: it reads it through time.Since, and skips the second
// reading after arming that only fake clocks need (see armLocked in
// leader.go).
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTimer(d time.Duration) Timer { return &systemTimer{t: time.NewTimer(d)} }

// systemTimer adapts *time.Timer to Timer.
type systemTimer struct{ t *time.Timer }

func (t *systemTimer) C() <-chan time.Time        { return t.t.C }
func (t *systemTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }
func (t *systemTimer) Stop() bool                 { return t.t.Stop() }
