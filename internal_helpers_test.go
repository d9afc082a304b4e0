package scheduler

// The helpers the internal tests (package scheduler) share: this package
// cannot import schedulertest (it imports this one), so time comes from
// fakeClock, a small fake Clock that also counts its armed timers and
// records which goroutines read it; newTestScheduler builds a scheduler on
// it.

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitLimit bounds every wait that must end, so that a bug fails a test
// instead of hanging the package. No test waits for it to pass.
const waitLimit = 10 * time.Second

// fakeClock is a Clock whose time moves only by Advance. It keeps every
// timer it made, so it can say how many are armed, and, while tracking,
// records which goroutines called Now.
type fakeClock struct {
	mu     sync.Mutex // guards every field below and the timers' fields
	now    time.Time
	timers []*fakeTimer // every timer made, armed or not
	arms   int          // NewTimer and Reset calls

	tracking bool
	skip     uint64              // a goroutine whose calls are not recorded
	callers  map[uint64]struct{} // goroutines that called Now while tracking
}

// fakeTimer is a timer of an fakeClock.
type fakeTimer struct {
	clk   *fakeClock
	c     chan time.Time // capacity 1; drained on every Reset and Stop
	due   time.Time
	armed bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(0, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracking {
		if id := goroutineID(); id != c.skip {
			c.callers[id] = struct{}{}
		}
	}
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{clk: c, c: make(chan time.Time, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, t)
	c.armLocked(t, d)
	return t
}

// armLocked arms t to fire d from now, at once if d <= 0.
func (c *fakeClock) armLocked(t *fakeTimer, d time.Duration) {
	c.arms++
	select {
	case <-t.c:
	default:
	}
	if d <= 0 {
		t.armed = false
		t.c <- c.now
		return
	}
	t.armed, t.due = true, c.now.Add(d)
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.clk.mu.Lock()
	defer t.clk.mu.Unlock()
	was := t.armed
	t.clk.armLocked(t, d)
	return was
}

func (t *fakeTimer) Stop() bool {
	t.clk.mu.Lock()
	defer t.clk.mu.Unlock()
	was := t.armed
	t.armed = false
	select {
	case <-t.c:
	default:
	}
	return was
}

// Advance moves the clock by d and fires every armed timer that came due.
// It allocates nothing.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, t := range c.timers {
		if t.armed && !t.due.After(c.now) {
			t.armed = false
			t.c <- t.due // empty: drained when armed, and sent to once per arming
		}
	}
}

// armed returns the number of armed timers and the due times they wait for,
// as offsets from the Unix epoch.
func (c *fakeClock) armed() (n int, dues []time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if t.armed {
			n++
			dues = append(dues, t.due.Sub(time.Unix(0, 0)))
		}
	}
	return n, dues
}

// track runs f and returns how many goroutines, other than the caller,
// called Now meanwhile: every worker that woke up while the queue was not
// empty, because a worker reads the clock each time it looks at the head.
func (c *fakeClock) track(f func()) int {
	c.mu.Lock()
	c.tracking, c.skip, c.callers = true, goroutineID(), map[uint64]struct{}{}
	c.mu.Unlock()
	f()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tracking = false
	return len(c.callers)
}

// goroutineID returns the calling goroutine's id, read from its
// stack header ("goroutine 42 [running]:").
func goroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	id, err := strconv.ParseUint(strings.Fields(string(buf[:n]))[1], 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// newTestScheduler returns a scheduler on clk, stopped and awaited at the end of
// the test (or of the synctest bubble, when called inside one).
func newTestScheduler(t *testing.T, pool int, clk Clock, opts ...Option) *Scheduler {
	t.Helper()
	s, err := New(pool, append([]Option{WithClock(clk), WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		s.ShutdownNow()
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		require.NoError(t, s.AwaitTermination(ctx))
	})
	return s
}

// nop is a task that does nothing.
func nop(context.Context) error { return nil }

// testCtx returns a context for waits that must end, cut off after
// waitLimit so that a bug fails the test instead of hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}
