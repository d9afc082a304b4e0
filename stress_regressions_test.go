package scheduler_test

// Regression tests for bugs the ledger stress test found.

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// TestStressSetCorePoolSizeNeverGrowsPastCore is a regression test for a
// bug TestStressLedger found (LargestPoolSize above every core size ever
// set): shrinking the pool lets busy workers finish their task before they
// exit, and growing it again right after added delta new workers without
// counting the ones still alive. The JDK's addWorker(null, true) never goes
// past corePoolSize.
func TestStressSetCorePoolSizeNeverGrowsPastCore(t *testing.T) {
	s, err := scheduler.New(2, scheduler.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer func() {
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
	}()
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	for range 2 { // both workers busy until release
		_, err := s.Submit(func(context.Context) error {
			started <- struct{}{}
			<-release
			return nil
		})
		require.NoError(t, err)
	}
	<-started
	<-started
	_, err = s.Schedule(func(context.Context) error { return nil }, time.Hour) // something queued
	require.NoError(t, err)

	require.NoError(t, s.SetCorePoolSize(1)) // both workers busy: neither exits yet
	require.NoError(t, s.SetCorePoolSize(2))
	st := s.Stats()
	close(release)
	require.LessOrEqual(t, st.PoolSize, 2, "pool of 2 has %d workers: %+v", st.PoolSize, st)
	require.LessOrEqual(t, st.LargestPoolSize, 2, "pool of 2 had %d workers: %+v", st.LargestPoolSize, st)
}

// TestStressCancelDuringBeforeExecutePreventsBody is a regression test for the
// ledger rule "no task runs after its Cancel returned true": a Cancel that
// landed while the BeforeExecute hook ran used to let the body run anyway,
// as the state was checked only before the hook. The JDK calls
// beforeExecute before FutureTask.run, whose state check then skips the
// body.
func TestStressCancelDuringBeforeExecutePreventsBody(t *testing.T) {
	inHook := make(chan struct{})
	release := make(chan struct{})
	s, err := scheduler.New(1,
		scheduler.WithLogger(slog.New(slog.DiscardHandler)),
		scheduler.WithHooks(scheduler.Hooks{BeforeExecute: func(f scheduler.ScheduledFuture) {
			if f.Name() == "victim" {
				close(inHook)
				<-release
			}
		}}))
	require.NoError(t, err)
	defer func() {
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
	}()
	var ran atomic.Bool
	f, err := s.Submit(func(context.Context) error {
		ran.Store(true)
		return nil
	}, scheduler.WithName("victim"))
	require.NoError(t, err)
	<-inHook
	require.True(t, f.Cancel(false), "the body has not started: Cancel succeeds")
	close(release)
	require.ErrorIs(t, f.Wait(context.Background()), scheduler.ErrCanceled)
	s.Shutdown()
	require.NoError(t, s.AwaitTermination(context.Background()))
	require.False(t, ran.Load(), "the body ran after Cancel returned true")
}
