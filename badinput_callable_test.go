package scheduler_test

// Bad input to the callable calls, ScheduleCallable, SubmitCallable,
// InvokeAll and InvokeAny: a nil scheduler, nil and empty lists, a ctx that
// has ended, and callables that fail or panic.

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// addBadCallableRows adds the rows for ScheduleCallable, SubmitCallable,
// InvokeAll and InvokeAny.
func addBadCallableRows(add func(...badCase)) {
	add(badCase{name: "ScheduleCallable/nil scheduler: ErrInvalidArgument", run: func(t *testing.T, e *badEnv) {
		f, err := scheduler.ScheduleCallable(nil, return42, 0)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Nil(t, f)
	}})
	add(badCase{name: "SubmitCallable/nil scheduler: ErrInvalidArgument", run: func(t *testing.T, e *badEnv) {
		f, err := scheduler.SubmitCallable(nil, return42)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Nil(t, f)
	}})
	add(badCase{name: "ScheduleCallable/delay MinInt64 and MaxInt64: now, and never", run: func(t *testing.T, e *badEnv) {
		now, err := scheduler.ScheduleCallable(e.s, return42, math.MinInt64)
		require.NoError(t, err)
		never, err := scheduler.ScheduleCallable(e.s, return42, math.MaxInt64)
		require.NoError(t, err)
		v, err := now.Get(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 42, v)
		e.settle(t, 1000*time.Hour)
		_, err = never.Get(doneCtx())
		require.ErrorIs(t, err, context.Canceled)
	}})

	// --- InvokeAll / InvokeAny --------------------------------------------
	add(badCase{name: "InvokeAll/nil scheduler: ErrInvalidArgument", run: func(t *testing.T, e *badEnv) {
		fs, err := scheduler.InvokeAll(e.ctx, nil, []scheduler.Callable[int]{return42})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Nil(t, fs)
	}})
	add(badCase{name: "InvokeAll/a nil element among good ones: ErrInvalidArgument, nothing scheduled", run: func(t *testing.T, e *badEnv) {
		fs, err := scheduler.InvokeAll(e.ctx, e.s, []scheduler.Callable[int]{return42, nil, return42})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Nil(t, fs)
		e.nothingQueued(t)
	}})
	for _, c := range []struct {
		name string
		fns  []scheduler.Callable[int]
	}{{"nil", nil}, {"empty", []scheduler.Callable[int]{}}} {
		fns := c.fns
		add(badCase{name: "InvokeAll/" + c.name + " list: empty result, nil", run: func(t *testing.T, e *badEnv) {
			fs, err := scheduler.InvokeAll(e.ctx, e.s, fns)
			require.NoError(t, err)
			require.Empty(t, fs)
		}})
	}
	add(badCase{name: "InvokeAll/ctx already canceled: ctx.Err(), every future done", run: func(t *testing.T, e *badEnv) {
		started := make(chan struct{})
		blocker, err := e.s.Submit(blockUntilCanceled(started)) // the callables stay queued
		require.NoError(t, err)
		<-started
		fs, err := scheduler.InvokeAll(doneCtx(), e.s, []scheduler.Callable[int]{return42, return42})
		require.ErrorIs(t, err, context.Canceled)
		require.Len(t, fs, 2)
		for _, f := range fs {
			require.True(t, f.IsDone())
			require.True(t, f.IsCanceled())
		}
		require.True(t, blocker.Cancel(true))
	}})
	add(badCase{name: "InvokeAll/callables that fail and panic: each future holds its outcome", run: func(t *testing.T, e *badEnv) {
		fs, err := scheduler.InvokeAll(e.ctx, e.s, []scheduler.Callable[int]{
			return42,
			func(context.Context) (int, error) { return 0, errBoom },
			func(context.Context) (int, error) { panic("bad: callable panics") },
		})
		require.NoError(t, err)
		v, err := fs[0].Get(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 42, v)
		_, err = fs[1].Get(e.ctx)
		require.ErrorIs(t, err, errBoom)
		_, err = fs[2].Get(e.ctx)
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "bad: callable panics", pe.Value)
	}})
	add(badCase{name: "InvokeAny/nil scheduler: ErrInvalidArgument", run: func(t *testing.T, e *badEnv) {
		_, err := scheduler.InvokeAny(e.ctx, nil, []scheduler.Callable[int]{return42})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	}})
	for _, c := range []struct {
		name string
		fns  []scheduler.Callable[int]
	}{
		{"nil list", nil},
		{"empty list", []scheduler.Callable[int]{}},
		{"[nil]", []scheduler.Callable[int]{nil}},
		{"[ok, nil]", []scheduler.Callable[int]{return42, nil}},
	} {
		fns := c.fns
		add(badCase{name: "InvokeAny/" + c.name + ": ErrInvalidArgument, nothing scheduled", run: func(t *testing.T, e *badEnv) {
			v, err := scheduler.InvokeAny(e.ctx, e.s, fns)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Zero(t, v)
			e.nothingQueued(t)
		}})
	}
	add(badCase{name: "InvokeAny/ctx already canceled: ctx.Err(), the tasks canceled", run: func(t *testing.T, e *badEnv) {
		started := make(chan struct{})
		blocker, err := e.s.Submit(blockUntilCanceled(started))
		require.NoError(t, err)
		<-started
		v, err := scheduler.InvokeAny(doneCtx(), e.s, []scheduler.Callable[int]{return42})
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, v)
		require.True(t, blocker.Cancel(true))
		require.NoError(t, e.s.AwaitIdle(e.ctx))
		require.Equal(t, uint64(2), e.s.Stats().Canceled, "the blocker and InvokeAny's task")
	}})
	add(badCase{name: "InvokeAny/all fail or panic: the error wraps one of theirs", run: func(t *testing.T, e *badEnv) {
		_, err := scheduler.InvokeAny(e.ctx, e.s, []scheduler.Callable[int]{
			func(context.Context) (int, error) { return 0, errBoom },
			func(context.Context) (int, error) { panic(errBoom) },
		})
		require.ErrorIs(t, err, errBoom)
	}})
}
