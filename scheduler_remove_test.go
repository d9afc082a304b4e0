package scheduler_test

// Taking tasks out of the queue (scheduler.go): the remove-on-cancel
// policy, Purge and Remove.
//
// Everything timed runs on a manual clock: a test moves time with
// clk.Advance and waits with s.AwaitIdle for the work that came due.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestCanceledTaskStaysQueuedUntilDueByDefault(t *testing.T) {
	s, clk := newManual(t, 1)
	require.False(t, s.RemoveOnCancelPolicy(), "the JDK default")
	var ran atomic.Bool
	f, err := s.Schedule(func(context.Context) error { ran.Store(true); return nil }, time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	requireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
	require.Equal(t, 1, s.Stats().Queued)

	advance(t, clk, s, time.Hour-1)
	require.Equal(t, 1, s.Stats().Queued)
	advance(t, clk, s, 1)
	require.Zero(t, s.Stats().Queued, "discarded once due")
	require.Empty(t, s.Queue())
	require.False(t, ran.Load())
}

func TestRemoveOnCancelRemovesCanceledTaskAtOnce(t *testing.T) {
	for _, how := range []string{"option", "setter"} {
		for _, kind := range scheduleKinds {
			t.Run(how+"/"+kind.name, func(t *testing.T) {
				var opts []scheduler.Option
				if how == "option" {
					opts = append(opts, scheduler.WithRemoveOnCancel(true))
				}
				s, clk := newManual(t, 1, opts...)
				if how == "setter" {
					s.SetRemoveOnCancelPolicy(true)
				}
				require.True(t, s.RemoveOnCancelPolicy())
				before, err := s.Schedule(nop, time.Minute)
				require.NoError(t, err)
				var ran atomic.Bool
				f, err := kind.schedule(s, func(context.Context) error { ran.Store(true); return nil })
				require.NoError(t, err)
				after, err := s.Schedule(nop, 2*time.Hour)
				require.NoError(t, err)

				require.True(t, f.Cancel(false))
				requireFutures(t, []scheduler.ScheduledFuture{before, after}, s.Queue())
				require.Equal(t, 2, s.Stats().Queued)
				advance(t, clk, s, 90*time.Minute)
				require.False(t, ran.Load())
			})
		}
	}
}

func TestSetRemoveOnCancelPolicyDoesNotRemoveEarlierCancels(t *testing.T) {
	s, _ := newManual(t, 1)
	f, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	s.SetRemoveOnCancelPolicy(true)
	requireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue(), "JDK: the setter only stores the flag")
	s.Purge()
	require.Empty(t, s.Queue())
	s.SetRemoveOnCancelPolicy(false)
	require.False(t, s.RemoveOnCancelPolicy())
}

func TestPurgeRemovesOnlyCanceledTasks(t *testing.T) {
	s, clk := newManual(t, 1)
	var futures []scheduler.ScheduledFuture
	for i := range 6 {
		f, err := s.Schedule(nop, time.Duration(i+1)*time.Minute)
		require.NoError(t, err)
		futures = append(futures, f)
	}
	periodic, err := s.ScheduleAtFixedRate(nop, 10*time.Minute, time.Minute)
	require.NoError(t, err)
	canceledPeriodic, err := s.ScheduleWithFixedDelay(nop, 11*time.Minute, time.Minute)
	require.NoError(t, err)
	for _, i := range []int{0, 2, 3} {
		require.True(t, futures[i].Cancel(false))
	}
	require.True(t, canceledPeriodic.Cancel(true))
	require.Len(t, s.Queue(), 8)

	s.Purge()
	requireFutures(t, []scheduler.ScheduledFuture{futures[1], futures[4], futures[5], periodic}, s.Queue())
	require.Equal(t, 4, s.Stats().Queued)
	for _, f := range []scheduler.ScheduledFuture{futures[1], futures[4], futures[5], periodic} {
		require.False(t, f.IsDone())
	}
	advance(t, clk, s, 10*time.Minute)
	for _, i := range []int{1, 4, 5} {
		require.NoError(t, futures[i].Wait(testCtx(t)), "a kept task still runs")
	}
}

func TestRemoveTakesQueuedTaskOutWithoutCanceling(t *testing.T) {
	t.Run("queued", func(t *testing.T) {
		for _, kind := range scheduleKinds {
			t.Run(kind.name, func(t *testing.T) {
				s, clk := newManual(t, 1)
				var ran atomic.Bool
				f, err := kind.schedule(s, func(context.Context) error { ran.Store(true); return nil })
				require.NoError(t, err)
				other, err := s.Schedule(nop, 2*time.Hour)
				require.NoError(t, err)

				require.True(t, s.Remove(f))
				require.False(t, f.IsDone(), "Remove does not cancel")
				require.False(t, f.IsCanceled())
				requireFutures(t, []scheduler.ScheduledFuture{other}, s.Queue())
				require.False(t, s.Remove(f), "a second Remove finds nothing")

				advance(t, clk, s, 3*time.Hour)
				require.False(t, ran.Load())
				require.True(t, f.Cancel(false), "the removed task can still be canceled")
			})
		}
	})
	t.Run("running", func(t *testing.T) {
		s, _ := newManual(t, 1)
		running := newTaskGate(t)
		f := running.Start(t, s, running.Stubborn)
		require.False(t, s.Remove(f))
		running.Open()
		require.NoError(t, f.Wait(testCtx(t)))
	})
	t.Run("done", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := s.Submit(nop)
		require.NoError(t, err)
		idle(t, s)
		require.False(t, s.Remove(f))
	})
	t.Run("another scheduler's", func(t *testing.T) {
		s, _ := newManual(t, 1)
		other, _ := newManual(t, 1)
		f, err := other.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.False(t, s.Remove(f))
		requireFutures(t, []scheduler.ScheduledFuture{f}, other.Queue())
		require.False(t, f.IsDone())
	})
	t.Run("nil", func(t *testing.T) {
		s, _ := newManual(t, 1)
		require.False(t, s.Remove(nil))
	})
}
