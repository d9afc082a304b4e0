package schedulertest

// ManualClock's view of its timers (manualclock.go): Waiters and NextDue,
// and BlockUntilWaiters.

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestWaitersAndNextDue(t *testing.T) {
	clk := NewManualClock(start)
	require.Equal(t, 0, clk.Waiters())
	_, ok := clk.NextDue()
	require.False(t, ok)

	t1 := clk.NewTimer(2 * time.Second)
	stop := clk.AfterFunc(time.Second, func() {})
	t3 := clk.NewTimer(3 * time.Second)
	require.Equal(t, 3, clk.Waiters())
	next, ok := clk.NextDue()
	require.True(t, ok)
	require.Equal(t, at(time.Second), next)

	t1.Reset(5 * time.Second) // re-arming changes no count
	require.Equal(t, 3, clk.Waiters())

	require.True(t, stop())
	require.Equal(t, 2, clk.Waiters())
	next, _ = clk.NextDue()
	require.Equal(t, at(3*time.Second), next)

	clk.Advance(3 * time.Second) // fires t3
	require.Equal(t, 1, clk.Waiters())
	next, _ = clk.NextDue()
	require.Equal(t, at(5*time.Second), next)

	require.True(t, t1.Stop())
	require.Equal(t, 0, clk.Waiters())
	_, ok = clk.NextDue()
	require.False(t, ok)
	requireValue(t, t3.C())
}

func TestBlockUntilWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := NewManualClock(start)
		arm := make(chan struct{})
		armed := make(chan scheduler.Timer)
		go func() {
			<-arm
			armed <- clk.NewTimer(time.Second)
		}()
		done := make(chan error)
		go func() { done <- clk.BlockUntilWaiters(t.Context(), 2) }()

		clk.AfterFunc(time.Second, func() {})
		synctest.Wait() // both goroutines are now blocked
		select {
		case err := <-done:
			t.Fatalf("returned with one waiter: %v", err)
		default:
		}

		close(arm)
		require.NoError(t, <-done)
		require.Equal(t, 2, clk.Waiters())
		require.True(t, (<-armed).Stop())
	})
}

func TestBlockUntilWaitersAlreadyReached(t *testing.T) {
	clk := NewManualClock(start)
	require.NoError(t, clk.BlockUntilWaiters(t.Context(), 0))
	clk.NewTimer(time.Second)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.NoError(t, clk.BlockUntilWaiters(ctx, 1), "a reached count wins over a done ctx")
}

func TestBlockUntilWaitersCanceled(t *testing.T) {
	t.Run("before the call", func(t *testing.T) {
		clk := NewManualClock(start)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		require.ErrorIs(t, clk.BlockUntilWaiters(ctx, 1), context.Canceled)
	})

	t.Run("while blocked", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			clk := NewManualClock(start)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error)
			go func() { done <- clk.BlockUntilWaiters(ctx, 1) }()
			synctest.Wait()
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)
		})
	})
}
