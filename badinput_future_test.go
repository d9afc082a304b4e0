package scheduler_test

// Misuse of a ScheduledFuture or Future: Cancel after the run, twice or
// from inside its own run, and Wait and Get with a ctx that has ended or
// from inside their own run.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// addBadFutureRows adds the rows for ScheduledFuture and Future: Cancel after
// the run, twice or from inside the run, and waits whose ctx has ended.
func addBadFutureRows(add func(...badCase)) {
	add(badCase{name: "Cancel/after the run: false, outcome kept", run: func(t *testing.T, e *badEnv) {
		f, err := scheduler.SubmitCallable(e.s, return42)
		require.NoError(t, err)
		_, err = f.Get(e.ctx)
		require.NoError(t, err)
		for _, interrupt := range []bool{false, true} {
			require.False(t, f.Cancel(interrupt))
		}
		require.False(t, f.IsCanceled())
		v, err := f.Get(doneCtx()) // a done future answers even with an ended ctx
		require.NoError(t, err)
		require.Equal(t, 42, v)
	}})
	add(badCase{name: "Cancel/twice: true, then false", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
		require.NoError(t, err)
		require.True(t, f.Cancel(true))
		require.False(t, f.Cancel(true))
		require.False(t, f.Cancel(false))
		require.ErrorIs(t, f.Wait(doneCtx()), scheduler.ErrCanceled)
		require.Equal(t, uint64(1), e.s.Stats().Canceled)
	}})
	add(badCase{name: "Cancel/after a failed run: false, the error kept", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.ScheduleWithFixedDelay(func(context.Context) error { return errBoom }, 0, time.Hour)
		require.NoError(t, err)
		require.ErrorIs(t, f.Wait(e.ctx), errBoom)
		require.False(t, f.Cancel(true))
		require.ErrorIs(t, f.Wait(e.ctx), errBoom)
	}})
	add(badCase{name: "Cancel/of a task handed back by ShutdownNow: true", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.Equal(t, []scheduler.ScheduledFuture{f}, e.s.ShutdownNow())
		require.False(t, f.IsDone())
		require.True(t, f.Cancel(false))
		require.ErrorIs(t, f.Wait(e.ctx), scheduler.ErrCanceled)
	}})
	add(badCase{name: "Cancel/from inside its own run: ctx canceled, future canceled", run: func(t *testing.T, e *badEnv) {
		var self atomic.Pointer[scheduler.ScheduledFuture]
		sawCtx := make(chan error, 1)
		ready := make(chan struct{})
		f, err := e.s.Schedule(func(ctx context.Context) error {
			<-ready
			(*self.Load()).Cancel(true)
			sawCtx <- ctx.Err()
			return nil
		}, 0)
		require.NoError(t, err)
		self.Store(&f)
		close(ready)
		require.ErrorIs(t, f.Wait(e.ctx), scheduler.ErrCanceled)
		require.ErrorIs(t, <-sawCtx, context.Canceled)
	}})
	add(badCase{name: "Wait and Get/ctx already canceled on a pending future: ctx.Err()", run: func(t *testing.T, e *badEnv) {
		f, err := scheduler.ScheduleCallable(e.s, return42, time.Hour)
		require.NoError(t, err)
		require.ErrorIs(t, f.Wait(doneCtx()), context.Canceled)
		_, err = f.Get(doneCtx())
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, f.Wait(shortCtx(t)), context.DeadlineExceeded)
		require.False(t, f.IsDone())
	}})
	add(badCase{name: "Wait/from inside its own run: ctx.Err(), no deadlock", run: func(t *testing.T, e *badEnv) {
		var self atomic.Pointer[scheduler.ScheduledFuture]
		ready := make(chan struct{})
		got := make(chan error, 1)
		short := shortCtx(t)
		f, err := e.s.Submit(func(context.Context) error {
			<-ready
			got <- (*self.Load()).Wait(short)
			return nil
		})
		require.NoError(t, err)
		self.Store(&f)
		close(ready)
		require.ErrorIs(t, <-got, context.DeadlineExceeded)
		require.NoError(t, f.Wait(e.ctx))
	}})
	add(badCase{name: "Done, Delay, Name, IsPeriodic/on a done and a canceled future: consistent, no panic", run: func(t *testing.T, e *badEnv) {
		done, err := e.s.Submit(nop, scheduler.WithName("d"))
		require.NoError(t, err)
		require.NoError(t, done.Wait(e.ctx))
		canceled, err := e.s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
		require.NoError(t, err)
		require.True(t, canceled.Cancel(false))
		for _, f := range []scheduler.ScheduledFuture{done, canceled} {
			require.Equal(t, f.Done(), f.Done())
			<-f.Done()
			require.True(t, f.IsDone())
		}
		d0 := canceled.Delay()
		e.settle(t, 2*time.Hour)
		require.Equal(t, d0-2*time.Hour, canceled.Delay(), "Delay keeps decreasing once done")
		require.Equal(t, "d", done.Name())
		require.False(t, done.IsPeriodic())
		require.True(t, canceled.IsPeriodic())
	}})
}
