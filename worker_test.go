package scheduler_test

// The pool (worker.go): workers start lazily, one per task up to the pool
// size; SetCorePoolSize and PrestartAllCoreWorkers, as in the JDK.

import (
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestWorkersStartOnePerTaskUpToPoolSize(t *testing.T) {
	s, _ := newManual(t, 3)
	require.Zero(t, s.Stats().PoolSize)
	for i := 1; i <= 6; i++ {
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		st := s.Stats()
		require.Equal(t, min(i, 3), st.PoolSize, "after %d tasks", i)
		require.Equal(t, min(i, 3), st.LargestPoolSize, "after %d tasks", i)
	}
}

func TestLifeSetCorePoolSize(t *testing.T) {
	for _, n := range []int{0, -1} {
		t.Run("n="+strconv.Itoa(n)+" is an invalid argument", func(t *testing.T) {
			s, _ := newManual(t, 2)
			require.ErrorIs(t, s.SetCorePoolSize(n), scheduler.ErrInvalidArgument)
			require.Equal(t, 2, s.Stats().CorePoolSize)
		})
	}
	t.Run("growing starts a worker per queued task, up to the new size", func(t *testing.T) {
		s, _ := newManual(t, 1)
		gate := newTaskGate(t)
		gate.Start(t, s, gate.Task)
		var queued []scheduler.ScheduledFuture
		for range 2 {
			f, err := s.Submit(nop)
			require.NoError(t, err)
			queued = append(queued, f)
		}
		require.Equal(t, 1, s.Stats().PoolSize)

		require.NoError(t, s.SetCorePoolSize(5))
		st := s.Stats()
		require.Equal(t, 5, st.CorePoolSize)
		require.Equal(t, 3, st.PoolSize, "as in the JDK, min(delta, queued) new workers")
		for _, f := range queued {
			require.NoError(t, f.Wait(testCtx(t)), "run by the new workers while the first is still busy")
		}
	})
	t.Run("growing with nothing queued starts no worker", func(t *testing.T) {
		s, _ := newManual(t, 1)
		require.Equal(t, 1, s.PrestartAllCoreWorkers())
		require.NoError(t, s.SetCorePoolSize(4))
		require.Equal(t, 1, s.Stats().PoolSize)
		require.Equal(t, 3, s.PrestartAllCoreWorkers())
	})
	t.Run("shrinking: AwaitIdle returns once the extra workers exited", func(t *testing.T) {
		s, clk := newManual(t, 4)
		var runs atomic.Int32
		_, err := s.ScheduleAtFixedRate(countRuns(&runs), time.Minute, time.Minute)
		require.NoError(t, err)
		require.Equal(t, 3, s.PrestartAllCoreWorkers())
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Equal(t, 4, s.Stats().PoolSize)

		require.NoError(t, s.SetCorePoolSize(1))
		require.NoError(t, s.AwaitIdle(testCtx(t)))
		require.Equal(t, 1, s.Stats().PoolSize, "the woken extra workers are gone")
		advance(t, clk, s, 3*time.Minute)
		require.Equal(t, int32(3), runs.Load(), "the remaining worker runs the task")
	})
	t.Run("shrinking lets idle workers exit", func(t *testing.T) {
		// The same seen from synctest.Wait, which knows when every
		// goroutine is blocked.
		synctest.Test(t, func(t *testing.T) {
			s, err := scheduler.New(3, scheduler.WithLogger(slog.New(slog.DiscardHandler)))
			require.NoError(t, err)
			var runs atomic.Int32
			_, err = s.Schedule(countRuns(&runs), time.Hour) // a leader waits for it
			require.NoError(t, err)
			require.Equal(t, 2, s.PrestartAllCoreWorkers())
			synctest.Wait()
			require.Equal(t, 3, s.Stats().PoolSize)

			require.NoError(t, s.SetCorePoolSize(1))
			synctest.Wait()
			require.Equal(t, 1, s.Stats().PoolSize)

			time.Sleep(time.Hour) // virtual time in the bubble
			synctest.Wait()
			require.Equal(t, int32(1), runs.Load(), "the remaining worker still runs the queue")
			s.Shutdown()
			require.NoError(t, s.AwaitTermination(t.Context()))
		})
	})
}

func TestLifePrestartAllCoreWorkers(t *testing.T) {
	t.Run("starts every worker, then none", func(t *testing.T) {
		s, _ := newManual(t, 3)
		require.Zero(t, s.Stats().PoolSize, "workers start lazily")
		require.Equal(t, 3, s.PrestartAllCoreWorkers())
		require.Zero(t, s.PrestartAllCoreWorkers())
		st := s.Stats()
		require.Equal(t, 3, st.PoolSize)
		require.Equal(t, 3, st.LargestPoolSize)
	})
	t.Run("counts only the workers it started", func(t *testing.T) {
		s, _ := newManual(t, 3)
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.Equal(t, 1, s.Stats().PoolSize)
		require.Equal(t, 2, s.PrestartAllCoreWorkers())
	})
	t.Run("starts none after Shutdown", func(t *testing.T) {
		s, _ := newManual(t, 3)
		s.Shutdown()
		require.Zero(t, s.PrestartAllCoreWorkers())
	})
}
