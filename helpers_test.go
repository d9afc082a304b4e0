package scheduler_test

// The one set of helpers the external tests share: a scheduler on a manual
// clock that is shut down when the test ends, bounded waits, gates for runs
// a test holds, the entry points that submit a task, future, state and log
// checks, and a clock that counts what the scheduler asks of it. Each test
// file adds only what is particular to it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
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

// since returns the manual clock's reading as an offset from epoch.
func since(clk *schedulertest.ManualClock) time.Duration { return clk.Now().Sub(epoch) }

// recorder collects values from tasks and hooks, safe for concurrent use.
type recorder[T any] struct {
	mu    sync.Mutex
	items []T
}

func (r *recorder[T]) add(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, v)
}

func (r *recorder[T]) get() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.items)
}

func (r *recorder[T]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}

// observed collects the RunInfo of every run, through the Observe hook.
type observed struct{ recorder[scheduler.RunInfo] }

// hooks returns the option that installs o's Observe hook.
func (o *observed) hooks() scheduler.Option {
	return scheduler.WithHooks(scheduler.Hooks{Observe: o.add})
}

// dueRecorder is a task that records the Due of each of its runs, as
// CurrentRun reports it, as an offset from epoch.
type dueRecorder struct{ recorder[time.Duration] }

func (r *dueRecorder) task(ctx context.Context) error {
	info, ok := scheduler.CurrentRun(ctx)
	if !ok {
		return errors.New("CurrentRun: no run")
	}
	r.add(info.Due.Sub(epoch))
	return nil
}

// logBuffer is an io.Writer for a slog handler, safe for the
// scheduler's workers to write into while the test reads it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// newLogger returns a JSON logger writing into a logBuffer.
func newLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewJSONHandler(b, nil)), b
}

// requireErrorRecord fails unless one record was logged at level Error whose
// text contains every one of want.
func (b *logBuffer) requireErrorRecord(t *testing.T, want ...string) {
	t.Helper()
	b.mu.Lock()
	text := b.buf.String()
	b.mu.Unlock()
	for line := range strings.Lines(text) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "log line %q", line)
		if rec[slog.LevelKey] != slog.LevelError.String() {
			continue
		}
		if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(line, w) }) {
			return
		}
	}
	t.Fatalf("no record at level ERROR containing %q in the log:\n%s", want, text)
}

// recordingPolicy is a RejectionPolicy that records the futures it is
// handed and the goroutine of each call, then returns what then returns
// (nil, leaving the future undone, when then is nil).
type recordingPolicy struct {
	got     recorder[scheduler.ScheduledFuture]
	callers recorder[uint64] // goroutineID of each call
	then    func(s *scheduler.Scheduler, f scheduler.ScheduledFuture) error
}

func (p *recordingPolicy) Rejected(s *scheduler.Scheduler, f scheduler.ScheduledFuture) error {
	p.got.add(f)
	p.callers.add(goroutineID())
	if p.then != nil {
		return p.then(s, f)
	}
	return nil
}

// asCallable turns a task into a callable that returns 1; a nil task gives
// a nil callable, for the tests of nil arguments.
func asCallable(task scheduler.Task) scheduler.Callable[int] {
	if task == nil {
		return nil
	}
	return func(ctx context.Context) (int, error) { return 1, task(ctx) }
}

// asScheduledFuture returns f as a ScheduledFuture, nil for a nil *Future.
func asScheduledFuture[T any](f *scheduler.Future[T], err error) (scheduler.ScheduledFuture, error) {
	if f == nil {
		return nil, err
	}
	return f, err
}

// entryPoint is one way to submit a task: it returns the future (nil when
// the entry point returns none) and the error.
type entryPoint struct {
	name   string
	submit func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
}

// entryPoints lists every entry point that submits a task, with a
// one-minute delay and period.
var entryPoints = entryPointsAt(time.Minute, time.Minute)

// entryPointsAt lists every entry point that submits a task: the delayed
// ones with the given initial delay (and period, for the periodic ones);
// Invoke* submit one callable due now and wait for it, at most waitLimit.
// A nil task is passed on as nil. InvokeAll returns its first future.
func entryPointsAt(delay, period time.Duration) []entryPoint {
	return []entryPoint{
		{"Schedule", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.Schedule(task, delay)
		}},
		{"ScheduleAtFixedRate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, delay, period)
		}},
		{"ScheduleWithFixedDelay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, delay, period)
		}},
		{"Execute", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return nil, s.Execute(task)
		}},
		{"Submit", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.Submit(task)
		}},
		{"ScheduleCallable", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return asScheduledFuture(scheduler.ScheduleCallable(s, asCallable(task), delay))
		}},
		{"SubmitCallable", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return asScheduledFuture(scheduler.SubmitCallable(s, asCallable(task)))
		}},
		{"InvokeAll", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			fs, err := scheduler.InvokeAll(ctx, s, []scheduler.Callable[int]{asCallable(task)})
			if len(fs) == 0 {
				return nil, err
			}
			return fs[0], err
		}},
		{"InvokeAny", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			_, err := scheduler.InvokeAny(ctx, s, []scheduler.Callable[int]{asCallable(task)})
			return nil, err
		}},
	}
}

// scheduleKinds schedules a task one hour from now in each of the ways
// the scheduler knows, for tests that must hold for every kind of future.
var scheduleKinds = []struct {
	name     string
	schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
}{
	{"one-shot", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return s.Schedule(task, time.Hour)
	}},
	{"callable", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return scheduler.ScheduleCallable(s, func(ctx context.Context) (int, error) { return 1, task(ctx) }, time.Hour)
	}},
	{"fixed rate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return s.ScheduleAtFixedRate(task, time.Hour, time.Minute)
	}},
	{"fixed delay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return s.ScheduleWithFixedDelay(task, time.Hour, time.Minute)
	}},
}

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

// schedulePeriodic schedules task at a fixed rate when kind is "fixed
// rate", else with a fixed delay: first due after period, then every
// period.
func schedulePeriodic(t *testing.T, s *scheduler.Scheduler, kind string, task scheduler.Task, period time.Duration, opts ...scheduler.TaskOption) scheduler.ScheduledFuture {
	t.Helper()
	var f scheduler.ScheduledFuture
	var err error
	if kind == "fixed rate" {
		f, err = s.ScheduleAtFixedRate(task, period, period, opts...)
	} else {
		f, err = s.ScheduleWithFixedDelay(task, period, period, opts...)
	}
	require.NoError(t, err)
	return f
}
