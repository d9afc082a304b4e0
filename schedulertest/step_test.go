package schedulertest

// AdvanceAndSettle (step.go): it stops at each due time on the way and lets
// the code under test settle there, gives up on an instant that never
// settles, returns the first error, and moves nothing for a negative d.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type recordingIdle struct {
	clk   *ManualClock
	calls []time.Time
	react func()
	err   error
}

func (r *recordingIdle) AwaitIdle(ctx context.Context) error {
	r.calls = append(r.calls, r.clk.Now())
	if r.react != nil {
		r.react()
	}
	return r.err
}

func TestAdvanceAndSettleStopsAtEachDueTime(t *testing.T) {
	clk := NewManualClock(start)
	idle := &recordingIdle{clk: clk}
	tm := clk.NewTimer(3 * time.Second)
	clk.AfterFunc(time.Second, func() {})
	clk.AfterFunc(3*time.Second, func() {}) // same instant as tm: one stop
	clk.AfterFunc(7*time.Second, func() {}) // past the target

	require.NoError(t, AdvanceAndSettle(t.Context(), clk, idle, 5*time.Second))

	// The first call settles before any step; then one per due time.
	require.Equal(t, []time.Time{start, at(time.Second), at(3 * time.Second), at(5 * time.Second)}, idle.calls)
	require.Equal(t, at(5*time.Second), clk.Now())
	require.Equal(t, at(3*time.Second), requireValue(t, tm.C()))
	require.Equal(t, 1, clk.Waiters())
}

func TestAdvanceAndSettleFixedDelay(t *testing.T) {
	// A fixed-delay task re-arms p after each run, from the time the run
	// ended. Here the "scheduler" does that in AwaitIdle, after the timer
	// fired, as a real scheduler's worker would.
	const p = time.Second
	run := func(step func(clk *ManualClock, idle *recordingIdle)) []time.Time {
		clk := NewManualClock(start)
		var runs []time.Time
		due := false
		clk.AfterFunc(p, func() { due = true })
		idle := &recordingIdle{clk: clk, react: func() {
			if due {
				due = false
				runs = append(runs, clk.Now())
				clk.AfterFunc(p, func() { due = true })
			}
		}}
		step(clk, idle)
		return runs
	}

	stepped := run(func(clk *ManualClock, idle *recordingIdle) {
		require.NoError(t, AdvanceAndSettle(t.Context(), clk, idle, 10*p))
	})
	var want []time.Time
	for i := 1; i <= 10; i++ {
		want = append(want, at(time.Duration(i)*p))
	}
	require.Equal(t, want, stepped, "stepping runs the task once per period")

	jumped := run(func(clk *ManualClock, idle *recordingIdle) {
		clk.Advance(10 * p)
		require.NoError(t, idle.AwaitIdle(t.Context()))
	})
	require.Equal(t, []time.Time{at(10 * p)}, jumped, "one big jump runs it once")
}

func TestAdvanceAndSettleRearmAtSameInstant(t *testing.T) {
	// Work that arms a zero-delay timer once is fired at the same instant.
	clk := NewManualClock(start)
	ran := 0
	idle := &recordingIdle{clk: clk}
	idle.react = func() {
		if len(idle.calls) == 2 { // the call at the first step
			clk.AfterFunc(0, func() { ran++ })
		}
	}
	clk.AfterFunc(time.Second, func() {})

	require.NoError(t, AdvanceAndSettle(t.Context(), clk, idle, 2*time.Second))
	require.Equal(t, 1, ran)
	require.Equal(t, []time.Time{start, at(time.Second), at(time.Second), at(2 * time.Second)}, idle.calls)
}

func TestAdvanceAndSettleGivesUpOnEndlessInstant(t *testing.T) {
	old := maxStepsPerInstant
	maxStepsPerInstant = 100
	t.Cleanup(func() { maxStepsPerInstant = old })

	clk := NewManualClock(start)
	idle := &recordingIdle{clk: clk}
	clk.AfterFunc(time.Second, func() {})
	idle.react = func() { // from the first step on, never lets time move
		if len(idle.calls) > 1 {
			clk.AfterFunc(0, func() {})
		}
	}

	err := AdvanceAndSettle(t.Context(), clk, idle, 2*time.Second)
	require.EqualError(t, err, "schedulertest: AdvanceAndSettle: more than 100 timers fired at one instant")
	require.Equal(t, at(time.Second), clk.Now())
}

func TestAdvanceAndSettleErrors(t *testing.T) {
	t.Run("AwaitIdle fails", func(t *testing.T) {
		clk := NewManualClock(start)
		boom := errors.New("boom")
		idle := &recordingIdle{clk: clk, err: boom}
		clk.AfterFunc(time.Second, func() {})
		require.ErrorIs(t, AdvanceAndSettle(t.Context(), clk, idle, 2*time.Second), boom)
		require.Equal(t, start, clk.Now(), "it stops at the failing first settle")
	})

	t.Run("ctx done", func(t *testing.T) {
		clk := NewManualClock(start)
		idle := &recordingIdle{clk: clk}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		clk.AfterFunc(time.Second, func() {})
		require.ErrorIs(t, AdvanceAndSettle(ctx, clk, idle, 2*time.Second), context.Canceled)
		require.Equal(t, start, clk.Now())
		require.Empty(t, idle.calls)
	})
}

func TestAdvanceAndSettleNegative(t *testing.T) {
	clk := NewManualClock(start)
	idle := &recordingIdle{clk: clk}
	clk.AfterFunc(time.Second, func() {})
	require.NoError(t, AdvanceAndSettle(t.Context(), clk, idle, -time.Second))
	require.Equal(t, start, clk.Now())
	require.Equal(t, []time.Time{start, start}, idle.calls, "settles before and after")
}
