package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

func TestJitterKeepsThePhaseOfAFixedRateTask(t *testing.T) {
	const period, max = 10 * time.Second, 3 * time.Second
	var o observed
	s, clk := newManual(t, 1, o.hooks())
	_, err := s.ScheduleAtFixedRate(nop, period, period, scheduler.WithJitter(max))
	require.NoError(t, err)
	// Step timer to timer, so that every run starts exactly when it may.
	require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), clk, s, 100*period+max))
	runs := o.get()
	require.Len(t, runs, 100)
	distinct := map[time.Duration]bool{}
	for k, r := range runs {
		require.Equal(t, time.Duration(k+1)*period, r.Due.Sub(epoch), "run %d is due on the grid", k)
		require.GreaterOrEqual(t, r.Jitter, time.Duration(0))
		require.Less(t, r.Jitter, max)
		require.Equal(t, r.Due.Add(r.Jitter), r.Started, "run %d starts at due + jitter", k)
		distinct[r.Jitter] = true
	}
	require.Greater(t, len(distinct), 50, "offsets are random")
}

func TestJitterAppliesToOneShotAndFixedDelayTasks(t *testing.T) {
	const max = time.Second
	var o observed
	s, clk := newManual(t, 1, o.hooks())
	var delays []time.Duration
	for range 20 {
		f, err := s.Schedule(nop, 10*time.Second, scheduler.WithJitter(max))
		require.NoError(t, err)
		delays = append(delays, f.Delay())
	}
	_, err := s.ScheduleWithFixedDelay(nop, 10*time.Second, 5*time.Second, scheduler.WithJitter(max))
	require.NoError(t, err)
	for _, d := range delays {
		require.GreaterOrEqual(t, d, 10*time.Second, "Delay includes the offset")
		require.Less(t, d, 10*time.Second+max)
	}
	require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), clk, s, 30*time.Second))
	runs := o.get()
	require.GreaterOrEqual(t, len(runs), 22)
	for _, r := range runs {
		require.Equal(t, r.Due.Add(r.Jitter), r.Started)
		require.Less(t, r.Jitter, max)
	}
}

func TestJitterValues(t *testing.T) {
	s, _ := newManual(t, 1)
	_, err := s.Schedule(nop, time.Second, scheduler.WithJitter(-time.Nanosecond))
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	_, err = s.ScheduleWithTrigger(nop, everyTen, scheduler.WithJitter(-time.Second))
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	f, err := s.Schedule(nop, time.Second, scheduler.WithJitter(0))
	require.NoError(t, err)
	require.Equal(t, time.Second, f.Delay(), "0 means none")
	_, err = s.Schedule(nop, time.Duration(1<<63-1), scheduler.WithJitter(time.Hour))
	require.NoError(t, err, "a huge delay plus jitter saturates, never overflows")
}

func TestTriggerJitterKeepsTheTriggersTimes(t *testing.T) {
	var o observed
	s, clk := newManual(t, 1, o.hooks())
	_, err := s.ScheduleWithTrigger(nop, everyTen, scheduler.WithJitter(2*time.Second))
	require.NoError(t, err)
	require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), clk, s, 52*time.Second))
	runs := o.get()
	require.Len(t, runs, 5)
	for k, r := range runs {
		require.Equal(t, time.Duration(k+1)*10*time.Second, r.Due.Sub(epoch))
		require.Equal(t, r.Due.Add(r.Jitter), r.Started)
	}
}

// ctxKey is a context key of the tests.
type ctxKey string

func TestBaseContextValuesReachEveryRunButNotItsCancel(t *testing.T) {
	base, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey("trace"), "abc123"))
	s, clk := newManual(t, 1, scheduler.WithBaseContext(base))
	var got recorder[any]
	var errs recorder[error]
	_, err := s.ScheduleAtFixedRate(func(ctx context.Context) error {
		got.add(ctx.Value(ctxKey("trace")))
		derived, stop := context.WithCancel(ctx)
		defer stop()
		got.add(derived.Value(ctxKey("trace")))
		errs.add(ctx.Err())
		return nil
	}, time.Second, time.Second)
	require.NoError(t, err)
	advance(t, clk, s, time.Second)
	cancel()
	advance(t, clk, s, time.Second)
	require.Equal(t, []any{"abc123", "abc123", "abc123", "abc123"}, got.get())
	require.Equal(t, []error{nil, nil}, errs.get(), "canceling the base context cancels no run")
}
