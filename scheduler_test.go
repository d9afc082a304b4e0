package scheduler_test

// Behavioural tests for the core of the contract, SPEC.md R-1 to R-10 (with
// R-8a and R-8b): construction, argument checks, huge delays, ordering,
// periodic timing, failures and panics, futures, Invoke*, cancel and the
// remove-on-cancel policy. Shutdown, rejection, hooks and stats (R-11 and
// on) are tested in lifecycle_test.go.
//
// Everything timed runs on a manual clock: a test moves time with
// clk.Advance and waits with s.AwaitIdle for the work that came due.
// Where a test needs a task to be "running", the task blocks on a channel.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// coreTimeout bounds every wait in these tests, so that a bug fails a test
// instead of hanging the package. No test waits for it to pass.
const coreTimeout = 10 * time.Second

// coreEpoch is where every manual clock of this file starts.
var coreEpoch = time.Unix(0, 0)

// coreErrBoom is the error the failing tasks of this file return.
var coreErrBoom = errors.New("boom")

// coreHundredYears is "a huge positive delay" for the overflow tests.
const coreHundredYears = 100 * 365 * 24 * time.Hour

// coreNop is a task that does nothing.
func coreNop(context.Context) error { return nil }

// coreNewManual returns a scheduler with pool workers on a fresh manual
// clock, shut down and awaited when the test ends.
func coreNewManual(t *testing.T, pool int, opts ...scheduler.Option) (*scheduler.Scheduler, *schedulertest.ManualClock) {
	t.Helper()
	clk := schedulertest.NewManualClock(coreEpoch)
	// Panics and failed runs are logged; keep them out of the test output.
	// A caller's WithLogger comes later and wins.
	base := []scheduler.Option{scheduler.WithClock(clk), scheduler.WithLogger(slog.New(slog.DiscardHandler))}
	s, err := scheduler.New(pool, append(base, opts...)...)
	require.NoError(t, err)
	coreShutdownAtEnd(t, s)
	return s, clk
}

// coreShutdownAtEnd stops s when the test ends and waits for it to
// terminate, so that goleak finds no worker left.
func coreShutdownAtEnd(t *testing.T, s *scheduler.Scheduler) {
	t.Helper()
	t.Cleanup(func() {
		s.ShutdownNow()
		ctx, cancel := context.WithTimeout(context.Background(), coreTimeout)
		defer cancel()
		if err := s.AwaitTermination(ctx); err != nil {
			t.Errorf("scheduler did not terminate: %v", err)
		}
	})
}

// coreCtx returns a context that ends after coreTimeout or with the test.
func coreCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), coreTimeout)
	t.Cleanup(cancel)
	return ctx
}

// coreIdle waits until the scheduler has done everything that is due.
func coreIdle(t *testing.T, s *scheduler.Scheduler) {
	t.Helper()
	require.NoError(t, s.AwaitIdle(coreCtx(t)))
}

// coreAdvance moves the clock by d and waits for what came due.
func coreAdvance(t *testing.T, clk *schedulertest.ManualClock, s *scheduler.Scheduler, d time.Duration) {
	t.Helper()
	clk.Advance(d)
	coreIdle(t, s)
}

// coreRecv receives from ch, failing the test after coreTimeout.
func coreRecv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(coreTimeout):
		t.Fatal("timed out waiting on a channel")
		panic("unreachable")
	}
}

// coreGate returns a channel for tasks to block on and the function that
// closes it. It is closed at the latest when the test ends, before the
// scheduler is shut down, so that a failing test leaves no worker stuck.
func coreGate(t *testing.T) (gate <-chan struct{}, open func()) {
	ch := make(chan struct{})
	open = sync.OnceFunc(func() { close(ch) })
	t.Cleanup(open)
	return ch, open
}

// coreHold is the body of a run the test holds: it reports the start on
// started, then blocks until release opens or the run's ctx is canceled.
func coreHold(ctx context.Context, started chan struct{}, release <-chan struct{}) {
	close(started)
	select {
	case <-release:
	case <-ctx.Done():
	}
}

// coreRequireClosed fails unless ch is closed (or has a value) right now.
func coreRequireClosed(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatal(msg)
	}
}

// coreRequireOpen fails if ch can be received from right now.
func coreRequireOpen(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatal(msg)
	default:
	}
}

// coreRequireFutures fails unless got holds exactly the futures of want, in
// order, compared with == (R-8a). It never looks inside a future, so it
// does not race with the workers.
func coreRequireFutures(t *testing.T, want, got []scheduler.ScheduledFuture, msgAndArgs ...any) {
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

// coreSince returns the manual clock's reading as an offset from coreEpoch.
func coreSince(clk *schedulertest.ManualClock) time.Duration { return clk.Now().Sub(coreEpoch) }

// coreRecorder collects values from tasks and hooks, safe for concurrent use.
type coreRecorder[T any] struct {
	mu    sync.Mutex
	items []T
}

func (r *coreRecorder[T]) add(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, v)
}

func (r *coreRecorder[T]) get() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.items)
}

func (r *coreRecorder[T]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}

// coreLogBuffer is an io.Writer for a slog handler, safe for the
// scheduler's workers to write into while the test reads it.
type coreLogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *coreLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// coreNewLogger returns a JSON logger writing into a coreLogBuffer.
func coreNewLogger() (*slog.Logger, *coreLogBuffer) {
	b := &coreLogBuffer{}
	return slog.New(slog.NewJSONHandler(b, nil)), b
}

// requireErrorRecord fails unless one record was logged at level Error whose
// text contains every one of want.
func (b *coreLogBuffer) requireErrorRecord(t *testing.T, want ...string) {
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

// coreRecordingPolicy is a RejectionPolicy that records the futures it is
// handed and drops them.
type coreRecordingPolicy struct {
	got coreRecorder[scheduler.ScheduledFuture]
}

func (p *coreRecordingPolicy) Rejected(_ *scheduler.Scheduler, f scheduler.ScheduledFuture) error {
	p.got.add(f)
	return nil
}

// ---------------------------------------------------------------------------
// New, lazy workers.

func TestNewRejectsPoolSizeBelowOne(t *testing.T) {
	for _, n := range []int{0, -1, math.MinInt} {
		t.Run(fmt.Sprintf("poolSize=%d", n), func(t *testing.T) {
			s, err := scheduler.New(n)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, s)
		})
	}
}

func TestNewStartsNoGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []scheduler.Option
	}{
		{"system clock", nil},
		{"manual clock", []scheduler.Option{scheduler.WithClock(schedulertest.NewManualClock(coreEpoch))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			s, err := scheduler.New(8, tc.opts...)
			require.NoError(t, err)
			coreShutdownAtEnd(t, s)
			st := s.Stats()
			require.Zero(t, st.PoolSize)
			require.Zero(t, st.LargestPoolSize)
			require.Equal(t, 8, st.CorePoolSize)
			goleak.VerifyNone(t, before)
		})
	}
}

func TestWorkersStartOnePerTaskUpToPoolSize(t *testing.T) {
	s, _ := coreNewManual(t, 3)
	require.Zero(t, s.Stats().PoolSize)
	for i := 1; i <= 6; i++ {
		_, err := s.Schedule(coreNop, time.Hour)
		require.NoError(t, err)
		st := s.Stats()
		require.Equal(t, min(i, 3), st.PoolSize, "after %d tasks", i)
		require.Equal(t, min(i, 3), st.LargestPoolSize, "after %d tasks", i)
	}
}

// ---------------------------------------------------------------------------
// argument checks, delays clamped to now, ContinueOnError on one-shots.

func TestSchedulingRejectsInvalidArguments(t *testing.T) {
	type testCase struct {
		name string
		call func(s *scheduler.Scheduler) error
	}
	cases := []testCase{
		{"Schedule/nil task", func(s *scheduler.Scheduler) error {
			_, err := s.Schedule(nil, time.Second)
			return err
		}},
		{"ScheduleAtFixedRate/nil task", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleAtFixedRate(nil, time.Second, time.Second)
			return err
		}},
		{"ScheduleWithFixedDelay/nil task", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleWithFixedDelay(nil, time.Second, time.Second)
			return err
		}},
		{"Execute/nil task", func(s *scheduler.Scheduler) error {
			return s.Execute(nil)
		}},
		{"Submit/nil task", func(s *scheduler.Scheduler) error {
			_, err := s.Submit(nil)
			return err
		}},
		{"ScheduleCallable/nil callable", func(s *scheduler.Scheduler) error {
			_, err := scheduler.ScheduleCallable[int](s, nil, time.Second)
			return err
		}},
		{"SubmitCallable/nil callable", func(s *scheduler.Scheduler) error {
			_, err := scheduler.SubmitCallable[int](s, nil)
			return err
		}},
	}
	for _, p := range []time.Duration{0, -1, -time.Hour, math.MinInt64} {
		cases = append(cases,
			testCase{fmt.Sprintf("ScheduleAtFixedRate/period=%v", p), func(s *scheduler.Scheduler) error {
				_, err := s.ScheduleAtFixedRate(coreNop, time.Second, p)
				return err
			}},
			testCase{fmt.Sprintf("ScheduleWithFixedDelay/delay=%v", p), func(s *scheduler.Scheduler) error {
				_, err := s.ScheduleWithFixedDelay(coreNop, time.Second, p)
				return err
			}},
		)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := coreNewManual(t, 1)
			require.ErrorIs(t, tc.call(s), scheduler.ErrInvalidArgument)
			st := s.Stats()
			require.Zero(t, st.Queued, "nothing is queued")
			require.Zero(t, st.TaskCount)
			require.Zero(t, st.PoolSize, "no worker started")
			require.Empty(t, s.Queue())
		})
	}
}

func TestNegativeDelayRunsOnceNow(t *testing.T) {
	const period = time.Second
	cases := []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
	}{
		{"one-shot", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.Schedule(task, -10*period)
		}},
		{"fixed rate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, -10*period, period)
		}},
		{"fixed delay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, -10*period, period)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := coreNewManual(t, 1)
			var runs atomic.Int32
			f, err := tc.schedule(s, func(context.Context) error { runs.Add(1); return nil })
			require.NoError(t, err)
			coreIdle(t, s)
			require.EqualValues(t, 1, runs.Load(), "one run now, not a catch-up burst")
			if !f.IsPeriodic() {
				require.True(t, f.IsDone())
				return
			}
			require.Equal(t, period, f.Delay(), "the next run is one period after now")
			coreAdvance(t, clk, s, period)
			require.EqualValues(t, 2, runs.Load())
		})
	}
}

func TestContinueOnErrorIsIgnoredForOneShotTasks(t *testing.T) {
	t.Run("task", func(t *testing.T) {
		s, clk := coreNewManual(t, 1)
		var runs atomic.Int32
		f, err := s.Submit(func(context.Context) error { runs.Add(1); return coreErrBoom }, scheduler.ContinueOnError())
		require.NoError(t, err)
		coreIdle(t, s)
		require.False(t, f.IsPeriodic())
		require.True(t, f.IsDone())
		require.False(t, f.IsCanceled())
		require.ErrorIs(t, f.Wait(coreCtx(t)), coreErrBoom)
		coreAdvance(t, clk, s, time.Hour)
		require.EqualValues(t, 1, runs.Load())
		require.Zero(t, s.Stats().Queued)
	})
	t.Run("callable", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 1, coreErrBoom },
			scheduler.ContinueOnError())
		require.NoError(t, err)
		coreIdle(t, s)
		v, err := f.Get(coreCtx(t))
		require.ErrorIs(t, err, coreErrBoom)
		require.Zero(t, v)
		require.Zero(t, s.Stats().Queued)
	})
}

// ---------------------------------------------------------------------------
// huge delays.

func TestHugeDelayDoesNotOverflow(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    time.Duration
	}{
		{"math.MaxInt64", math.MaxInt64},
		{"time.Duration(math.MaxInt64)", time.Duration(math.MaxInt64)},
		{"math.MaxInt64-1", math.MaxInt64 - 1},
		{"overflowFree threshold", math.MaxInt64 >> 1},
		{"just below the threshold", math.MaxInt64>>1 - 1},
		{"math.MaxInt64-1h", math.MaxInt64 - time.Hour},
	} {
		d := tc.d
		t.Run(tc.name, func(t *testing.T) {
			s, clk := coreNewManual(t, 1)
			// Move the clock away from the scheduler's origin, so that
			// now+delay wraps past math.MaxInt64.
			clk.Advance(time.Hour)
			var farRan, nearRan atomic.Bool
			var far scheduler.ScheduledFuture
			require.NotPanics(t, func() {
				var err error
				far, err = s.Schedule(func(context.Context) error { farRan.Store(true); return nil }, d)
				require.NoError(t, err)
			})
			require.Greater(t, far.Delay(), coreHundredYears)

			near, err := s.Schedule(func(context.Context) error { nearRan.Store(true); return nil }, time.Second)
			require.NoError(t, err)
			coreRequireFutures(t, []scheduler.ScheduledFuture{near, far}, s.Queue(), "the near task is the head")

			coreAdvance(t, clk, s, time.Second)
			require.True(t, nearRan.Load(), "the near task ran first")
			require.False(t, farRan.Load())
			coreAdvance(t, clk, s, 1000*time.Hour)
			require.False(t, farRan.Load())
			require.Greater(t, far.Delay(), coreHundredYears)
		})
	}
}

func TestHugePeriodDoesNotOverflow(t *testing.T) {
	cases := []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
		runs     int32 // runs once scheduled
	}{
		{"fixed rate/period=MaxInt64", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, 0, math.MaxInt64)
		}, 1},
		{"fixed delay/delay=MaxInt64", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, 0, math.MaxInt64)
		}, 1},
		{"fixed rate/initialDelay=MaxInt64", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, math.MaxInt64, time.Second)
		}, 0},
		{"fixed delay/initialDelay=MaxInt64", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, math.MaxInt64, time.Second)
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := coreNewManual(t, 1)
			clk.Advance(time.Hour)
			var runs atomic.Int32
			var f scheduler.ScheduledFuture
			require.NotPanics(t, func() {
				var err error
				f, err = tc.schedule(s, func(context.Context) error { runs.Add(1); return nil })
				require.NoError(t, err)
				coreIdle(t, s)
			})
			require.Equal(t, tc.runs, runs.Load())
			require.Greater(t, f.Delay(), coreHundredYears)

			var nearRan atomic.Bool
			_, err := s.Schedule(func(context.Context) error { nearRan.Store(true); return nil }, time.Second)
			require.NoError(t, err)
			coreAdvance(t, clk, s, time.Second)
			require.True(t, nearRan.Load(), "a near task still runs")
			require.Equal(t, tc.runs, runs.Load(), "the far run stays far")
		})
	}
}

// An overdue head and a huge new delay: without the JDK's overflowFree the
// new task's trigger time would be more than MaxInt64 after the head's, the
// comparison by subtraction would wrap, and the far task would sort first and
// block the overdue one.
func TestHugeDelayQueuesBehindOverdueTask(t *testing.T) {
	s, clk := coreNewManual(t, 1)
	started := make(chan struct{})
	release, openRelease := coreGate(t)
	_, err := s.Submit(func(ctx context.Context) error {
		coreHold(ctx, started, release)
		return nil
	})
	require.NoError(t, err)
	coreRecv(t, started) // the only worker is busy

	var order coreRecorder[string]
	overdue, err := s.Submit(func(context.Context) error { order.add("overdue"); return nil })
	require.NoError(t, err)
	clk.Advance(time.Hour) // the queued task is now an hour overdue
	far, err := s.Schedule(func(context.Context) error { order.add("far"); return nil }, math.MaxInt64)
	require.NoError(t, err)
	coreRequireFutures(t, []scheduler.ScheduledFuture{overdue, far}, s.Queue())
	require.Greater(t, far.Delay(), coreHundredYears)

	openRelease()
	coreIdle(t, s)
	require.Equal(t, []string{"overdue"}, order.get())
}

// JDK-8051859 (testScheduleWithFixedDelay_overflow): a fixed-delay task with
// a huge delay submits an immediate task from inside its run; its re-queue
// must not sort before that task and starve it. The run moves the clock so
// that the immediate task is overdue when the periodic one is re-queued.
func TestFixedDelayHugeDelayDoesNotStarveTaskItSubmits(t *testing.T) {
	s, clk := coreNewManual(t, 1)
	var periodicRuns atomic.Int32
	immediateRan := make(chan struct{})
	var submitErr error
	_, err := s.ScheduleWithFixedDelay(func(context.Context) error {
		if periodicRuns.Add(1) == 1 {
			_, submitErr = s.Submit(func(context.Context) error { close(immediateRan); return nil })
			clk.Advance(time.Second)
		}
		return nil
	}, 0, math.MaxInt64)
	require.NoError(t, err)
	coreIdle(t, s)
	require.NoError(t, submitErr)
	coreRequireClosed(t, immediateRan, "the immediate task submitted by the periodic run was starved")
	require.EqualValues(t, 1, periodicRuns.Load())
}

// ---------------------------------------------------------------------------
// ordering.

func TestTasksDueAtSameInstantRunInSubmissionOrder(t *testing.T) {
	const n = 40
	t.Run("same delay", func(t *testing.T) {
		s, clk := coreNewManual(t, 1)
		var order coreRecorder[int]
		for i := range n {
			var err error
			switch i % 3 {
			case 0:
				_, err = s.Schedule(func(context.Context) error { order.add(i); return nil }, time.Second)
			case 1:
				_, err = scheduler.ScheduleCallable(s, func(context.Context) (int, error) { order.add(i); return i, nil }, time.Second)
			case 2:
				// A periodic task's first run takes its turn too.
				_, err = s.ScheduleAtFixedRate(func(context.Context) error { order.add(i); return nil }, time.Second, time.Hour)
			}
			require.NoError(t, err)
		}
		coreAdvance(t, clk, s, time.Second)
		require.Equal(t, coreRange(n), order.get())
	})
	t.Run("submitted while the worker is busy", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		started := make(chan struct{})
		release, openRelease := coreGate(t)
		_, err := s.Submit(func(context.Context) error { close(started); <-release; return nil })
		require.NoError(t, err)
		coreRecv(t, started)
		var order coreRecorder[int]
		for i := range n {
			require.NoError(t, s.Execute(func(context.Context) error { order.add(i); return nil }))
		}
		openRelease()
		coreIdle(t, s)
		require.Equal(t, coreRange(n), order.get())
	})
}

// coreRange returns 0, 1, ..., n-1.
func coreRange(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestPoolOfOneRunsInDueThenSubmissionOrder(t *testing.T) {
	s, clk := coreNewManual(t, 1)
	delays := []time.Duration{5, 3, 9, 3, 1, 5, 9, 1, 3, 7, 2, 7, 1}
	var order coreRecorder[int]
	for i, d := range delays {
		_, err := s.Schedule(func(context.Context) error { order.add(i); return nil }, d*time.Second)
		require.NoError(t, err)
	}
	want := coreRange(len(delays))
	slices.SortStableFunc(want, func(a, b int) int { return int(delays[a] - delays[b]) })

	coreAdvance(t, clk, s, 10*time.Second)
	require.Equal(t, want, order.get())
}

// ---------------------------------------------------------------------------
// periodic timing.

func TestFixedRateRunKIsDueAtInitialDelayPlusKPeriods(t *testing.T) {
	s, clk := coreNewManual(t, 2)
	clk.Advance(7 * time.Second) // schedule at an instant other than the origin
	const initial, period = 3 * time.Second, 10 * time.Second
	var at coreRecorder[time.Duration]
	f, err := s.ScheduleAtFixedRate(func(context.Context) error { at.add(coreSince(clk)); return nil }, initial, period)
	require.NoError(t, err)
	require.Equal(t, initial, f.Delay())

	var want []time.Duration
	step := initial
	for k := range 6 {
		coreAdvance(t, clk, s, step-1)
		require.Len(t, at.get(), k, "run %d must not start a nanosecond early", k)
		coreAdvance(t, clk, s, 1)
		want = append(want, 7*time.Second+initial+time.Duration(k)*period)
		require.Equal(t, want, at.get())
		require.Equal(t, period, f.Delay())
		step = period
	}
}

func TestFixedRateCatchesUpAfterOverrun(t *testing.T) {
	s, clk := coreNewManual(t, 1)
	const period = 10 * time.Second
	var at coreRecorder[time.Duration]
	f, err := s.ScheduleAtFixedRate(func(context.Context) error {
		at.add(coreSince(clk))
		if at.len() == 1 {
			clk.Advance(3 * period) // the first run takes three periods
		}
		return nil
	}, period, period)
	require.NoError(t, err)

	coreAdvance(t, clk, s, period)
	// Run 0 started at 10s and ended at 40s. Runs 1 to 3, due at 20s, 30s
	// and 40s, start right after it, back to back; none is skipped.
	require.Equal(t, []time.Duration{10 * time.Second, 40 * time.Second, 40 * time.Second, 40 * time.Second}, at.get())
	require.Equal(t, period, f.Delay(), "run 4 is due at 50s, on the original grid")

	coreAdvance(t, clk, s, period)
	require.Equal(t, 50*time.Second, at.get()[4])
}

func TestFixedDelayNextRunIsDueDelayAfterPreviousEnded(t *testing.T) {
	s, clk := coreNewManual(t, 1)
	const initial, delay, runTime = time.Minute, 5 * time.Minute, 10 * time.Minute
	var at coreRecorder[time.Duration]
	f, err := s.ScheduleWithFixedDelay(func(context.Context) error {
		at.add(coreSince(clk))
		clk.Advance(runTime) // each run takes ten minutes
		return nil
	}, initial, delay)
	require.NoError(t, err)

	coreAdvance(t, clk, s, initial)
	require.Equal(t, []time.Duration{time.Minute}, at.get())
	require.Equal(t, delay, f.Delay(), "run 1 is due 5m after run 0 ended at 11m")

	coreAdvance(t, clk, s, delay-1)
	require.Len(t, at.get(), 1)
	coreAdvance(t, clk, s, 1)
	require.Equal(t, []time.Duration{time.Minute, 16 * time.Minute}, at.get())
	require.Equal(t, delay, f.Delay())
}

func TestPeriodicTaskNeverOverlapsItself(t *testing.T) {
	const period, runs = time.Millisecond, 200
	for _, tc := range []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
		step     time.Duration // how far to move time per Advance
	}{
		// One big jump: the fixed-rate task is 200 periods behind and
		// catches up with back-to-back runs while three workers are idle.
		{"fixed rate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, 0, period)
		}, runs * period},
		{"fixed delay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, 0, period)
		}, period},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := coreNewManual(t, 4)
			var inRun, maxInRun, total atomic.Int32
			_, err := tc.schedule(s, func(context.Context) error {
				n := inRun.Add(1)
				for {
					m := maxInRun.Load()
					if n <= m || maxInRun.CompareAndSwap(m, n) {
						break
					}
				}
				total.Add(1)
				runtime.Gosched() // give another worker the chance to overlap
				inRun.Add(-1)
				return nil
			})
			require.NoError(t, err)
			coreIdle(t, s)
			for total.Load() < runs+1 {
				coreAdvance(t, clk, s, tc.step)
			}
			require.EqualValues(t, 1, maxInRun.Load())
		})
	}
}

// ---------------------------------------------------------------------------
// periodic failure, Wait, re-queue before the run counts.

func TestPeriodicRunFailureStopsLaterRuns(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		for _, failure := range []string{"error", "panic"} {
			t.Run(kind+"/"+failure, func(t *testing.T) {
				s, clk := coreNewManual(t, 1)
				var runs atomic.Int32
				task := func(context.Context) error {
					if runs.Add(1) < 3 {
						return nil
					}
					if failure == "panic" {
						panic("periodic kaboom")
					}
					return fmt.Errorf("run 3: %w", coreErrBoom)
				}
				var f scheduler.ScheduledFuture
				var err error
				if kind == "fixed rate" {
					f, err = s.ScheduleAtFixedRate(task, period, period)
				} else {
					f, err = s.ScheduleWithFixedDelay(task, period, period)
				}
				require.NoError(t, err)
				for range 10 {
					coreAdvance(t, clk, s, period)
				}
				require.EqualValues(t, 3, runs.Load(), "no run after the failed one")
				require.True(t, f.IsDone())
				require.False(t, f.IsCanceled())
				require.Empty(t, s.Queue())
				require.False(t, f.Cancel(true), "a failed future cannot be canceled")

				err = f.Wait(coreCtx(t))
				if failure == "panic" {
					var pe *scheduler.PanicError
					require.ErrorAs(t, err, &pe)
					require.Equal(t, "periodic kaboom", pe.Value)
				} else {
					require.ErrorIs(t, err, coreErrBoom)
				}
			})
		}
	}
}

func TestContinueOnErrorKeepsPeriodicTaskRunning(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		t.Run(kind, func(t *testing.T) {
			s, clk := coreNewManual(t, 1)
			var runs atomic.Int32
			task := func(context.Context) error {
				switch runs.Add(1) % 3 {
				case 1:
					return coreErrBoom
				case 2:
					panic("tolerated")
				}
				return nil
			}
			var f scheduler.ScheduledFuture
			var err error
			if kind == "fixed rate" {
				f, err = s.ScheduleAtFixedRate(task, period, period, scheduler.ContinueOnError())
			} else {
				f, err = s.ScheduleWithFixedDelay(task, period, period, scheduler.ContinueOnError())
			}
			require.NoError(t, err)
			for range 9 {
				coreAdvance(t, clk, s, period)
			}
			require.EqualValues(t, 9, runs.Load())
			require.False(t, f.IsDone())
			coreRequireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
			st := s.Stats()
			require.EqualValues(t, 9, st.Completed)
			require.EqualValues(t, 6, st.Failed)
			require.EqualValues(t, 3, st.Panicked)
		})
	}
}

func TestPeriodicWaitBlocksUntilCancel(t *testing.T) {
	const period = time.Second
	s, clk := coreNewManual(t, 1)
	f, err := s.ScheduleAtFixedRate(coreNop, period, period)
	require.NoError(t, err)
	for range 3 {
		coreAdvance(t, clk, s, period)
	}
	require.False(t, f.IsDone(), "successful runs never complete a periodic future")

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, context.Canceled, f.Wait(canceled))
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	require.Equal(t, context.DeadlineExceeded, f.Wait(expired))

	waitCtx, cancelWait := context.WithCancel(coreCtx(t))
	waited := make(chan error, 1)
	go func() { waited <- f.Wait(waitCtx) }()
	coreAdvance(t, clk, s, period)
	select {
	case err := <-waited:
		t.Fatalf("Wait returned %v before the periodic task was canceled", err)
	default:
	}
	require.True(t, f.Cancel(false))
	require.ErrorIs(t, coreRecv(t, waited), scheduler.ErrCanceled)

	cancelWait()
	waited2 := make(chan error, 1)
	go func() { waited2 <- f.Wait(waitCtx) }()
	require.ErrorIs(t, coreRecv(t, waited2), scheduler.ErrCanceled, "a done future answers even after ctx ended")
}

func TestPeriodicTaskIsRequeuedBeforeItsRunCountsAsFinished(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		t.Run(kind, func(t *testing.T) {
			type seen struct {
				inQueue   bool
				queued    int
				completed uint64
			}
			var got coreRecorder[seen]
			var s *scheduler.Scheduler
			s, clk := coreNewManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
				AfterExecute: func(f scheduler.ScheduledFuture, _ error) {
					st := s.Stats()
					got.add(seen{slices.Contains(s.Queue(), f), st.Queued, st.Completed})
				},
			}))
			var f scheduler.ScheduledFuture
			var err error
			if kind == "fixed rate" {
				f, err = s.ScheduleAtFixedRate(coreNop, period, period)
			} else {
				f, err = s.ScheduleWithFixedDelay(coreNop, period, period)
			}
			require.NoError(t, err)
			for k := range 3 {
				coreAdvance(t, clk, s, period)
				require.Equal(t, seen{inQueue: true, queued: 1, completed: uint64(k)}, got.get()[k],
					"at the end of run %d the task is queued again and the run is not yet counted", k)
				require.EqualValues(t, k+1, s.Stats().Completed)
			}
			coreRequireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
		})
	}
}

// ---------------------------------------------------------------------------
// panics.

func TestTaskPanicIsRecoveredAndWorkerSurvives(t *testing.T) {
	s, _ := coreNewManual(t, 1)
	f1, err := s.Submit(func(context.Context) error { panic("kaboom") })
	require.NoError(t, err)
	f2, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	coreIdle(t, s)

	err = f1.Wait(coreCtx(t))
	var pe *scheduler.PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "kaboom", pe.Value)
	require.NotEmpty(t, pe.Stack)
	require.Contains(t, string(pe.Stack), "TestTaskPanicIsRecoveredAndWorkerSurvives",
		"the stack is the panicking goroutine's")
	require.NoError(t, pe.Unwrap(), "a non-error panic value unwraps to nil")
	require.Contains(t, pe.Error(), "kaboom")

	v, err := f2.Get(coreCtx(t))
	require.NoError(t, err, "the pool of one ran the next task")
	require.Equal(t, 7, v)

	// And keeps running tasks.
	f3, err := s.Submit(coreNop)
	require.NoError(t, err)
	coreIdle(t, s)
	require.NoError(t, f3.Wait(coreCtx(t)))
	st := s.Stats()
	require.Equal(t, 1, st.PoolSize)
	require.EqualValues(t, 1, st.Panicked)
}

func TestPanicErrorUnwrapsAnErrorValue(t *testing.T) {
	s, _ := coreNewManual(t, 1)
	f, err := scheduler.SubmitCallable(s, func(context.Context) (string, error) {
		panic(fmt.Errorf("wrapped: %w", coreErrBoom))
	})
	require.NoError(t, err)
	coreIdle(t, s)
	v, err := f.Get(coreCtx(t))
	require.Empty(t, v)
	require.ErrorIs(t, err, coreErrBoom, "errors.Is sees through a panic(err)")
	var pe *scheduler.PanicError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, pe.Unwrap(), coreErrBoom)
	require.NotEmpty(t, pe.Stack)
}

func TestFailuresAreLoggedAtErrorWithNameAndValue(t *testing.T) {
	const period = time.Second
	cases := []struct {
		name     string
		schedule func(s *scheduler.Scheduler) error
		want     []string
	}{
		{"one-shot panic", func(s *scheduler.Scheduler) error {
			_, err := s.Submit(func(context.Context) error { panic("kaboom-4711") }, scheduler.WithName("exploder"))
			return err
		}, []string{"exploder", "kaboom-4711"}},
		{"callable panic with an error", func(s *scheduler.Scheduler) error {
			_, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) {
				panic(errors.New("disk on fire"))
			}, scheduler.WithName("callable-exploder"))
			return err
		}, []string{"callable-exploder", "disk on fire"}},
		{"periodic panic", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleAtFixedRate(func(context.Context) error { panic("tick-panic") },
				0, period, scheduler.WithName("ticker"))
			return err
		}, []string{"ticker", "tick-panic"}},
		{"periodic stopped by error", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleWithFixedDelay(func(context.Context) error { return errors.New("quota exceeded") },
				0, period, scheduler.WithName("poller"))
			return err
		}, []string{"poller", "quota exceeded"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logger, logs := coreNewLogger()
			s, _ := coreNewManual(t, 1, scheduler.WithLogger(logger))
			require.NoError(t, tc.schedule(s))
			coreIdle(t, s) // the run, and its logging, are over
			logs.requireErrorRecord(t, tc.want...)
		})
	}
}

// ---------------------------------------------------------------------------
// futures.

func TestGetReturnsTheOutcome(t *testing.T) {
	t.Run("value", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 42, nil })
		require.NoError(t, err)
		v, err := f.Get(coreCtx(t))
		require.NoError(t, err)
		require.Equal(t, 42, v)
		require.NoError(t, f.Wait(coreCtx(t)))
	})
	t.Run("task nil", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		f, err := s.Submit(coreNop)
		require.NoError(t, err)
		require.NoError(t, f.Wait(coreCtx(t)))
	})
	t.Run("task error", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) {
			return 5, fmt.Errorf("lookup: %w", coreErrBoom)
		})
		require.NoError(t, err)
		v, err := f.Get(coreCtx(t))
		require.ErrorIs(t, err, coreErrBoom)
		require.Zero(t, v, "no value with an error")
		require.ErrorIs(t, f.Wait(coreCtx(t)), coreErrBoom)
	})
	t.Run("canceled", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
		require.NoError(t, err)
		require.True(t, f.Cancel(false))
		v, err := f.Get(coreCtx(t))
		require.ErrorIs(t, err, scheduler.ErrCanceled)
		require.Zero(t, v)
		require.ErrorIs(t, f.Wait(coreCtx(t)), scheduler.ErrCanceled)
	})
	t.Run("panic", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { panic(17) })
		require.NoError(t, err)
		_, err = f.Get(coreCtx(t))
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, 17, pe.Value)
	})
	t.Run("ctx ends first", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
		require.NoError(t, err)
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		v, err := f.Get(canceled)
		require.Equal(t, context.Canceled, err)
		require.Zero(t, v)
		require.Equal(t, context.Canceled, f.Wait(canceled))
		expired, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
		defer cancel()
		_, err = f.Get(expired)
		require.Equal(t, context.DeadlineExceeded, err)
		require.False(t, f.IsDone(), "Get with an ended ctx leaves the future alone")
	})
	t.Run("done future answers an ended ctx", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 3, nil })
		require.NoError(t, err)
		coreIdle(t, s)
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		v, err := f.Get(canceled)
		require.NoError(t, err)
		require.Equal(t, 3, v)
	})
}

func TestDoneIsClosedExactlyWhenIsDone(t *testing.T) {
	cases := []struct {
		name   string
		result func(ctx context.Context) error // what the run returns once released
		finish func(f scheduler.ScheduledFuture, openRelease func())
	}{
		{"normal", func(context.Context) error { return nil },
			func(_ scheduler.ScheduledFuture, open func()) { open() }},
		{"error", func(context.Context) error { return coreErrBoom },
			func(_ scheduler.ScheduledFuture, open func()) { open() }},
		{"panic", func(context.Context) error { panic("done-panic") },
			func(_ scheduler.ScheduledFuture, open func()) { open() }},
		{"cancel", func(context.Context) error { return nil },
			func(f scheduler.ScheduledFuture, _ func()) { f.Cancel(false) }},
		{"cancel with interrupt", func(ctx context.Context) error { return ctx.Err() },
			func(f scheduler.ScheduledFuture, _ func()) { f.Cancel(true) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := coreNewManual(t, 1)
			started := make(chan struct{})
			release, openRelease := coreGate(t)
			f, err := s.Submit(func(ctx context.Context) error {
				coreHold(ctx, started, release)
				return tc.result(ctx)
			})
			require.NoError(t, err)
			coreRecv(t, started)
			require.False(t, f.IsDone())
			coreRequireOpen(t, f.Done(), "Done is closed while the task runs")

			woke := make(chan bool, 1)
			go func() {
				<-f.Done()
				woke <- f.IsDone()
			}()
			tc.finish(f, openRelease)
			require.True(t, coreRecv(t, woke), "a goroutine woken by Done sees IsDone")
			if tc.name == "cancel" {
				openRelease() // let the run finish; its outcome is discarded
			}
			coreIdle(t, s)
			coreRequireClosed(t, f.Done(), "Done of a done future")
		})
	}
}

func TestDoneIsClosedBeforeCancelReturnsTrue(t *testing.T) {
	for _, interrupt := range []bool{false, true} {
		t.Run(fmt.Sprintf("queued/interrupt=%v", interrupt), func(t *testing.T) {
			s, _ := coreNewManual(t, 1)
			f, err := s.Schedule(coreNop, time.Hour)
			require.NoError(t, err)
			done := f.Done()
			require.True(t, f.Cancel(interrupt))
			coreRequireClosed(t, done, "Done is not closed when Cancel returns true")
		})
		t.Run(fmt.Sprintf("periodic between runs/interrupt=%v", interrupt), func(t *testing.T) {
			s, clk := coreNewManual(t, 1)
			f, err := s.ScheduleAtFixedRate(coreNop, time.Second, time.Second)
			require.NoError(t, err)
			coreAdvance(t, clk, s, time.Second)
			done := f.Done()
			require.True(t, f.Cancel(interrupt))
			coreRequireClosed(t, done, "Done is not closed when Cancel returns true")
		})
		t.Run(fmt.Sprintf("running/interrupt=%v", interrupt), func(t *testing.T) {
			s, _ := coreNewManual(t, 1)
			started := make(chan struct{})
			release, openRelease := coreGate(t)
			f, err := s.Submit(func(ctx context.Context) error {
				coreHold(ctx, started, release)
				return nil
			})
			require.NoError(t, err)
			coreRecv(t, started)
			done := f.Done()
			require.True(t, f.Cancel(interrupt))
			coreRequireClosed(t, done, "Done is not closed when Cancel returns true")
			openRelease()
		})
	}
}

// ---------------------------------------------------------------------------
// R-8a: identity.

func TestFuturesKeepTheirIdentity(t *testing.T) {
	t.Run("Queue", func(t *testing.T) {
		s, clk := coreNewManual(t, 1)
		task, err := s.Schedule(coreNop, time.Hour)
		require.NoError(t, err)
		callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 2*time.Hour)
		require.NoError(t, err)
		periodic, err := s.ScheduleAtFixedRate(coreNop, time.Minute, 3*time.Hour)
		require.NoError(t, err)
		q := s.Queue()
		require.Len(t, q, 3)
		require.True(t, q[0] == periodic)
		require.True(t, q[1] == task)
		require.True(t, q[2] == scheduler.ScheduledFuture(callable))

		coreAdvance(t, clk, s, time.Minute) // the periodic task ran and is queued again
		require.True(t, s.Queue()[2] == periodic, "a periodic task is re-queued as itself")
	})
	t.Run("ShutdownNow", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		task, err := s.Schedule(coreNop, time.Hour)
		require.NoError(t, err)
		callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 2*time.Hour)
		require.NoError(t, err)
		periodic, err := s.ScheduleWithFixedDelay(coreNop, 3*time.Hour, time.Hour)
		require.NoError(t, err)
		got := s.ShutdownNow()
		require.Len(t, got, 3)
		require.True(t, got[0] == task)
		require.True(t, got[1] == scheduler.ScheduledFuture(callable))
		require.True(t, got[2] == periodic)
	})
	t.Run("hooks", func(t *testing.T) {
		var before, after coreRecorder[scheduler.ScheduledFuture]
		s, clk := coreNewManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
			BeforeExecute: func(f scheduler.ScheduledFuture) { before.add(f) },
			AfterExecute:  func(f scheduler.ScheduledFuture, _ error) { after.add(f) },
		}))
		task, err := s.Schedule(coreNop, time.Second)
		require.NoError(t, err)
		callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 2*time.Second)
		require.NoError(t, err)
		periodic, err := s.ScheduleAtFixedRate(coreNop, 3*time.Second, time.Hour)
		require.NoError(t, err)
		coreAdvance(t, clk, s, 3*time.Second)
		want := []scheduler.ScheduledFuture{task, callable, periodic}
		for _, got := range [][]scheduler.ScheduledFuture{before.get(), after.get()} {
			require.Len(t, got, 3)
			for i := range want {
				require.True(t, got[i] == want[i], "hook argument %d is not the scheduled future", i)
			}
		}
	})
	t.Run("rejection policy", func(t *testing.T) {
		for _, why := range []string{"shut down", "queue full"} {
			t.Run(why, func(t *testing.T) {
				p := &coreRecordingPolicy{}
				s, _ := coreNewManual(t, 1, scheduler.WithRejectionPolicy(p), scheduler.WithMaxQueueSize(1))
				if why == "shut down" {
					s.Shutdown()
				} else {
					_, err := s.Schedule(coreNop, time.Hour) // fills the queue
					require.NoError(t, err)
				}
				task, err := s.Schedule(coreNop, time.Hour)
				require.NoError(t, err)
				callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
				require.NoError(t, err)
				periodic, err := s.ScheduleAtFixedRate(coreNop, time.Hour, time.Hour)
				require.NoError(t, err)
				got := p.got.get()
				require.Len(t, got, 3)
				require.True(t, got[0] == task)
				require.True(t, got[1] == scheduler.ScheduledFuture(callable))
				require.True(t, got[2] == periodic)
			})
		}
	})
}

// ---------------------------------------------------------------------------
// R-8b: InvokeAll, InvokeAny.

func TestInvokeAllWaitsForEveryTaskAndKeepsOrder(t *testing.T) {
	s, _ := coreNewManual(t, 3)
	lastDone := make(chan struct{})
	fns := []scheduler.Callable[int]{
		func(ctx context.Context) (int, error) {
			// Finishes last: only once the third task has run.
			select {
			case <-lastDone:
			case <-ctx.Done():
			}
			return 10, nil
		},
		func(context.Context) (int, error) { return 0, coreErrBoom },
		func(context.Context) (int, error) { close(lastDone); return 30, nil },
	}
	futures, err := scheduler.InvokeAll(coreCtx(t), s, fns)
	require.NoError(t, err, "a failed task is not InvokeAll's error (JDK invokeAll)")
	require.Len(t, futures, 3)
	for i, f := range futures {
		require.True(t, f.IsDone(), "future %d", i)
	}
	v, err := futures[0].Get(coreCtx(t))
	require.NoError(t, err)
	require.Equal(t, 10, v)
	_, err = futures[1].Get(coreCtx(t))
	require.ErrorIs(t, err, coreErrBoom)
	v, err = futures[2].Get(coreCtx(t))
	require.NoError(t, err)
	require.Equal(t, 30, v)
}

func TestInvokeAllCancelsUnfinishedTasksWhenCtxEnds(t *testing.T) {
	s, _ := coreNewManual(t, 2)
	started := make(chan struct{}, 2)
	interrupted := make(chan error, 2)
	finish, openFinish := coreGate(t)
	var neverRan atomic.Bool
	blocker := func(ctx context.Context) (int, error) {
		started <- struct{}{}
		<-ctx.Done()
		interrupted <- ctx.Err()
		// Hold the worker until the test is done checking, so that the
		// queued fourth task cannot start while InvokeAll is still
		// canceling the futures one by one.
		<-finish
		return 0, ctx.Err()
	}
	fns := []scheduler.Callable[int]{
		func(context.Context) (int, error) { return 1, nil },
		blocker,
		blocker,
		func(context.Context) (int, error) { neverRan.Store(true); return 4, nil }, // queued behind the blockers
	}
	ctx, cancel := context.WithCancel(coreCtx(t))
	type result struct {
		futures []*scheduler.Future[int]
		err     error
	}
	res := make(chan result, 1)
	go func() {
		futures, err := scheduler.InvokeAll(ctx, s, fns)
		res <- result{futures, err}
	}()
	coreRecv(t, started)
	coreRecv(t, started)
	cancel()
	r := coreRecv(t, res)
	require.Equal(t, context.Canceled, r.err)
	require.Len(t, r.futures, 4)

	v, err := r.futures[0].Get(coreCtx(t))
	require.NoError(t, err)
	require.Equal(t, 1, v)
	for _, i := range []int{1, 2, 3} {
		require.True(t, r.futures[i].IsCanceled(), "future %d", i)
	}
	// With interrupt: the running tasks' ctx was canceled.
	require.ErrorIs(t, coreRecv(t, interrupted), context.Canceled)
	require.ErrorIs(t, coreRecv(t, interrupted), context.Canceled)
	openFinish()
	coreIdle(t, s)
	require.False(t, neverRan.Load(), "the queued task was canceled before it could run")
}

func TestInvokeAnyReturnsFirstSuccessAndCancelsTheRest(t *testing.T) {
	s, _ := coreNewManual(t, 3)
	started := make(chan struct{})
	interrupted := make(chan error, 1)
	fns := []scheduler.Callable[string]{
		func(ctx context.Context) (string, error) {
			close(started)
			<-ctx.Done()
			interrupted <- ctx.Err()
			return "late", nil
		},
		func(context.Context) (string, error) { return "", coreErrBoom },
		func(ctx context.Context) (string, error) {
			select { // succeed once the other is surely running
			case <-started:
			case <-ctx.Done():
			}
			return "winner", nil
		},
	}
	v, err := scheduler.InvokeAny(coreCtx(t), s, fns)
	require.NoError(t, err)
	require.Equal(t, "winner", v)
	require.ErrorIs(t, coreRecv(t, interrupted), context.Canceled, "the running loser's ctx was canceled")
}

func TestInvokeAnyFailsWithOneTasksErrorWhenAllFail(t *testing.T) {
	s, _ := coreNewManual(t, 2)
	fns := []scheduler.Callable[int]{
		func(context.Context) (int, error) { return 0, fmt.Errorf("first: %w", coreErrBoom) },
		func(context.Context) (int, error) { return 0, fmt.Errorf("second: %w", coreErrBoom) },
		func(context.Context) (int, error) { panic(fmt.Errorf("third: %w", coreErrBoom)) },
	}
	v, err := scheduler.InvokeAny(coreCtx(t), s, fns)
	require.ErrorIs(t, err, coreErrBoom)
	require.NotErrorIs(t, err, scheduler.ErrCanceled)
	require.Zero(t, v)
}

func TestInvokeAnyReturnsCtxErrWhenCtxEndsFirst(t *testing.T) {
	s, _ := coreNewManual(t, 2)
	interrupted := make(chan error, 2)
	blocker := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		interrupted <- ctx.Err()
		return 1, nil
	}
	ctx, cancel := context.WithCancel(coreCtx(t))
	cancel()
	v, err := scheduler.InvokeAny(ctx, s, []scheduler.Callable[int]{blocker, blocker})
	require.Equal(t, context.Canceled, err)
	require.Zero(t, v)
	coreIdle(t, s) // the blockers, canceled with interrupt, returned or never ran
}

func TestInvokeRejectsNilElementsAndEmptyLists(t *testing.T) {
	ok := func(context.Context) (int, error) { return 1, nil }
	t.Run("InvokeAll/nil element", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		futures, err := scheduler.InvokeAll(coreCtx(t), s, []scheduler.Callable[int]{ok, nil, ok})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Empty(t, futures)
		require.Zero(t, s.Stats().TaskCount, "nothing scheduled")
	})
	t.Run("InvokeAny/nil element", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		_, err := scheduler.InvokeAny(coreCtx(t), s, []scheduler.Callable[int]{ok, ok, nil})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Zero(t, s.Stats().TaskCount, "nothing scheduled")
	})
	t.Run("InvokeAny/empty", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		_, err := scheduler.InvokeAny(coreCtx(t), s, []scheduler.Callable[int]{})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		_, err = scheduler.InvokeAny[int](coreCtx(t), s, nil)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	})
	t.Run("InvokeAll/empty", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		futures, err := scheduler.InvokeAll(coreCtx(t), s, []scheduler.Callable[int]{})
		require.NoError(t, err)
		require.Empty(t, futures)
		futures, err = scheduler.InvokeAll[int](coreCtx(t), s, nil)
		require.NoError(t, err)
		require.Empty(t, futures)
		require.Zero(t, s.Stats().TaskCount)
	})
}

// ---------------------------------------------------------------------------
// Cancel.

// coreScheduleKinds schedules a task one hour from now in each of the ways
// the scheduler knows, for tests that must hold for every kind of future.
var coreScheduleKinds = []struct {
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

func TestCancelBeforeRunPreventsTheRun(t *testing.T) {
	for _, kind := range coreScheduleKinds {
		for _, interrupt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/interrupt=%v", kind.name, interrupt), func(t *testing.T) {
				s, clk := coreNewManual(t, 1)
				var ran atomic.Bool
				f, err := kind.schedule(s, func(context.Context) error { ran.Store(true); return nil })
				require.NoError(t, err)
				require.True(t, f.Cancel(interrupt))
				require.True(t, f.IsDone())
				require.True(t, f.IsCanceled())
				require.False(t, f.Cancel(interrupt), "a second Cancel returns false")
				require.False(t, f.Cancel(!interrupt))
				coreAdvance(t, clk, s, 2*time.Hour)
				require.False(t, ran.Load())
				require.ErrorIs(t, f.Wait(coreCtx(t)), scheduler.ErrCanceled)
			})
		}
	}
}

func TestCancelAfterCompletionReturnsFalse(t *testing.T) {
	for _, outcome := range []struct {
		name string
		err  error
	}{{"normal", nil}, {"failed", coreErrBoom}} {
		t.Run(outcome.name, func(t *testing.T) {
			s, _ := coreNewManual(t, 1)
			f, err := s.Submit(func(context.Context) error { return outcome.err })
			require.NoError(t, err)
			coreIdle(t, s)
			require.False(t, f.Cancel(true))
			require.False(t, f.Cancel(false))
			require.False(t, f.IsCanceled())
			require.True(t, f.IsDone())
			require.ErrorIs(t, f.Wait(coreCtx(t)), outcome.err)
		})
	}
}

func TestCancelWithInterruptCancelsTheRunningTasksCtx(t *testing.T) {
	s, _ := coreNewManual(t, 1)
	started := make(chan struct{})
	ctxErr := make(chan error, 1)
	f, err := s.Submit(func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		ctxErr <- ctx.Err()
		return ctx.Err()
	})
	require.NoError(t, err)
	coreRecv(t, started)
	require.True(t, f.Cancel(true))
	require.True(t, f.IsCanceled(), "the future reports canceled at once")
	require.True(t, f.IsDone())
	require.ErrorIs(t, coreRecv(t, ctxErr), context.Canceled)
	coreIdle(t, s)
	require.ErrorIs(t, f.Wait(coreCtx(t)), scheduler.ErrCanceled)
}

func TestCancelWithoutInterruptLetsTheRunFinish(t *testing.T) {
	s, _ := coreNewManual(t, 1)
	started := make(chan struct{})
	release, openRelease := coreGate(t)
	ctxErr := make(chan error, 1)
	f, err := scheduler.SubmitCallable(s, func(ctx context.Context) (int, error) {
		close(started)
		<-release
		ctxErr <- ctx.Err()
		return 99, nil
	})
	require.NoError(t, err)
	coreRecv(t, started)
	require.True(t, f.Cancel(false))
	require.True(t, f.IsCanceled(), "the future reports canceled at once")
	require.True(t, f.IsDone())
	openRelease()
	require.NoError(t, coreRecv(t, ctxErr), "the run's ctx is not canceled")
	coreIdle(t, s)
	v, err := f.Get(coreCtx(t))
	require.ErrorIs(t, err, scheduler.ErrCanceled, "the run's result is discarded")
	require.Zero(t, v)
}

func TestPeriodicTaskCanceledWhileRunningNeverRunsAgain(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		for _, interrupt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/interrupt=%v", kind, interrupt), func(t *testing.T) {
				s, clk := coreNewManual(t, 2)
				var runs atomic.Int32
				started := make(chan struct{})
				release, openRelease := coreGate(t)
				task := func(ctx context.Context) error {
					if runs.Add(1) == 2 {
						coreHold(ctx, started, release)
					}
					return nil
				}
				var f scheduler.ScheduledFuture
				var err error
				if kind == "fixed rate" {
					f, err = s.ScheduleAtFixedRate(task, period, period)
				} else {
					f, err = s.ScheduleWithFixedDelay(task, period, period)
				}
				require.NoError(t, err)
				coreAdvance(t, clk, s, period)
				clk.Advance(period)
				coreRecv(t, started) // run 2 is in progress
				require.True(t, f.Cancel(interrupt))
				require.True(t, f.IsCanceled())
				openRelease()
				coreIdle(t, s)
				// As in the JDK's runAndReset, a run that ends canceled
				// does not re-queue its task.
				require.Empty(t, s.Queue(), "not re-queued after the canceled run")
				for range 5 {
					coreAdvance(t, clk, s, period)
				}
				require.EqualValues(t, 2, runs.Load())
				require.Empty(t, s.Queue())
				require.ErrorIs(t, f.Wait(coreCtx(t)), scheduler.ErrCanceled)
			})
		}
	}
}

// ---------------------------------------------------------------------------
// remove-on-cancel, Purge, Remove.

func TestCanceledTaskStaysQueuedUntilDueByDefault(t *testing.T) {
	s, clk := coreNewManual(t, 1)
	require.False(t, s.RemoveOnCancelPolicy(), "the JDK default")
	var ran atomic.Bool
	f, err := s.Schedule(func(context.Context) error { ran.Store(true); return nil }, time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	coreRequireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
	require.Equal(t, 1, s.Stats().Queued)

	coreAdvance(t, clk, s, time.Hour-1)
	require.Equal(t, 1, s.Stats().Queued)
	coreAdvance(t, clk, s, 1)
	require.Zero(t, s.Stats().Queued, "discarded once due")
	require.Empty(t, s.Queue())
	require.False(t, ran.Load())
}

func TestRemoveOnCancelRemovesCanceledTaskAtOnce(t *testing.T) {
	for _, how := range []string{"option", "setter"} {
		for _, kind := range coreScheduleKinds {
			t.Run(how+"/"+kind.name, func(t *testing.T) {
				var opts []scheduler.Option
				if how == "option" {
					opts = append(opts, scheduler.WithRemoveOnCancel(true))
				}
				s, clk := coreNewManual(t, 1, opts...)
				if how == "setter" {
					s.SetRemoveOnCancelPolicy(true)
				}
				require.True(t, s.RemoveOnCancelPolicy())
				before, err := s.Schedule(coreNop, time.Minute)
				require.NoError(t, err)
				var ran atomic.Bool
				f, err := kind.schedule(s, func(context.Context) error { ran.Store(true); return nil })
				require.NoError(t, err)
				after, err := s.Schedule(coreNop, 2*time.Hour)
				require.NoError(t, err)

				require.True(t, f.Cancel(false))
				coreRequireFutures(t, []scheduler.ScheduledFuture{before, after}, s.Queue())
				require.Equal(t, 2, s.Stats().Queued)
				coreAdvance(t, clk, s, 90*time.Minute)
				require.False(t, ran.Load())
			})
		}
	}
}

func TestSetRemoveOnCancelPolicyDoesNotRemoveEarlierCancels(t *testing.T) {
	s, _ := coreNewManual(t, 1)
	f, err := s.Schedule(coreNop, time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	s.SetRemoveOnCancelPolicy(true)
	coreRequireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue(), "JDK: the setter only stores the flag")
	s.Purge()
	require.Empty(t, s.Queue())
	s.SetRemoveOnCancelPolicy(false)
	require.False(t, s.RemoveOnCancelPolicy())
}

func TestPurgeRemovesOnlyCanceledTasks(t *testing.T) {
	s, clk := coreNewManual(t, 1)
	var futures []scheduler.ScheduledFuture
	for i := range 6 {
		f, err := s.Schedule(coreNop, time.Duration(i+1)*time.Minute)
		require.NoError(t, err)
		futures = append(futures, f)
	}
	periodic, err := s.ScheduleAtFixedRate(coreNop, 10*time.Minute, time.Minute)
	require.NoError(t, err)
	canceledPeriodic, err := s.ScheduleWithFixedDelay(coreNop, 11*time.Minute, time.Minute)
	require.NoError(t, err)
	for _, i := range []int{0, 2, 3} {
		require.True(t, futures[i].Cancel(false))
	}
	require.True(t, canceledPeriodic.Cancel(true))
	require.Len(t, s.Queue(), 8)

	s.Purge()
	coreRequireFutures(t, []scheduler.ScheduledFuture{futures[1], futures[4], futures[5], periodic}, s.Queue())
	require.Equal(t, 4, s.Stats().Queued)
	for _, f := range []scheduler.ScheduledFuture{futures[1], futures[4], futures[5], periodic} {
		require.False(t, f.IsDone())
	}
	coreAdvance(t, clk, s, 10*time.Minute)
	for _, i := range []int{1, 4, 5} {
		require.NoError(t, futures[i].Wait(coreCtx(t)), "a kept task still runs")
	}
}

func TestRemoveTakesQueuedTaskOutWithoutCanceling(t *testing.T) {
	t.Run("queued", func(t *testing.T) {
		for _, kind := range coreScheduleKinds {
			t.Run(kind.name, func(t *testing.T) {
				s, clk := coreNewManual(t, 1)
				var ran atomic.Bool
				f, err := kind.schedule(s, func(context.Context) error { ran.Store(true); return nil })
				require.NoError(t, err)
				other, err := s.Schedule(coreNop, 2*time.Hour)
				require.NoError(t, err)

				require.True(t, s.Remove(f))
				require.False(t, f.IsDone(), "Remove does not cancel")
				require.False(t, f.IsCanceled())
				coreRequireFutures(t, []scheduler.ScheduledFuture{other}, s.Queue())
				require.False(t, s.Remove(f), "a second Remove finds nothing")

				coreAdvance(t, clk, s, 3*time.Hour)
				require.False(t, ran.Load())
				require.True(t, f.Cancel(false), "the removed task can still be canceled")
			})
		}
	})
	t.Run("running", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		started := make(chan struct{})
		release, openRelease := coreGate(t)
		f, err := s.Submit(func(context.Context) error { close(started); <-release; return nil })
		require.NoError(t, err)
		coreRecv(t, started)
		require.False(t, s.Remove(f))
		openRelease()
		require.NoError(t, f.Wait(coreCtx(t)))
	})
	t.Run("done", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		f, err := s.Submit(coreNop)
		require.NoError(t, err)
		coreIdle(t, s)
		require.False(t, s.Remove(f))
	})
	t.Run("another scheduler's", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		other, _ := coreNewManual(t, 1)
		f, err := other.Schedule(coreNop, time.Hour)
		require.NoError(t, err)
		require.False(t, s.Remove(f))
		coreRequireFutures(t, []scheduler.ScheduledFuture{f}, other.Queue())
		require.False(t, f.IsDone())
	})
	t.Run("nil", func(t *testing.T) {
		s, _ := coreNewManual(t, 1)
		require.False(t, s.Remove(nil))
	})
}
