package scheduler

// The leader-follower wait (leader.go), seen from inside. The tests
// run inside testing/synctest bubbles: synctest.Wait() returns only once
// every worker is durably blocked, which is also the proof that none of
// them spins. Time comes from fakeClock (internal_helpers_test.go).

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// poolView is the leader-follower state at one instant.
type poolView struct {
	workers, parked, active int
	leader                  *worker
	runners                 []*worker // workers with a current task
}

func lookAtPool(s *Scheduler) poolView {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	v := poolView{workers: len(s.workers), parked: s.q.parked, active: s.active, leader: s.q.leader}
	for w := range s.workers {
		if w.run.t != nil {
			v.runners = append(v.runners, w)
		}
	}
	return v
}

func TestInternalLeaderOneTimedWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		s := newTestScheduler(t, 4, clk)
		require.Equal(t, 4, s.PrestartAllCoreWorkers())
		synctest.Wait()
		v := lookAtPool(s)
		require.Equal(t, 4, v.parked, "every worker is parked")
		require.Nil(t, v.leader, "with nothing queued nobody leads")
		n, _ := clk.armed()
		require.Zero(t, n, "and nobody waits with a timer")

		// A task in the future: exactly one worker wakes, and it is the
		// only one in a timed wait.
		woke := clk.track(func() {
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			synctest.Wait()
		})
		require.Equal(t, 1, woke, "one new head wakes one worker")
		v = lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.NotNil(t, v.leader)
		n, dues := clk.armed()
		require.Equal(t, 1, n, "at most one worker in a timed wait")
		require.Equal(t, []time.Duration{time.Hour}, dues)

		// A task that does not become the head wakes nobody.
		woke = clk.track(func() {
			_, err := s.Schedule(nop, 2*time.Hour)
			require.NoError(t, err)
			synctest.Wait()
		})
		require.Zero(t, woke, "no herd")
		n, _ = clk.armed()
		require.Equal(t, 1, n)

		// A new, earlier head wakes exactly one goroutine, which re-arms
		// for it.
		woke = clk.track(func() {
			_, err := s.Schedule(nop, 30*time.Minute)
			require.NoError(t, err)
			synctest.Wait()
		})
		require.Equal(t, 1, woke)
		v = lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.NotNil(t, v.leader)
		n, dues = clk.armed()
		require.Equal(t, 1, n)
		require.Equal(t, []time.Duration{30 * time.Minute}, dues)
	})
}

func TestInternalLeaderHandsOffBeforeRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		s := newTestScheduler(t, 4, clk)
		require.Equal(t, 4, s.PrestartAllCoreWorkers())
		started, release := make(chan struct{}), make(chan struct{})
		first, err := s.Schedule(func(context.Context) error {
			close(started)
			<-release
			return nil
		}, time.Hour)
		require.NoError(t, err)
		second, err := s.Schedule(nop, 2*time.Hour)
		require.NoError(t, err)
		synctest.Wait()

		// The leader's timer fires; it takes the first task and, before
		// running it, signals one follower to lead for the second: two
		// goroutines wake, not four.
		woke := clk.track(func() {
			clk.Advance(time.Hour)
			<-started
			synctest.Wait()
		})
		require.Equal(t, 2, woke, "the old leader and the one follower it handed off to")

		v := lookAtPool(s)
		require.Len(t, v.runners, 1)
		runner := v.runners[0]
		require.Same(t, first.(*futureTask), runner.run.t)
		require.NotNil(t, v.leader, "another worker leads while the first task runs")
		require.NotSame(t, runner, v.leader)
		require.Equal(t, 3, v.parked)
		require.Equal(t, 1, v.active)
		n, dues := clk.armed()
		require.Equal(t, 1, n)
		require.Equal(t, []time.Duration{2 * time.Hour}, dues, "armed for the second task")

		// The runner comes back, sees a leader, and follows; it wakes nobody.
		woke = clk.track(func() {
			close(release)
			synctest.Wait()
		})
		require.Equal(t, 1, woke, "only the runner looks at the queue")
		v = lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.Zero(t, v.active)
		n, _ = clk.armed()
		require.Equal(t, 1, n)

		clk.Advance(time.Hour)
		synctest.Wait()
		require.True(t, second.IsDone())
	})
}

func TestInternalLeaderLastTaskHandsOffToNobody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		s := newTestScheduler(t, 4, clk)
		require.Equal(t, 4, s.PrestartAllCoreWorkers())
		f, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		synctest.Wait()
		woke := clk.track(func() {
			clk.Advance(time.Hour)
			synctest.Wait()
		})
		require.True(t, f.IsDone())
		require.Equal(t, 1, woke, "with nothing left to wait for, no follower is woken")
		v := lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.Nil(t, v.leader)
	})
}

func TestInternalWorkersParkWithoutPolling(t *testing.T) {
	// On the system clock in a bubble: if any worker spun or polled,
	// synctest.Wait would not return, and the workers would not all be
	// counted as parked.
	synctest.Test(t, func(t *testing.T) {
		s := newTestScheduler(t, 4, SystemClock())
		var runs atomic.Int32
		start := time.Now()
		var at []time.Duration
		_, err := s.ScheduleAtFixedRate(func(context.Context) error {
			runs.Add(1)
			at = append(at, time.Since(start))
			return nil
		}, time.Hour, time.Hour)
		require.NoError(t, err)
		require.Equal(t, 3, s.PrestartAllCoreWorkers())
		synctest.Wait()
		v := lookAtPool(s)
		require.Equal(t, 4, v.workers)
		require.Equal(t, 4, v.parked)
		require.NotNil(t, v.leader)

		time.Sleep(3*time.Hour + time.Minute) // virtual time in the bubble
		synctest.Wait()
		require.Equal(t, int32(3), runs.Load())
		require.Equal(t, []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour}, at, "each run exactly when due")
		v = lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.NotNil(t, v.leader)
	})
}
