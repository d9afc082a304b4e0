package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
	"github.com/stretchr/testify/require"
)

func TestSmokeSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := scheduler.New(2)
		require.NoError(t, err)
		start := time.Now()
		var at []time.Duration
		f, err := s.ScheduleAtFixedRate(func(ctx context.Context) error {
			at = append(at, time.Since(start))
			return nil
		}, time.Hour, time.Hour)
		require.NoError(t, err)
		time.Sleep(24*time.Hour + time.Minute)
		synctest.Wait()
		require.Len(t, at, 24)
		require.True(t, f.Cancel(false))
		s.Shutdown()
		require.NoError(t, s.AwaitTermination(t.Context()))
	})
}

func TestSmokeManual(t *testing.T) {
	clk := schedulertest.NewManualClock(time.Unix(0, 0))
	s, err := scheduler.New(2, scheduler.WithClock(clk))
	require.NoError(t, err)
	n := 0
	_, err = s.ScheduleAtFixedRate(func(ctx context.Context) error { n++; return nil }, time.Hour, time.Hour)
	require.NoError(t, err)
	ctx := t.Context()
	for i := 0; i < 24; i++ {
		clk.Advance(time.Hour)
		require.NoError(t, s.AwaitIdle(ctx))
		require.Equal(t, i+1, n)
	}
	clk.Advance(10 * time.Hour)
	require.NoError(t, s.AwaitIdle(ctx))
	require.Equal(t, 34, n)
	s.ShutdownNow()
	require.NoError(t, s.AwaitTermination(ctx))
}
