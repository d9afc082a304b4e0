package scheduler_test

// The one set of helpers the external tests share: a scheduler on a manual
// clock that is shut down when the test ends, bounded waits, gates for runs
// a test holds, future and log checks. Each test file adds only what is
// particular to it.

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
	t.Cleanup(func() {
		s.ShutdownNow()
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := s.AwaitTermination(ctx); err != nil {
			t.Errorf("scheduler did not terminate: %v", err)
		}
	})
}

// testCtx returns a context that ends after waitLimit or with the test.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
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

// recv receives from ch, failing the test after waitLimit.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatal("timed out waiting on a channel")
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
// order, compared with == (R-8a). It never looks inside a future, so it
// does not race with the workers.
func requireFutures(t *testing.T, want, got []scheduler.ScheduledFuture, msgAndArgs ...any) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	ptrs := func(fs []scheduler.ScheduledFuture) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = fmt.Sprintf("%p", f)
		}
		return out
	}
	t.Fatalf("futures differ:\nwant %v\ngot  %v\n%s", ptrs(want), ptrs(got), fmt.Sprint(msgAndArgs...))
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
// handed and drops them.
type recordingPolicy struct {
	got recorder[scheduler.ScheduledFuture]
}

func (p *recordingPolicy) Rejected(_ *scheduler.Scheduler, f scheduler.ScheduledFuture) error {
	p.got.add(f)
	return nil
}
