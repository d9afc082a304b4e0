package scheduler_test

// Stats (stats.go): the run counters, every path that
// counts a cancel, Queued, TaskCount and LargestPoolSize.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestLifeStatsRunCounters(t *testing.T) {
	s, clk := newManual(t, 1)
	var n atomic.Int32
	p, err := s.ScheduleAtFixedRate(func(context.Context) error {
		switch n.Add(1) {
		case 2:
			return errBoom
		case 3:
			panic("p boom")
		}
		return nil
	}, time.Minute, time.Minute, scheduler.ContinueOnError())
	require.NoError(t, err)
	oneShots := []scheduler.Task{
		nop,
		func(context.Context) error { return errBoom },
		func(context.Context) error { panic("boom") },
	}
	for _, task := range oneShots {
		_, err := s.Submit(task)
		require.NoError(t, err)
	}
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	for range 4 {
		advance(t, clk, s, time.Minute)
	}
	require.Equal(t, int32(4), n.Load())
	require.False(t, p.IsDone())

	st := s.Stats()
	require.Equal(t, uint64(7), st.Completed, "every run counts, each periodic run and failed runs too")
	require.Equal(t, uint64(4), st.Failed, "runs that returned an error or panicked")
	require.Equal(t, uint64(2), st.Panicked, "the runs that panicked")
	require.Equal(t, 0, st.Active)
	require.Equal(t, 1, st.Queued)
	require.Equal(t, uint64(8), st.TaskCount)
}

func TestLifeStatsCanceledCountsEveryPath(t *testing.T) {
	cases := []struct {
		name string
		opts []scheduler.Option
		act  func(t *testing.T, s *scheduler.Scheduler)
		want uint64
	}{
		{"Cancel of a queued task counts once", nil, func(t *testing.T, s *scheduler.Scheduler) {
			f, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			require.True(t, f.Cancel(false))
			require.False(t, f.Cancel(true))
		}, 1},
		{"Cancel after completion does not count", nil, func(t *testing.T, s *scheduler.Scheduler) {
			f, err := s.Submit(nop)
			require.NoError(t, err)
			require.NoError(t, f.Wait(testCtx(t)))
			require.False(t, f.Cancel(true))
		}, 0},
		{"Cancel of a running task", nil, func(t *testing.T, s *scheduler.Scheduler) {
			gate := newTaskGate(t)
			f := gate.Start(t, s, gate.Task)
			require.True(t, f.Cancel(true))
			require.NoError(t, s.AwaitIdle(testCtx(t)))
		}, 1},
		{"Shutdown's policies", []scheduler.Option{scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false)},
			func(t *testing.T, s *scheduler.Scheduler) {
				_, err := s.Schedule(nop, time.Hour)
				require.NoError(t, err)
				_, err = s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
				require.NoError(t, err)
				s.Shutdown()
				require.NoError(t, s.AwaitTermination(testCtx(t)))
			}, 2},
		{"a periodic run ending after Shutdown", nil, func(t *testing.T, s *scheduler.Scheduler) {
			gate := newTaskGate(t)
			f, err := s.ScheduleAtFixedRate(gate.Task, 0, time.Minute)
			require.NoError(t, err)
			gate.WaitStarted(t)
			s.Shutdown()
			gate.Open()
			require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
		}, 1},
		{"a periodic run ending after ShutdownNow", nil, func(t *testing.T, s *scheduler.Scheduler) {
			gate := newTaskGate(t)
			f, err := s.ScheduleWithFixedDelay(gate.Task, 0, time.Minute)
			require.NoError(t, err)
			gate.WaitStarted(t)
			s.ShutdownNow()
			require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
		}, 1},
		{"AbortPolicy's dropped future", []scheduler.Option{scheduler.WithMaxQueueSize(1)}, func(t *testing.T, s *scheduler.Scheduler) {
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			_, err = s.Schedule(nop, time.Hour)
			require.ErrorIs(t, err, scheduler.ErrRejected)
		}, 1},
		{"DiscardPolicy", []scheduler.Option{scheduler.WithRejectionPolicy(scheduler.DiscardPolicy)}, func(t *testing.T, s *scheduler.Scheduler) {
			s.Shutdown()
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
		}, 1},
		{"DiscardOldestPolicy's victim", []scheduler.Option{scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(scheduler.DiscardOldestPolicy)},
			func(t *testing.T, s *scheduler.Scheduler) {
				_, err := s.Schedule(nop, time.Hour)
				require.NoError(t, err)
				_, err = s.Schedule(nop, 2*time.Hour)
				require.NoError(t, err)
			}, 1},
		{"ShutdownNow cancels none of the queued tasks it returns", nil, func(t *testing.T, s *scheduler.Scheduler) {
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			require.Len(t, s.ShutdownNow(), 1)
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newManual(t, 1, tc.opts...)
			tc.act(t, s)
			require.Equal(t, tc.want, s.Stats().Canceled)
		})
	}
}

func TestLifeStatsQueuedIncludesCanceledTasks(t *testing.T) {
	s, _ := newManual(t, 1)
	f, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	_, err = s.Schedule(nop, 2*time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	st := s.Stats()
	require.Equal(t, 2, st.Queued, "canceled, not yet removed")
	require.Equal(t, uint64(2), st.TaskCount)
	s.Purge()
	st = s.Stats()
	require.Equal(t, 1, st.Queued)
	require.Equal(t, uint64(1), st.TaskCount)
}

func TestLifeStatsTaskCount(t *testing.T) {
	s, clk := newManual(t, 2)
	for range 2 {
		_, err := s.Submit(nop)
		require.NoError(t, err)
	}
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	gate := newTaskGate(t)
	for range 2 {
		_, err := s.Submit(gate.Task)
		require.NoError(t, err)
		gate.WaitStarted(t)
	}
	for range 3 {
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
	}

	st := s.Stats()
	require.Equal(t, [3]int{2, 2, 3}, [3]int{int(st.Completed), st.Active, st.Queued}, "Completed, Active, Queued while two tasks run")
	require.Equal(t, uint64(7), st.TaskCount)
	require.Equal(t, st.Completed+uint64(st.Active)+uint64(st.Queued), st.TaskCount)

	gate.Open()
	advance(t, clk, s, time.Hour)
	st = s.Stats()
	require.Equal(t, [3]int{7, 0, 0}, [3]int{int(st.Completed), st.Active, st.Queued}, "Completed, Active, Queued at quiescence")
	require.Equal(t, uint64(7), st.TaskCount)
}

func TestLifeStatsLargestPoolSize(t *testing.T) {
	s, _ := newManual(t, 3)
	gate := newTaskGate(t)
	for i := 1; i <= 3; i++ {
		_, err := s.Submit(gate.Task)
		require.NoError(t, err)
		gate.WaitStarted(t)
		st := s.Stats()
		require.Equal(t, i, st.PoolSize, "as in the JDK, one worker per submission until the pool is full")
		require.Equal(t, i, st.LargestPoolSize)
	}
	require.NoError(t, s.SetCorePoolSize(1))
	gate.Open()
	// Each busy worker re-checks the pool size as its run ends, in the same
	// step that stops counting it as active, so once idle only one is left.
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	st := s.Stats()
	require.Equal(t, 1, st.PoolSize)
	require.Equal(t, 1, st.CorePoolSize)
	require.Equal(t, 3, st.LargestPoolSize, "a high-water mark")

	s.Shutdown()
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	st = s.Stats()
	require.Zero(t, st.PoolSize)
	require.Equal(t, 3, st.LargestPoolSize, "survives termination")
}
