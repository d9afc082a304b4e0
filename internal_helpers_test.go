package scheduler

// The helpers the internal tests (package scheduler) share: this package
// cannot import schedulertest (it imports this one), so time comes from
// fakeClock, the same manual clock as schedulertest's (internal/manualclock)
// with a record of which goroutines read it; newTestScheduler builds a
// scheduler on it.

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

	"github.com/go-stpe/scheduler/internal/manualclock"
)

// waitLimit bounds every wait that must end, so that a bug fails a test
// instead of hanging the package. No test waits for it to pass.
const waitLimit = 10 * time.Second

// fakeClock is the module's one manual clock (internal/manualclock, which
// schedulertest.ManualClock exports too), plus what these tests need beyond
// it: while tracking, it records which goroutines called Now.
type fakeClock struct {
	*manualclock.Clock

	mu       sync.Mutex // guards tracking, skip and callers
	tracking bool
	skip     uint64              // a goroutine whose calls are not recorded
	callers  map[uint64]struct{} // goroutines that called Now while tracking
}

// newFakeClock returns a fakeClock that reads the Unix epoch.
func newFakeClock() *fakeClock { return &fakeClock{Clock: manualclock.New(time.Unix(0, 0))} }

// Now returns the clock's time and, while tracking, records the caller.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	if c.tracking {
		if id := goroutineID(); id != c.skip {
			c.callers[id] = struct{}{}
		}
	}
	c.mu.Unlock()
	return c.Clock.Now()
}

// NewTimer returns a timer of the manual clock, as a Timer.
func (c *fakeClock) NewTimer(d time.Duration) Timer { return c.Clock.NewTimer(d) }

// armed returns the number of armed timers and the due times they wait for,
// as offsets from the Unix epoch, earliest first.
func (c *fakeClock) armed() (n int, dues []time.Duration) {
	for _, due := range c.Dues() {
		n++
		dues = append(dues, due.Sub(time.Unix(0, 0)))
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
		panic("cannot parse the goroutine id from " + string(buf[:n]))
	}
	return id
}

// GoroutineID lends goroutineID to the external tests (package
// scheduler_test), so both kinds of test read goroutine ids one way. Being
// in a _test.go file, it exists only while this package's tests are built.
var GoroutineID = goroutineID

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
