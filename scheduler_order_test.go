package scheduler_test

// The order of runs (scheduler.go): tasks due at the same instant run in
// submission order, and a pool of one runs in (due, submission) order.
//
// Everything timed runs on a manual clock: a test moves time with
// clk.Advance and waits with s.AwaitIdle for the work that came due.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestTasksDueAtSameInstantRunInSubmissionOrder(t *testing.T) {
	const n = 40
	t.Run("same delay", func(t *testing.T) {
		s, clk := newManual(t, 1)
		var order recorder[int]
		for i := range n {
			var err error
			switch i % 3 {
			case 0:
				_, err = s.Schedule(func(context.Context) error { order.add(i); return nil }, time.Second)
			case 1:
				_, err = scheduler.ScheduleCallable(s, func(context.Context) (int, error) { order.add(i); return i, nil }, time.Second)
			case 2:
				// A periodic task's first run takes its turn too.
				_, err = s.ScheduleAtFixedRate(func(context.Context) error { order.add(i); return nil }, time.Second, time.Hour)
			}
			require.NoError(t, err)
		}
		advance(t, clk, s, time.Second)
		require.Equal(t, indices(n), order.get())
	})
	t.Run("submitted while the worker is busy", func(t *testing.T) {
		s, _ := newManual(t, 1)
		busy := newTaskGate(t)
		busy.Start(t, s, busy.Stubborn)
		var order recorder[int]
		for i := range n {
			require.NoError(t, s.Execute(func(context.Context) error { order.add(i); return nil }))
		}
		busy.Open()
		idle(t, s)
		require.Equal(t, indices(n), order.get())
	})
}

// indices returns 0, 1, ..., n-1.
func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestPoolOfOneRunsInDueThenSubmissionOrder(t *testing.T) {
	s, clk := newManual(t, 1)
	delays := []time.Duration{5, 3, 9, 3, 1, 5, 9, 1, 3, 7, 2, 7, 1}
	var order recorder[int]
	for i, d := range delays {
		_, err := s.Schedule(func(context.Context) error { order.add(i); return nil }, d*time.Second)
		require.NoError(t, err)
	}
	want := indices(len(delays))
	slices.SortStableFunc(want, func(a, b int) int { return int(delays[a] - delays[b]) })

	advance(t, clk, s, 10*time.Second)
	require.Equal(t, want, order.get())
}
