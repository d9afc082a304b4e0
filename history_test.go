package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// RunHistory: the runs of the last minutes, per second, with their
// lateness quantiles.

func TestRunHistoryCountsRunsAndLatenessPerSecond(t *testing.T) {
	s, clk := newManual(t, 1)
	h := s.RunHistory(time.Minute)
	require.Len(t, h.Seconds, 60)
	require.Zero(t, h.Runs, "nothing is recorded before the first call")

	// Second 10: three runs started 500 µs late, one of them failing.
	for i := range 3 {
		task := nop
		if i == 1 {
			task = func(context.Context) error { return errors.New("boom") }
		}
		_, err := s.Schedule(task, 10*time.Second)
		require.NoError(t, err)
	}
	advance(t, clk, s, 10*time.Second+500*time.Microsecond)
	// Second 12: one run started at once.
	advance(t, clk, s, 2*time.Second)
	_, err := s.Schedule(nop, 0)
	require.NoError(t, err)
	idle(t, s)

	h = s.RunHistory(5 * time.Second)
	require.Len(t, h.Seconds, 5)
	last := h.Seconds[len(h.Seconds)-1]
	require.True(t, last.Start.Equal(epoch.Add(12*time.Second)), "the second in progress is last: %v", last.Start)
	require.Equal(t, 1, last.Runs)
	require.Zero(t, last.LatenessP99)
	ten := h.Seconds[len(h.Seconds)-3]
	require.True(t, ten.Start.Equal(epoch.Add(10*time.Second)))
	require.Equal(t, 3, ten.Runs)
	require.Equal(t, 1, ten.Failed)
	// 500 µs falls in the bucket [448, 512) µs: quantiles are upper bounds.
	require.Equal(t, 512*time.Microsecond, ten.LatenessP50)
	require.Equal(t, 512*time.Microsecond, ten.LatenessP99)
	require.Equal(t, 4, h.Runs)
	require.Equal(t, 1, h.Failed)
	require.Equal(t, 512*time.Microsecond, h.LatenessP50)

	// Five minutes on, the slots are reused and the old seconds are gone.
	advance(t, clk, s, 5*time.Minute)
	h = s.RunHistory(time.Hour)
	require.Len(t, h.Seconds, 300, "at most five minutes")
	require.Zero(t, h.Runs)
}

func TestRunHistoryQuantilesStayWithinAQuarter(t *testing.T) {
	clk := schedulertest.NewManualClock(epoch)
	s, err := scheduler.New(1, scheduler.WithClock(clk))
	require.NoError(t, err)
	defer stopNow(t, s)
	s.RunHistory(time.Second)
	lates := []time.Duration{time.Microsecond, 3 * time.Microsecond, 17 * time.Microsecond, 900 * time.Microsecond,
		3 * time.Millisecond, 250 * time.Millisecond, 7 * time.Second, time.Minute}
	for _, late := range lates {
		_, err := s.Schedule(nop, time.Second)
		require.NoError(t, err)
		advance(t, clk, s, time.Second+late)
		h := s.RunHistory(time.Second)
		p := h.Seconds[0].LatenessP50
		if late <= 8*time.Second {
			require.GreaterOrEqual(t, p, late, "an upper bound for %v", late)
			require.LessOrEqual(t, p, late*5/4+time.Microsecond/4, "within a quarter of %v", late)
		} else {
			require.Greater(t, p, 8*time.Second/2, "beyond the histogram: its last bucket")
		}
		advance(t, clk, s, time.Second) // the next run lands in a fresh second
	}
}

// BenchmarkPeriodicRunHistory: the cost of the run history per periodic
// run, off (before RunHistory is first called) and on. Runs are back to
// back on a manual clock, so the figure is the scheduler's own CPU per run.
func BenchmarkPeriodicRunHistory(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "history=off"
		if on {
			name = "history=on"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			clk := schedulertest.NewManualClock(epoch)
			s, err := scheduler.New(1, scheduler.WithClock(clk))
			require.NoError(b, err)
			defer stopNow(b, s)
			if on {
				s.RunHistory(time.Second)
			}
			done := make(chan struct{})
			var n int
			_, err = s.ScheduleAtFixedRate(func(context.Context) error {
				n++
				if n == b.N {
					close(done)
				}
				return nil
			}, time.Millisecond, time.Millisecond)
			require.NoError(b, err)
			b.ResetTimer()
			clk.Advance(time.Duration(b.N) * time.Millisecond)
			<-done
		})
	}
}
