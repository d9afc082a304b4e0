package scheduler_test

// The helpers the external tests share: a scheduler on a manual clock that
// is shut down when the test ends, bounded waits, gates for runs a test
// holds, and future and state checks. The recorders, the entry points and
// the counting clock are in the other helpers_*_test.go files. Each test
// file adds only what is particular to it.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// waitLimit bounds every wait in these tests, so that a bug fails a test
// instead of hanging the package. No test waits for it to pass.
const waitLimit = 10 * time.Second

// epoch is where every manual clock of these tests starts.
var epoch = time.Unix(0, 0)

// errBoom is the error the failing tasks of these tests return.
var errBoom = errors.New("boom")

// nop is a task that does nothing.
func nop(context.Context) error { return nil }

// newManual returns a scheduler with pool workers on a fresh manual
// clock, shut down and awaited when the test ends.
func newManual(t *testing.T, pool int, opts ...scheduler.Option) (*scheduler.Scheduler, *schedulertest.ManualClock) {
	t.Helper()
	clk := schedulertest.NewManualClock(epoch)
	// Panics and failed runs are logged; keep them out of the test output.
	// A caller's WithLogger comes later and wins.
	base := []scheduler.Option{scheduler.WithClock(clk), scheduler.WithLogger(slog.New(slog.DiscardHandler))}
	s, err := scheduler.New(pool, append(base, opts...)...)
	require.NoError(t, err)
	shutdownAtEnd(t, s)
	return s, clk
}

// shutdownAtEnd stops s when the test ends and waits for it to
// terminate, so that goleak finds no worker left.
func shutdownAtEnd(t *testing.T, s *scheduler.Scheduler) {
	t.Helper()
	t.Cleanup(func() { stopNow(t, s) })
}

// stopNow calls ShutdownNow and waits, at most waitLimit, for s to
// terminate. Inside a synctest bubble the limit is on the bubble's clock,
// so a scheduler that never terminates fails the test there too.
func stopNow(t testing.TB, s *scheduler.Scheduler) {
	t.Helper()
	s.ShutdownNow()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := s.AwaitTermination(ctx); err != nil {
		t.Errorf("scheduler did not terminate: %v", err)
	}
}

// testCtx returns a context that ends after waitLimit or with the test.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// doneCtx returns a context that has already ended.
func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// idle waits until the scheduler has done everything that is due.
func idle(t *testing.T, s *scheduler.Scheduler) {
	t.Helper()
	require.NoError(t, s.AwaitIdle(testCtx(t)))
}

// advance moves the clock by d and waits for what came due.
func advance(t *testing.T, clk *schedulertest.ManualClock, s *scheduler.Scheduler, d time.Duration) {
	t.Helper()
	clk.Advance(d)
	idle(t, s)
}

// recv receives from ch, failing the test after waitLimit; msgAndArgs,
// printed with fmt.Sprint, say what the test was waiting for.
func recv[T any](t *testing.T, ch <-chan T, msgAndArgs ...any) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatal("timed out waiting on a channel", fmt.Sprint(msgAndArgs...))
		panic("unreachable")
	}
}

// gate returns a channel for tasks to block on and the function that
// closes it. It is closed at the latest when the test ends, before the
// scheduler is shut down, so that a failing test leaves no worker stuck.
func gate(t *testing.T) (gate <-chan struct{}, open func()) {
	ch := make(chan struct{})
	open = sync.OnceFunc(func() { close(ch) })
	t.Cleanup(open)
	return ch, open
}

// hold is the body of a run the test holds: it reports the start on
// started, then blocks until release opens or the run's ctx is canceled.
func hold(ctx context.Context, started chan struct{}, release <-chan struct{}) {
	close(started)
	select {
	case <-release:
	case <-ctx.Done():
	}
}

// taskGate holds the runs of its tasks until it is opened, and counts the
// runs that started. Where one run is held, gate and hold are enough.
type taskGate struct {
	started chan struct{} // one value per run that started
	release chan struct{} // closed by Open
	once    sync.Once
}

// newTaskGate returns a closed gate that the test's cleanup opens, so that
// a failing test does not leave a task blocked.
func newTaskGate(t *testing.T) *taskGate {
	g := &taskGate{started: make(chan struct{}, 64), release: make(chan struct{})}
	t.Cleanup(g.Open)
	return g
}

// Task blocks until the gate opens or its ctx is canceled, then returns nil.
func (g *taskGate) Task(ctx context.Context) error {
	g.started <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	return nil
}

// Stubborn blocks until the gate opens, ignoring its ctx.
func (g *taskGate) Stubborn(context.Context) error {
	g.started <- struct{}{}
	<-g.release
	return nil
}

// Open lets every run return.
func (g *taskGate) Open() { g.once.Do(func() { close(g.release) }) }

// Start submits task, one of g's, to s and waits until its run has
// started; it returns the future.
func (g *taskGate) Start(t *testing.T, s *scheduler.Scheduler, task scheduler.Task) scheduler.ScheduledFuture {
	t.Helper()
	f, err := s.Submit(task)
	require.NoError(t, err)
	g.WaitStarted(t)
	return f
}

// WaitStarted waits for one run to start.
func (g *taskGate) WaitStarted(t *testing.T) {
	t.Helper()
	recv(t, g.started, "a gated task to start")
}

// countRuns returns a task that counts its runs in n.
func countRuns(n *atomic.Int32) scheduler.Task {
	return func(context.Context) error {
		n.Add(1)
		return nil
	}
}

// goroutineID returns the calling goroutine's id; the internal tests'
// helpers define it (internal_helpers_test.go).
var goroutineID = scheduler.GoroutineID

// requireClosed fails unless ch is closed (or has a value) right now.
func requireClosed(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatal(msg)
	}
}

// requireOpen fails if ch can be received from right now.
func requireOpen(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatal(msg)
	default:
	}
}

// requireFutures fails unless got holds exactly the futures of want, in
// order, compared with ==: the very values the scheduling calls
// returned.
func requireFutures(t *testing.T, want, got []scheduler.ScheduledFuture, msgAndArgs ...any) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	ptrs := func(fs []scheduler.ScheduledFuture) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = fmt.Sprintf("%p %q", f, f.Name()) // a name never changes: no race
		}
		return out
	}
	t.Fatalf("futures differ:\nwant %v\ngot  %v\n%s", ptrs(want), ptrs(got), fmt.Sprint(msgAndArgs...))
}

// requireCanceled checks that f is done and canceled.
func requireCanceled(t *testing.T, f scheduler.ScheduledFuture) {
	t.Helper()
	require.True(t, f.IsDone(), "done")
	require.True(t, f.IsCanceled(), "canceled")
	require.ErrorIs(t, f.Wait(doneCtx()), scheduler.ErrCanceled)
}

// requireRunState checks the three run-state predicates at once.
func requireRunState(t *testing.T, s *scheduler.Scheduler, shutdown, terminating, terminated bool) {
	t.Helper()
	require.Equal(t,
		[3]bool{shutdown, terminating, terminated},
		[3]bool{s.IsShutdown(), s.IsTerminating(), s.IsTerminated()},
		"IsShutdown, IsTerminating, IsTerminated")
}

// since returns the manual clock's reading as an offset from epoch.
func since(clk *schedulertest.ManualClock) time.Duration { return clk.Now().Sub(epoch) }
