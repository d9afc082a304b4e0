package scheduler_test

// Bad input to Remove, Purge, Queue and Stats: nil and foreign futures,
// another scheduler's future, a second Remove, and calls after ShutdownNow.

import (
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// foreignFuture is a ScheduledFuture this package did not make.
type foreignFuture struct{ scheduler.ScheduledFuture }

// addBadQueueRows adds the rows for Remove, Purge, Queue and Stats.
func addBadQueueRows(add func(...badCase)) {
	add(badCase{name: "Remove/nil: false", run: func(t *testing.T, e *badEnv) {
		require.False(t, e.s.Remove(nil))
	}})
	add(badCase{name: "Remove/typed nil *Future: false", run: func(t *testing.T, e *badEnv) {
		var f *scheduler.Future[int]
		require.False(t, e.s.Remove(f))
	}})
	add(badCase{name: "Remove/a foreign ScheduledFuture: false", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.False(t, e.s.Remove(foreignFuture{f}))
		require.Equal(t, 1, e.s.Stats().Queued)
	}})
	add(badCase{name: "Remove/another scheduler's future: false, left queued there", run: func(t *testing.T, e *badEnv) {
		other, err := scheduler.New(1, scheduler.WithClock(e.clk))
		require.NoError(t, err)
		defer func() {
			other.ShutdownNow()
			require.NoError(t, other.AwaitTermination(e.ctx))
		}()
		f, err := other.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.False(t, e.s.Remove(f))
		require.Equal(t, []scheduler.ScheduledFuture{f}, other.Queue())
	}})
	add(badCase{name: "Remove/twice, and of a done future: true, then false", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.True(t, e.s.Remove(f))
		require.False(t, e.s.Remove(f))
		require.False(t, f.IsDone(), "Remove does not cancel")
		done, err := e.s.Submit(nop)
		require.NoError(t, err)
		require.NoError(t, done.Wait(e.ctx))
		require.False(t, e.s.Remove(done))
	}})
	add(badCase{name: "Remove and Purge/after ShutdownNow: nothing left to remove", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.True(t, f.Cancel(false))
		e.s.ShutdownNow()
		require.False(t, e.s.Remove(f))
		e.s.Purge()
		require.Empty(t, e.s.Queue())
	}})
	add(badCase{name: "Purge, Queue, Stats, String/on a fresh scheduler: empty, zero", run: func(t *testing.T, e *badEnv) {
		e.s.Purge()
		require.Empty(t, e.s.Queue())
		require.Equal(t, scheduler.Stats{CorePoolSize: 1}, e.s.Stats())
		require.NotEmpty(t, e.s.String())
	}})
}
