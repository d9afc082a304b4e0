// Package manualclock is the one manual clock of this module's tests: a clock
// whose time moves only when a test moves it, with timers that fire on the
// way, in due order. schedulertest.ManualClock exports it, and the scheduler
// package's own tests (which cannot import schedulertest, since it imports
// the scheduler) use it directly. It imports nothing of this module, so both
// can.
package manualclock

import (
	"cmp"
	"container/heap"
	"context"
	"slices"
	"sync"
	"time"
)

// Clock is a clock whose time moves only when Advance or Set is called. Create
// one with New; the zero value is not usable. All methods are safe for
// concurrent use.
type Clock struct {
	// mu guards every field below and the state of every timer of this
	// clock (due, seq, index, and sends into and drains of C), so that
	// firing, stopping and resetting a timer are atomic with respect to
	// each other. It is never held while an AfterFunc callback runs.
	mu sync.Mutex
	// now is the clock's current time. It never goes backwards.
	now time.Time
	// seq numbers timer armings, so that timers due at the same instant
	// fire in the order they were armed.
	seq uint64
	// timers holds the live timers: armed, not yet fired or stopped.
	timers timerHeap
	// changed, when not nil, is closed and cleared whenever the number of
	// live timers changes. BlockUntilWaiters makes it and waits on it
	// instead of polling; it stays nil while nobody waits, so that
	// arming and firing timers allocate nothing.
	changed chan struct{}
}

// New returns a Clock that reads start until it is moved by Advance or Set.
func New(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that sends its due time, Now()+d, on C once the
// clock reaches it. As with time.NewTimer, a d <= 0 fires at once: the value
// is already in C when NewTimer returns.
func (c *Clock) NewTimer(d time.Duration) *Timer {
	t := &Timer{clk: c, index: -1, c: make(chan time.Time, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armLocked(t, d)
	return t
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
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	t := &Timer{clk: c, index: -1, f: f}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armLocked(t, d)
	return t.Stop
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
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		return
	}
	c.mu.Lock()
	c.advanceToLocked(c.now.Add(d))
	c.mu.Unlock()
}

// Set moves the clock forward to t, firing the timers on the way exactly as
// Advance(t.Sub(Now())) does. A t before Now() does nothing.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.advanceToLocked(t)
	c.mu.Unlock()
}

// advanceToLocked fires every live timer due at or before target, then moves
// the clock to target (if that is forward). c.mu must be held; it is released
// around each callback and held again on return.
func (c *Clock) advanceToLocked(target time.Time) {
	// Re-read the heap after each firing: a callback may have stopped
	// timers or armed new ones that are due within the jump.
	for len(c.timers) > 0 && !c.timers[0].due.After(target) {
		t := heap.Pop(&c.timers).(*Timer)
		c.notifyLocked()
		c.moveToLocked(t.due)
		if t.f == nil {
			// Channel timer. The send cannot block: every arming
			// drains C first, so the buffer is empty here.
			select {
			case t.c <- t.due:
			default:
			}
			continue
		}
		f := t.f
		c.mu.Unlock()
		f()
		c.mu.Lock()
	}
	c.moveToLocked(target)
}

// moveToLocked sets the clock to t unless that would move it backwards, which
// can only happen when calls to Advance or Set overlap during a callback.
func (c *Clock) moveToLocked(t time.Time) {
	if t.After(c.now) {
		c.now = t
	}
}

// Waiters returns the number of live timers: those armed and not yet fired or
// stopped, channel timers and AfterFunc timers alike. A test uses it to know
// that the code under test has reached its timed wait.
func (c *Clock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// BlockUntilWaiters blocks until Waiters() >= n and returns nil, or returns
// ctx.Err() if ctx is done first. If the count is already reached it returns
// nil at once, even with a done ctx.
func (c *Clock) BlockUntilWaiters(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		reached := len(c.timers) >= n
		if !reached && c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		if reached {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// NextDue returns the earliest due time among the live timers, and false if
// there are none. Tests use it to step the clock from timer to timer.
func (c *Clock) NextDue() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return time.Time{}, false
	}
	return c.timers[0].due, true
}

// Dues returns the due times of the live timers, earliest first (timers due
// at the same instant in the order they were armed).
func (c *Clock) Dues() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := slices.Clone(c.timers)
	slices.SortFunc(live, func(a, b *Timer) int {
		if n := a.due.Compare(b.due); n != 0 {
			return n
		}
		return cmp.Compare(a.seq, b.seq)
	})
	dues := make([]time.Time, len(live))
	for i, t := range live {
		dues[i] = t.due
	}
	return dues
}

// armLocked arms t to fire d from now. A channel timer with d <= 0 fires at
// once; everything else goes into the heap. c.mu must be held and t must not
// be live.
func (c *Clock) armLocked(t *Timer, d time.Duration) {
	// A due time in the past would be one the clock never showed; the
	// timer is due now, as a time.Timer sends the time it fired.
	d = max(d, 0)
	t.due = c.now.Add(d)
	if d == 0 && t.f == nil {
		t.c <- t.due // cannot block: C was drained (or is new)
		return
	}
	c.seq++
	t.seq = c.seq
	heap.Push(&c.timers, t)
	c.notifyLocked()
}

// stopLocked disarms t and drains its channel, reporting whether the timer
// was live or had a value still waiting in C. c.mu must be held.
func (c *Clock) stopLocked(t *Timer) bool {
	active := false
	if t.index >= 0 {
		heap.Remove(&c.timers, t.index)
		c.notifyLocked()
		active = true
	}
	if t.c != nil {
		// Since Go 1.23 a value nobody has received yet counts as
		// not yet delivered: Stop and Reset discard it and report
		// the timer as active, and so do we.
		select {
		case <-t.c:
			active = true
		default:
		}
	}
	return active
}

// notifyLocked wakes every BlockUntilWaiters call so it re-reads the count.
// c.mu must be held.
func (c *Clock) notifyLocked() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// Timer is a timer of a Clock: a channel timer (c set, f nil) from NewTimer,
// or a callback timer (f set, c nil) from AfterFunc. All its fields except
// clk, c and f are guarded by clk.mu.
type Timer struct {
	clk *Clock
	c   chan time.Time
	f   func()

	due   time.Time
	seq   uint64 // arming order, breaks ties between equal due times
	index int    // position in clk.timers, or -1 when not live
}

// C returns the channel on which the timer delivers its due time.
func (t *Timer) C() <-chan time.Time { return t.c }

// Reset re-arms the timer to fire d from the clock's current time (at once if
// d <= 0) and reports whether it was active. No value from before the call is
// received from C afterwards.
func (t *Timer) Reset(d time.Duration) bool {
	c := t.clk
	c.mu.Lock()
	defer c.mu.Unlock()
	active := c.stopLocked(t)
	c.armLocked(t, d)
	return active
}

// ResetAt re-arms the timer to fire once the clock reads at (at once if it
// already does) and reports whether it was active. No value from before the
// call is received from C afterwards. The scheduler arms its timers this
// way, for the head's trigger time itself, so that an Advance made while a
// worker arms its timer cannot make the timer late.
func (t *Timer) ResetAt(at time.Time) bool {
	c := t.clk
	c.mu.Lock()
	defer c.mu.Unlock()
	active := c.stopLocked(t)
	c.armLocked(t, at.Sub(c.now))
	return active
}

// Stop disarms the timer and reports whether it was active. No value from
// before the call is received from C afterwards.
func (t *Timer) Stop() bool {
	c := t.clk
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopLocked(t)
}

// timerHeap is a min-heap of live timers ordered by (due, seq), for
// container/heap. Each timer keeps its index up to date so Stop and Reset can
// remove it in O(log n).
type timerHeap []*Timer

func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}

func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *timerHeap) Push(x any) {
	t := x.(*Timer)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil // let the timer be collected
	t.index = -1
	*h = old[:n-1]
	return t
}
