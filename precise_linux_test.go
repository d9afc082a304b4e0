//go:build linux

package scheduler

// The fine wait's own tests: they need the high-resolution sleep, which
// only Linux has here (precise_linux.go). Elsewhere precise timing is the
// plain timer, which TestPreciseOffChangesNothing and
// TestPreciseNeverEarly check on every OS.

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// preciseFar is the due time of a task a fine wait is made to wait for:
// far enough that, on any machine, what the test does meanwhile happens
// first. The margin is longer still, so the fine wait begins at once.
const (
	preciseFar        = 5 * time.Second
	preciseLongMargin = time.Minute
)

// TestPreciseNewDueHeadNotHeldUp: while one worker is in the fine wait for
// a task due in preciseFar, a task submitted to run now runs at once, not
// after the fine wait.
func TestPreciseNewDueHeadNotHeldUp(t *testing.T) {
	fineWaits := make(chan struct{}, 1)
	s := preciseNew(t, 2, preciseLongMargin, fineWaits)
	far, err := s.Schedule(nop, preciseFar)
	require.NoError(t, err)
	preciseRecv(t, fineWaits)
	now, err := s.Submit(nop)
	require.NoError(t, err)
	require.NoError(t, now.Wait(testCtx(t)))
	require.False(t, far.IsDone(), "the far task ran before the one submitted after it")
	// Which worker ran the new task is not fixed: the other worker, or the
	// fine waiter itself if it woke between two sleeps first (a loaded
	// machine makes either happen), so the test does not look at q.fine.
}

// TestPreciseNewEarlierHeadNotHeldUp: with a pool of one, the only worker
// is in the fine wait for a task due in preciseFar; a task queued to run
// sooner is noticed by that worker between two steps and runs first.
func TestPreciseNewEarlierHeadNotHeldUp(t *testing.T) {
	fineWaits := make(chan struct{}, 1)
	s := preciseNew(t, 1, preciseLongMargin, fineWaits)
	far, err := s.Schedule(nop, preciseFar)
	require.NoError(t, err)
	preciseRecv(t, fineWaits)
	sooner, err := s.Schedule(nop, 10*time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, sooner.Wait(testCtx(t)))
	require.False(t, far.IsDone(), "the far task ran before the sooner one")
}

// TestPreciseFallsBackInBubble: inside a synctest bubble a real sleep does
// not move time. The first fine wait notices, turns precise timing off, and
// the task still runs exactly at its due time on the bubble's clock; later
// waits arm the timer for the head's own time.
func TestPreciseFallsBackInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s, err := New(1, WithPreciseTiming(true))
		require.NoError(t, err)
		var (
			mu    sync.Mutex
			ranAt []time.Duration
		)
		got := func() []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return append([]time.Duration(nil), ranAt...)
		}
		for _, d := range []time.Duration{time.Second, 2 * time.Second} {
			_, err := s.Schedule(func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				ranAt = append(ranAt, time.Since(start))
				return nil
			}, d)
			require.NoError(t, err)
		}
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		require.Equal(t, []time.Duration{time.Second}, got())
		s.q.mu.Lock()
		require.True(t, s.q.preciseOff, "the fine wait did not notice the bubble")
		require.NotNil(t, s.q.leader)
		require.Equal(t, s.q.heap.peek().when, s.q.leader.deadline, "after the fallback the timer waits for the head itself")
		s.q.mu.Unlock()
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, got())
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
	})
}

// TestHighResSleepPutsTheTimerSlackBack: a high-resolution sleep lowers its
// thread's timer slack only for itself; the thread has its own slack again
// afterwards, so other goroutines that run on it later are not affected.
func TestHighResSleepPutsTheTimerSlackBack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	slack := func() uintptr {
		v, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
		require.Zero(t, errno)
		return v
	}
	before := slack()
	require.Greater(t, before, uintptr(fineTimerSlack), "a thread starts with the default slack")
	require.True(t, fineSleep(new(atomic.Uint32), 0, time.Microsecond))
	require.Equal(t, before, slack())
}

// TestPreciseShutdownWakesFineWaiter: the fine waiter sleeps until its
// head in one sleep, here an hour; ShutdownNow wakes it, so the scheduler
// terminates at once rather than after the sleep.
func TestPreciseShutdownWakesFineWaiter(t *testing.T) {
	fineWaits := make(chan struct{}, 1)
	s, err := New(1, WithPreciseTiming(true))
	require.NoError(t, err)
	s.q.margin = int64(2 * time.Hour)
	s.q.onFineWait = func() {
		select {
		case fineWaits <- struct{}{}:
		default:
		}
	}
	_, err = s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	preciseRecv(t, fineWaits)
	s.ShutdownNow()
	require.NoError(t, s.AwaitTermination(testCtx(t)), "the fine waiter slept on through the shutdown")
}

// TestPreciseSpinFallsBackInBubble: a head due within preciseSpin is
// waited for by spinning on the clock; inside a synctest bubble the clock
// does not move while the spinner runs, so the spin gives up, precise
// timing turns itself off, and the task runs at its due time on the
// bubble's clock.
func TestPreciseSpinFallsBackInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s, err := New(1, WithPreciseTiming(true))
		require.NoError(t, err)
		ran := make(chan time.Duration, 1)
		_, err = s.Schedule(func(context.Context) error {
			ran <- time.Since(start)
			return nil
		}, preciseSpin/2)
		require.NoError(t, err)
		require.Equal(t, preciseSpin/2, <-ran)
		s.q.mu.Lock()
		require.True(t, s.q.preciseOff, "the spin did not notice the bubble")
		s.q.mu.Unlock()
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
	})
}
