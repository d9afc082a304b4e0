package scheduler_test

// Misuse of Shutdown, ShutdownNow, AwaitTermination and AwaitIdle: twice,
// before any shutdown, with a ctx that has ended, and from inside a task.

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// addBadShutdownRows adds the rows for Shutdown, ShutdownNow,
// AwaitTermination and AwaitIdle.
func addBadShutdownRows(add func(...badCase)) {
	add(badCase{name: "Shutdown/twice, then ShutdownNow twice: harmless; the second ShutdownNow returns nothing", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		e.s.Shutdown()
		e.s.Shutdown()
		require.True(t, e.s.IsShutdown())
		require.Equal(t, []scheduler.ScheduledFuture{f}, e.s.ShutdownNow())
		require.Empty(t, e.s.ShutdownNow())
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		e.s.Shutdown()
		require.Empty(t, e.s.ShutdownNow())
		require.True(t, e.s.IsTerminated())
	}})
	add(badCase{name: "ShutdownNow/on a scheduler never used: empty, terminated at once", run: func(t *testing.T, e *badEnv) {
		require.Empty(t, e.s.ShutdownNow())
		require.NoError(t, e.s.AwaitTermination(doneCtx()))
		require.True(t, e.s.IsTerminated())
	}})
	add(badCase{name: "AwaitTermination/before any shutdown: ctx.Err()", run: func(t *testing.T, e *badEnv) {
		require.ErrorIs(t, e.s.AwaitTermination(doneCtx()), context.Canceled)
		require.ErrorIs(t, e.s.AwaitTermination(shortCtx(t)), context.DeadlineExceeded)
		require.False(t, e.s.IsShutdown())
	}})
	add(badCase{name: "AwaitTermination/after termination with an ended ctx: nil", run: func(t *testing.T, e *badEnv) {
		e.s.Shutdown()
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		require.NoError(t, e.s.AwaitTermination(doneCtx()))
	}})
	add(badCase{name: "AwaitTermination/a task that blocks until interrupted: ctx.Err() after Shutdown, nil after ShutdownNow", run: func(t *testing.T, e *badEnv) {
		started := make(chan struct{})
		f, err := e.s.Submit(blockUntilCanceled(started))
		require.NoError(t, err)
		<-started
		e.s.Shutdown()
		require.ErrorIs(t, e.s.AwaitTermination(shortCtx(t)), context.DeadlineExceeded)
		require.True(t, e.s.IsTerminating())
		require.Empty(t, e.s.ShutdownNow()) // cancels the task's ctx: it returns
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		require.NoError(t, f.Wait(e.ctx), "a one-shot that returns nil after its ctx was canceled completes normally")
	}})
	add(badCase{name: "AwaitTermination/from inside a task: ctx.Err(), no deadlock", run: func(t *testing.T, e *badEnv) {
		short := shortCtx(t)
		got := e.fromInside(t, func(context.Context) error {
			e.s.Shutdown()
			return e.s.AwaitTermination(short)
		})
		require.ErrorIs(t, got, context.DeadlineExceeded)
		require.NoError(t, e.s.AwaitTermination(e.ctx))
	}})
	add(badCase{name: "ShutdownNow/from inside a task: its own ctx canceled", run: func(t *testing.T, e *badEnv) {
		got := e.fromInside(t, func(ctx context.Context) error {
			e.s.ShutdownNow()
			return ctx.Err()
		})
		require.ErrorIs(t, got, context.Canceled)
		require.NoError(t, e.s.AwaitTermination(e.ctx))
	}})
	add(badCase{name: "AwaitIdle/ctx already canceled: ctx.Err() at once, even when idle", run: func(t *testing.T, e *badEnv) {
		require.ErrorIs(t, e.s.AwaitIdle(doneCtx()), context.Canceled)
		require.NoError(t, e.s.AwaitIdle(e.ctx))
	}})
	add(badCase{name: "AwaitIdle/from inside a task: ctx.Err(), no deadlock", run: func(t *testing.T, e *badEnv) {
		short := shortCtx(t)
		got := e.fromInside(t, func(context.Context) error { return e.s.AwaitIdle(short) })
		require.ErrorIs(t, got, context.DeadlineExceeded)
	}})
	add(badCase{name: "AwaitIdle/after termination: nil", run: func(t *testing.T, e *badEnv) {
		e.s.ShutdownNow()
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		require.NoError(t, e.s.AwaitIdle(e.ctx))
	}})
}
