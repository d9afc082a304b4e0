package scheduler_test

// Panics in a task, a hook, the decorator and the rejection policy, a task
// that calls runtime.Goexit, and a decorator or policy that returns nil:
// each is reported as documented and the scheduler keeps working.

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// panickingPolicy is a rejection policy that panics.
type panickingPolicy struct{}

func (panickingPolicy) Rejected(*scheduler.Scheduler, scheduler.ScheduledFuture) error {
	panic("bad: policy panics")
}

// addBadPanicRows adds the rows for panics in a task, a hook, the decorator
// and the rejection policy.
func addBadPanicRows(add func(...badCase)) {
	add(badCase{name: "task panics: *PanicError, logged at Error with its name", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Submit(func(context.Context) error { panic("bad: boom") }, scheduler.WithName("boomer"))
		require.NoError(t, err)
		var pe *scheduler.PanicError
		require.ErrorAs(t, f.Wait(e.ctx), &pe)
		require.Equal(t, "bad: boom", pe.Value)
		require.NotEmpty(t, pe.Stack)
		e.log.requireErrorRecord(t, "boomer", "bad: boom")
		require.NoError(t, e.s.AwaitIdle(e.ctx)) // the run is counted after its future completes, as in the JDK
		st := e.s.Stats()
		require.Equal(t, uint64(1), st.Panicked)
		require.Equal(t, uint64(1), st.Failed)
	}})
	add(badCase{name: "task panics with nil: still a *PanicError", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Submit(func(context.Context) error { panic(nil) })
		require.NoError(t, err)
		var pe *scheduler.PanicError
		require.ErrorAs(t, f.Wait(e.ctx), &pe)
	}})
	add(badCase{name: "periodic task panics: later runs suppressed, logged", run: func(t *testing.T, e *badEnv) {
		var ran atomic.Int32
		f, err := e.s.ScheduleAtFixedRate(func(context.Context) error {
			ran.Add(1)
			panic("bad: tick")
		}, 0, time.Minute, scheduler.WithName("ticker"))
		require.NoError(t, err)
		var pe *scheduler.PanicError
		require.ErrorAs(t, f.Wait(e.ctx), &pe)
		e.settle(t, time.Hour)
		require.Equal(t, int32(1), ran.Load())
		e.log.requireErrorRecord(t, "ticker", "bad: tick")
	}})
	add(badCase{name: "periodic task panics with ContinueOnError: keeps running", run: func(t *testing.T, e *badEnv) {
		var ran atomic.Int32
		f, err := e.s.ScheduleWithFixedDelay(func(context.Context) error {
			ran.Add(1)
			panic("bad: tock")
		}, 0, time.Minute, scheduler.ContinueOnError())
		require.NoError(t, err)
		require.NoError(t, e.s.AwaitIdle(e.ctx))
		for range 3 {
			e.settle(t, time.Minute)
		}
		require.Equal(t, int32(4), ran.Load())
		require.False(t, f.IsDone())
		require.Equal(t, uint64(4), e.s.Stats().Panicked)
	}})
	add(badCase{name: "task calls runtime.Goexit: future fails, the worker is replaced", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Submit(func(context.Context) error { runtime.Goexit(); return nil })
		require.NoError(t, err)
		err = f.Wait(e.ctx)
		require.Error(t, err)
		require.False(t, f.IsCanceled())
	}})
	{
		var after atomic.Int32
		add(badCase{name: "Hooks.BeforeExecute panics: the task does not run, its future holds the *PanicError",
			opts: []scheduler.Option{scheduler.WithHooks(scheduler.Hooks{
				BeforeExecute: func(f scheduler.ScheduledFuture) {
					if f.Name() == "victim" {
						panic("bad: before")
					}
				},
				AfterExecute: func(f scheduler.ScheduledFuture, _ error) {
					if f.Name() == "victim" {
						after.Add(1)
					}
				},
			})},
			run: func(t *testing.T, e *badEnv) {
				var ran atomic.Int32
				f, err := e.s.Submit(countRuns(&ran), scheduler.WithName("victim"))
				require.NoError(t, err)
				var pe *scheduler.PanicError
				require.ErrorAs(t, f.Wait(e.ctx), &pe)
				require.Equal(t, "bad: before", pe.Value)
				require.Zero(t, ran.Load())
				require.NoError(t, e.s.AwaitIdle(e.ctx))
				require.Zero(t, after.Load(), "AfterExecute is not called when BeforeExecute panicked")
				e.log.requireErrorRecord(t, "BeforeExecute", "bad: before")
			}})
	}
	add(badCase{name: "Hooks.AfterExecute panics: the run's outcome stays",
		opts: []scheduler.Option{scheduler.WithHooks(scheduler.Hooks{
			AfterExecute: func(scheduler.ScheduledFuture, error) { panic("bad: after") },
		})},
		run: func(t *testing.T, e *badEnv) {
			e.requireAnswer(t)
			require.NoError(t, e.s.AwaitIdle(e.ctx))
			e.log.requireErrorRecord(t, "AfterExecute", "bad: after")
		}})
	add(badCase{name: "Hooks.Terminated panics: AwaitTermination still returns nil",
		opts: []scheduler.Option{scheduler.WithHooks(scheduler.Hooks{
			Terminated: func() { panic("bad: terminated") },
		})},
		run: func(t *testing.T, e *badEnv) {
			e.s.Shutdown()
			require.NoError(t, e.s.AwaitTermination(e.ctx))
			require.True(t, e.s.IsTerminated())
			e.log.requireErrorRecord(t, "Terminated", "bad: terminated")
		}})
	{
		var calls atomic.Int32
		add(badCase{name: "WithDecorator panics: ErrRejected wrapping the *PanicError, nothing queued",
			opts: []scheduler.Option{scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
				if calls.Add(1) == 1 {
					panic("bad: decorator")
				}
				return task
			})},
			run: func(t *testing.T, e *badEnv) {
				f, err := e.s.Submit(nop)
				require.ErrorIs(t, err, scheduler.ErrRejected)
				var pe *scheduler.PanicError
				require.ErrorAs(t, err, &pe)
				require.Nil(t, f)
				e.nothingQueued(t)
				e.log.requireErrorRecord(t, "decorator", "bad: decorator")
			}})
	}
	{
		var calls atomic.Int32
		add(badCase{name: "WithDecorator returns nil: ErrInvalidArgument, nothing queued",
			opts: []scheduler.Option{scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
				if calls.Add(1) == 1 {
					return nil
				}
				return task
			})},
			run: func(t *testing.T, e *badEnv) {
				f, err := scheduler.SubmitCallable(e.s, return42)
				require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
				require.Nil(t, f)
				e.nothingQueued(t)
			}})
	}
	add(badCase{name: "RejectionPolicy panics: ErrRejected wrapping the *PanicError, future canceled",
		opts: []scheduler.Option{scheduler.WithRejectionPolicy(panickingPolicy{}), scheduler.WithMaxQueueSize(1)},
		run: func(t *testing.T, e *badEnv) {
			f, err := e.overflow(t)
			require.ErrorIs(t, err, scheduler.ErrRejected)
			var pe *scheduler.PanicError
			require.ErrorAs(t, err, &pe)
			require.Nil(t, f)
			st := e.s.Stats()
			require.Equal(t, 1, st.Queued)
			require.Equal(t, uint64(1), st.Rejected)
			require.Equal(t, uint64(1), st.Canceled)
			e.log.requireErrorRecord(t, "rejection policy", "bad: policy panics")
			e.clear()
		}})
	{
		p := &recordingPolicy{}
		add(badCase{name: "RejectionPolicy does nothing and returns nil: the future is returned done and canceled",
			opts: []scheduler.Option{scheduler.WithRejectionPolicy(p), scheduler.WithMaxQueueSize(1)},
			run: func(t *testing.T, e *badEnv) {
				f, err := e.overflow(t)
				require.NoError(t, err)
				require.NotNil(t, f)
				require.True(t, f.IsCanceled(), "no future is left pending")
				require.ErrorIs(t, f.Wait(e.ctx), scheduler.ErrCanceled)
				require.Equal(t, 1, p.got.len())
				e.clear()
			}})
	}
}
