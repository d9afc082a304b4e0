package scheduler_test

// Bad input to the policies and the pool size: a nil rejection policy, pool
// sizes below one and huge ones, the built-in policies after Shutdown and on
// a full queue, and remove-on-cancel with Cancel twice and Remove after.

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// addBadPolicyRows adds the rows for the rejection policies and the pool
// size.
func addBadPolicyRows(add func(...badCase)) {
	add(badCase{name: "SetRejectionPolicy/nil: AbortPolicy", run: func(t *testing.T, e *badEnv) {
		e.s.SetRejectionPolicy(scheduler.DiscardPolicy)
		e.s.SetRejectionPolicy(nil)
		e.s.Shutdown()
		_, err := e.s.Submit(nop)
		require.ErrorIs(t, err, scheduler.ErrRejected)
	}})
	for _, n := range []int{0, -1, math.MinInt} {
		add(badCase{name: fmt.Sprintf("SetCorePoolSize/%d: ErrInvalidArgument, size unchanged", n), pool: 2, run: func(t *testing.T, e *badEnv) {
			require.ErrorIs(t, e.s.SetCorePoolSize(n), scheduler.ErrInvalidArgument)
			require.Equal(t, 2, e.s.Stats().CorePoolSize)
		}})
	}
	add(badCase{name: "SetCorePoolSize/huge: at most one new worker per queued task", run: func(t *testing.T, e *badEnv) {
		_, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.NoError(t, e.s.SetCorePoolSize(math.MaxInt))
		require.LessOrEqual(t, e.s.Stats().PoolSize, 2)
	}})
	add(badCase{name: "SetCorePoolSize and PrestartAllCoreWorkers/after termination: no worker starts", run: func(t *testing.T, e *badEnv) {
		e.s.Shutdown()
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		require.NoError(t, e.s.SetCorePoolSize(4))
		require.Zero(t, e.s.PrestartAllCoreWorkers())
		require.Zero(t, e.s.Stats().PoolSize)
	}})
	add(badCase{name: "PrestartAllCoreWorkers/twice: the second starts none", pool: 3, run: func(t *testing.T, e *badEnv) {
		require.Equal(t, 3, e.s.PrestartAllCoreWorkers())
		require.Zero(t, e.s.PrestartAllCoreWorkers())
		require.Equal(t, 3, e.s.Stats().PoolSize)
	}})
	add(badCase{name: "Set*Policy/after Shutdown: applied at once, getters agree", run: func(t *testing.T, e *badEnv) {
		one, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		e.s.Shutdown()
		e.s.SetRemoveOnCancelPolicy(true)
		require.True(t, e.s.RemoveOnCancelPolicy())
		e.s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(false)
		require.False(t, e.s.ContinueExistingPeriodicTasksAfterShutdownPolicy())
		e.s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(false) // cancels the queued one-shot
		require.False(t, e.s.ExecuteExistingDelayedTasksAfterShutdownPolicy())
		require.True(t, one.IsCanceled())
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		e.s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(true) // too late to matter; harmless
	}})

	for _, pol := range []struct {
		name string
		p    scheduler.RejectionPolicy
	}{{"CallerRunsPolicy", scheduler.CallerRunsPolicy}, {"DiscardPolicy", scheduler.DiscardPolicy}, {"DiscardOldestPolicy", scheduler.DiscardOldestPolicy}} {
		add(badCase{name: pol.name + "/after Shutdown: discards; the future is returned canceled, no error",
			opts: []scheduler.Option{scheduler.WithRejectionPolicy(pol.p)},
			run: func(t *testing.T, e *badEnv) {
				queued, err := e.s.Schedule(nop, time.Hour)
				require.NoError(t, err)
				e.s.Shutdown()
				var ran atomic.Int32
				f, err := e.s.Submit(countRuns(&ran))
				require.NoError(t, err)
				require.True(t, f.IsCanceled())
				require.Zero(t, ran.Load())
				require.False(t, queued.IsDone(), "DiscardOldest does not touch the queue after Shutdown")
				require.Equal(t, []scheduler.ScheduledFuture{queued}, e.s.ShutdownNow())
			}})
	}
	add(badCase{name: "CallerRunsPolicy/queue full, the task panics: recovered in the caller, *PanicError",
		opts: []scheduler.Option{scheduler.WithRejectionPolicy(scheduler.CallerRunsPolicy), scheduler.WithMaxQueueSize(1)},
		run: func(t *testing.T, e *badEnv) {
			_, err := e.s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			f, err := e.s.Submit(func(context.Context) error { panic("bad: in the caller") })
			require.NoError(t, err)
			require.True(t, f.IsDone(), "ran in the caller before Submit returned")
			var pe *scheduler.PanicError
			require.ErrorAs(t, f.Wait(e.ctx), &pe)
			e.clear()
		}})
	add(badCase{name: "DiscardOldestPolicy/queue full of canceled tasks: the oldest canceled one gives way",
		opts: []scheduler.Option{scheduler.WithRejectionPolicy(scheduler.DiscardOldestPolicy), scheduler.WithMaxQueueSize(1)},
		run: func(t *testing.T, e *badEnv) {
			old, err := e.s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			require.True(t, old.Cancel(false)) // stays queued: remove-on-cancel is off
			f, err := e.s.Schedule(nop, 2*time.Hour)
			require.NoError(t, err)
			require.Equal(t, []scheduler.ScheduledFuture{f}, e.s.Queue())
			require.False(t, f.IsDone())
			e.clear()
		}})
	add(badCase{name: "WithRemoveOnCancel(true)/Cancel twice and Remove after: true, false, false",
		opts: []scheduler.Option{scheduler.WithRemoveOnCancel(true)},
		run: func(t *testing.T, e *badEnv) {
			f, err := e.s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
			require.NoError(t, err)
			require.True(t, f.Cancel(true))
			require.False(t, f.Cancel(true))
			require.False(t, e.s.Remove(f))
			require.Empty(t, e.s.Queue())
			require.Equal(t, uint64(1), e.s.Stats().Canceled)
		}})
}
