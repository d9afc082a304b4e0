package scheduler

// Precise timing, seen from inside: the fine wait never starts a task
// early, does not hold up a new head, and turns itself off where a real
// sleep means nothing (a manual clock, a synctest bubble). How precise it
// is, is measured in bench_test.go (BenchmarkPreciseLateness), never here.
// The behavioural suite also runs with it on in a bubble (clocksuite_test.go,
// driver synctest+precise).

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// preciseNew returns a scheduler on the system clock with precise timing
// on, shut down when the test ends. margin, if not 0, replaces
// preciseMargin, so that a fine wait lasts long enough to act during it.
// fineWaits, if not nil, receives a value as each fine wait begins.
func preciseNew(t *testing.T, pool int, margin time.Duration, fineWaits chan<- struct{}, opts ...Option) *Scheduler {
	t.Helper()
	s, err := New(pool, append([]Option{WithPreciseTiming(true), WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	require.NoError(t, err)
	if margin != 0 {
		s.q.margin = int64(margin)
	}
	if fineWaits != nil {
		s.q.onFineWait = func() {
			select {
			case fineWaits <- struct{}{}:
			default:
			}
		}
	}
	t.Cleanup(func() {
		s.ShutdownNow()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.AwaitTermination(ctx))
	})
	return s
}

// TestPreciseNeverEarly runs many one-shot tasks on the real clock with
// precise timing on and checks, for each, that it started no earlier than
// its due time by the scheduler's clock, and that a pool of one started
// them in due order. It asserts no timing bound.
func TestPreciseNeverEarly(t *testing.T) {
	const tasks = 300
	var (
		mu   sync.Mutex
		runs []RunInfo
		done = make(chan struct{})
	)
	fineWaits := make(chan struct{}, 1)
	s := preciseNew(t, 1, 0, fineWaits, WithHooks(Hooks{Observe: func(r RunInfo) {
		mu.Lock()
		defer mu.Unlock()
		runs = append(runs, r)
		if len(runs) == tasks {
			close(done)
		}
	}}))
	r := rand.New(rand.NewPCG(1, 2))
	for range tasks {
		_, err := s.Schedule(nop, time.Duration(r.Int64N(int64(300*time.Millisecond))))
		require.NoError(t, err)
	}
	<-done
	if preciseSupported {
		requireReceived(t, fineWaits, "no fine wait happened: the test did not exercise precise timing")
	} else {
		require.Empty(t, fineWaits, "a fine wait happened on an OS without one")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, run := range runs {
		require.GreaterOrEqual(t, run.Started.Sub(run.Due), time.Duration(0), "run %d started before it was due", i)
		if i > 0 {
			require.False(t, run.Due.Before(runs[i-1].Due), "run %d started out of due order", i)
		}
	}
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	require.False(t, s.q.preciseOff, "precise timing turned itself off on the real clock")
}

// preciseRecv waits for a value on ch, failing the test after a long
// real-time limit (a hang is a bug).
func preciseRecv(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-testCtx(t).Done():
		require.Fail(t, "no fine wait began")
	}
}

// TestPreciseNoEffectWithManualClock: with a clock other than the system
// clock the leader's timer is armed for the head's time, no fine wait
// happens, and the task runs when the clock reaches its time, not before.
func TestPreciseNoEffectWithManualClock(t *testing.T) {
	clk := newFakeClock()
	s := newTestScheduler(t, 1, clk, WithPreciseTiming(true))
	s.q.onFineWait = func() { t.Error("a fine wait began on a manual clock") }
	f, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	n, dues := clk.armed()
	require.Equal(t, 1, n)
	require.Equal(t, []time.Duration{time.Hour}, dues, "the timer is armed for the head's own time")
	clk.Advance(time.Hour - time.Nanosecond)
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	require.False(t, f.IsDone(), "ran before its time")
	clk.Advance(time.Nanosecond)
	require.NoError(t, f.Wait(testCtx(t)))
}

// TestPreciseOffChangesNothing: on the system clock, without the option,
// the leader waits for the head's own time; with it, a margin earlier.
func TestPreciseOffChangesNothing(t *testing.T) {
	for _, on := range []bool{false, true} {
		s, err := New(1, WithPreciseTiming(on))
		require.NoError(t, err)
		s.q.onFineWait = func() { t.Error("a fine wait began for a task an hour away") }
		_, err = s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		s.q.mu.Lock()
		want, _ := s.q.wakeTimeLocked(s.q.heap.peek()) // the earliest task, in the heap or the timing wheel
		if on && preciseSupported {
			want -= int64(preciseMargin)
		}
		require.NotNil(t, s.q.leader)
		require.Equal(t, want, s.q.leader.deadline, "precise %v", on)
		s.q.mu.Unlock()
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(testCtx(t)))
	}
}

// TestPreciseChurn runs many short-delay tasks with precise timing on the
// real clock while tasks are canceled (remove-on-cancel) and the pool
// shrinks and grows: every task not canceled must run, none early, and no
// canceled one at all. A lost wake-up between the fine waiter, the leader
// and the followers would leave a task queued past its time and fail the
// wait.
func TestPreciseChurn(t *testing.T) {
	const tasks = 2000
	var (
		early    atomic.Int64
		ran      sync.WaitGroup // one per task: its run, or its cancel
		executed [tasks]atomic.Bool
		canceled [tasks]bool
	)
	s := preciseNew(t, 2, 0, nil, WithRemoveOnCancel(true), WithHooks(Hooks{Observe: func(r RunInfo) {
		if r.Started.Before(r.Due) {
			early.Add(1)
		}
	}}))
	r := rand.New(rand.NewPCG(3, 4))
	ran.Add(tasks)
	for i := range tasks {
		f, err := s.Schedule(func(context.Context) error {
			executed[i].Store(true)
			ran.Done()
			return nil
		}, time.Duration(r.Int64N(int64(20*time.Millisecond))))
		require.NoError(t, err)
		// A cancel may lose the race with a run that came due meanwhile;
		// then the run counts.
		if i%3 == 2 && f.Cancel(false) {
			canceled[i] = true
			ran.Done()
		}
		switch i {
		case tasks / 4:
			require.NoError(t, s.SetCorePoolSize(1))
		case tasks / 2:
			require.NoError(t, s.SetCorePoolSize(3))
		}
	}
	done := make(chan struct{})
	go func() { ran.Wait(); close(done) }()
	select {
	case <-done:
	case <-testCtx(t).Done():
		require.Fail(t, "not every task ran", "queued: %d", s.Stats().Queued)
	}
	require.Zero(t, early.Load(), "runs started before they were due")
	for i := range tasks {
		require.False(t, canceled[i] && executed[i].Load(), "task %d ran after it was canceled", i)
	}
}

// TestPreciseLongTaskDoesNotHoldUpOthers: the fine waiter runs the tasks
// it waited for itself, without waking another worker for each; while it
// runs one that blocks, a task that comes due meanwhile is run by the
// other worker (the leader, whose timer waits for the head meanwhile).
func TestPreciseLongTaskDoesNotHoldUpOthers(t *testing.T) {
	s := preciseNew(t, 2, 0, nil)
	release := make(chan struct{})
	blocking, err := s.Schedule(func(ctx context.Context) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}, time.Millisecond)
	require.NoError(t, err)
	next, err := s.Schedule(nop, 2*time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, next.Wait(testCtx(t)), "the second task waited for the first one to end")
	require.False(t, blocking.IsDone())
	close(release)
	require.NoError(t, blocking.Wait(testCtx(t)))
}

// requireReceived fails the test unless ch holds a value.
func requireReceived(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	default:
		require.Fail(t, msg)
	}
}
