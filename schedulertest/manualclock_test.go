package schedulertest

// ManualClock's timers (manualclock.go): Now, Advance and Set, channel
// timers and AfterFunc, Stop and Reset, callbacks that re-arm, reset or stop
// timers within the same Advance, and the firing order under churn.

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNowAdvanceSet(t *testing.T) {
	clk := NewManualClock(start)
	require.Equal(t, start, clk.Now())

	clk.Advance(time.Second)
	require.Equal(t, at(time.Second), clk.Now())

	clk.Advance(0)
	require.Equal(t, at(time.Second), clk.Now())

	clk.Set(at(time.Hour))
	require.Equal(t, at(time.Hour), clk.Now())
}

func TestTimeNeverGoesBackwards(t *testing.T) {
	clk := NewManualClock(start)
	clk.AfterFunc(0, func() { t.Error("callback ran on a backward move") })

	clk.Advance(-time.Second)
	require.Equal(t, start, clk.Now())
	require.Equal(t, 1, clk.Waiters(), "a negative Advance must fire nothing")

	clk.Set(at(-time.Second))
	require.Equal(t, start, clk.Now())
	require.Equal(t, 1, clk.Waiters(), "a backward Set must fire nothing")
}

func TestNewTimerNonPositiveFiresAtOnce(t *testing.T) {
	clk := NewManualClock(start)
	for _, d := range []time.Duration{0, -time.Second} {
		tm := clk.NewTimer(d)
		require.Equal(t, start, requireValue(t, tm.C()), "NewTimer(%v)", d)
		require.Equal(t, 0, clk.Waiters())
		require.False(t, tm.Stop(), "a fired and received timer is not active")
	}
}

func TestAdvanceFiresInDueOrderAtOwnDueTime(t *testing.T) {
	clk := NewManualClock(start)
	type firing struct {
		name string
		now  time.Time
	}
	var got []firing
	record := func(name string) func() {
		return func() { got = append(got, firing{name, clk.Now()}) }
	}
	// Armed out of order; b1 and b2 tie and must fire in arming order.
	clk.AfterFunc(3*time.Second, record("c"))
	clk.AfterFunc(2*time.Second, record("b1"))
	clk.AfterFunc(time.Second, record("a"))
	clk.AfterFunc(2*time.Second, record("b2"))
	clk.AfterFunc(5*time.Second, record("d")) // exactly at the target
	clk.AfterFunc(6*time.Second, record("e")) // past the target

	clk.Advance(5 * time.Second)

	require.Equal(t, []firing{
		{"a", at(time.Second)},
		{"b1", at(2 * time.Second)},
		{"b2", at(2 * time.Second)},
		{"c", at(3 * time.Second)},
		{"d", at(5 * time.Second)},
	}, got)
	require.Equal(t, at(5*time.Second), clk.Now())
	require.Equal(t, 1, clk.Waiters())
}

func TestSetFiresLikeAdvance(t *testing.T) {
	clk := NewManualClock(start)
	var seen []time.Time
	clk.AfterFunc(time.Second, func() { seen = append(seen, clk.Now()) })
	clk.AfterFunc(2*time.Second, func() { seen = append(seen, clk.Now()) })

	clk.Set(at(2 * time.Second))
	require.Equal(t, []time.Time{at(time.Second), at(2 * time.Second)}, seen)
	require.Equal(t, at(2*time.Second), clk.Now())
}

func TestChannelTimerReceivesDueTime(t *testing.T) {
	clk := NewManualClock(start)
	tm := clk.NewTimer(2 * time.Second)
	requireEmpty(t, tm.C())

	clk.Advance(time.Second)
	requireEmpty(t, tm.C())

	clk.Advance(4 * time.Second)
	require.Equal(t, at(2*time.Second), requireValue(t, tm.C()), "C gets the due time, not the end of the jump")
	require.Equal(t, 0, clk.Waiters())

	clk.Advance(time.Hour)
	requireEmpty(t, tm.C()) // a timer fires only once
}

func TestChannelAndFuncTimersInterleave(t *testing.T) {
	clk := NewManualClock(start)
	tm := clk.NewTimer(time.Second)
	var sawValue bool
	clk.AfterFunc(2*time.Second, func() {
		// The channel timer fired first, at its own due time.
		v := requireValue(t, tm.C())
		sawValue = v.Equal(at(time.Second))
	})
	clk.Advance(3 * time.Second)
	require.True(t, sawValue)
}

func TestStop(t *testing.T) {
	clk := NewManualClock(start)

	t.Run("armed", func(t *testing.T) {
		tm := clk.NewTimer(time.Second)
		require.True(t, tm.Stop())
		require.False(t, tm.Stop(), "second Stop")
		clk.Advance(time.Hour)
		requireEmpty(t, tm.C())
	})

	t.Run("fired but not received", func(t *testing.T) {
		// As with *time.Timer since Go 1.23: the undelivered value is
		// discarded and the timer counts as stopped while active.
		tm := clk.NewTimer(time.Second)
		clk.Advance(time.Second)
		require.True(t, tm.Stop())
		requireEmpty(t, tm.C())
		require.False(t, tm.Stop())
	})

	t.Run("fired and received", func(t *testing.T) {
		tm := clk.NewTimer(time.Second)
		clk.Advance(time.Second)
		requireValue(t, tm.C())
		require.False(t, tm.Stop())
	})

	require.Equal(t, 0, clk.Waiters())
}

func TestReset(t *testing.T) {
	clk := NewManualClock(start)

	t.Run("armed timer moves", func(t *testing.T) {
		now := clk.Now()
		tm := clk.NewTimer(time.Second)
		require.True(t, tm.Reset(3*time.Second))
		require.Equal(t, 1, clk.Waiters())
		clk.Advance(2 * time.Second)
		requireEmpty(t, tm.C())
		clk.Advance(time.Second)
		require.Equal(t, now.Add(3*time.Second), requireValue(t, tm.C()))
	})

	t.Run("no stale value after Reset", func(t *testing.T) {
		now := clk.Now()
		tm := clk.NewTimer(time.Second)
		clk.Advance(time.Second) // fires; nobody receives
		require.True(t, tm.Reset(5*time.Second), "an undelivered value counts as active")
		requireEmpty(t, tm.C())
		clk.Advance(5 * time.Second)
		require.Equal(t, now.Add(6*time.Second), requireValue(t, tm.C()), "only the new due time arrives")
	})

	t.Run("after receiving", func(t *testing.T) {
		tm := clk.NewTimer(time.Second)
		clk.Advance(time.Second)
		requireValue(t, tm.C())
		require.False(t, tm.Reset(time.Second))
		require.Equal(t, 1, clk.Waiters())
		require.True(t, tm.Stop())
	})

	t.Run("non-positive fires at once", func(t *testing.T) {
		tm := clk.NewTimer(time.Hour)
		require.True(t, tm.Reset(0))
		require.Equal(t, clk.Now(), requireValue(t, tm.C()))
		require.Equal(t, 0, clk.Waiters())

		clk.Advance(time.Second) // fires nothing: the timer is inactive
		requireEmpty(t, tm.C())
		require.False(t, tm.Reset(-time.Second))
		require.Equal(t, clk.Now(), requireValue(t, tm.C()))
	})

	t.Run("reset at the same due time re-queues after its peers", func(t *testing.T) {
		var order []string
		a := clk.NewTimer(time.Second)
		clk.AfterFunc(time.Second, func() {
			order = append(order, "func")
			select {
			case <-a.C():
				order = append(order, "a fired first")
			default:
			}
		})
		a.Reset(time.Second) // same due time, but now armed after the func
		clk.Advance(time.Second)
		require.Equal(t, []string{"func"}, order)
		requireValue(t, a.C())
	})
}

func TestAfterFunc(t *testing.T) {
	clk := NewManualClock(start)

	t.Run("stop before it runs", func(t *testing.T) {
		stop := clk.AfterFunc(time.Second, func() { t.Error("stopped callback ran") })
		require.True(t, stop())
		require.False(t, stop())
		clk.Advance(time.Hour)
	})

	t.Run("stop after it ran", func(t *testing.T) {
		calls := 0
		stop := clk.AfterFunc(time.Second, func() { calls++ })
		clk.Advance(time.Second)
		require.Equal(t, 1, calls)
		require.False(t, stop())
		clk.Advance(time.Hour)
		require.Equal(t, 1, calls, "a callback runs once")
	})

	t.Run("non-positive delay runs on the next Advance", func(t *testing.T) {
		now := clk.Now()
		var seen []time.Time
		clk.AfterFunc(0, func() { seen = append(seen, clk.Now()) })
		clk.AfterFunc(-time.Second, func() { seen = append(seen, clk.Now()) })
		require.Empty(t, seen, "AfterFunc must not call f itself")
		require.Equal(t, 2, clk.Waiters())
		clk.Advance(0)
		require.Equal(t, []time.Time{now, now}, seen, "due now, never in the past")
	})
}

func TestCallbackRearmsWithinSameAdvance(t *testing.T) {
	clk := NewManualClock(start)
	var runs []time.Time
	var tick func()
	tick = func() {
		runs = append(runs, clk.Now())
		clk.AfterFunc(time.Second, tick) // a callback may call into the clock
	}
	clk.AfterFunc(time.Second, tick)

	clk.Advance(3500 * time.Millisecond)

	require.Equal(t, []time.Time{at(time.Second), at(2 * time.Second), at(3 * time.Second)}, runs)
	require.Equal(t, 1, clk.Waiters())
	next, ok := clk.NextDue()
	require.True(t, ok)
	require.Equal(t, at(4*time.Second), next)
}

func TestCallbackResetsChannelTimerWithinSameAdvance(t *testing.T) {
	clk := NewManualClock(start)
	tm := clk.NewTimer(time.Hour)
	clk.AfterFunc(time.Second, func() { tm.Reset(time.Second) })

	clk.Advance(5 * time.Second)

	require.Equal(t, at(2*time.Second), requireValue(t, tm.C()))
}

func TestCallbackStopsLaterTimer(t *testing.T) {
	clk := NewManualClock(start)
	var stopLater func() bool
	clk.AfterFunc(time.Second, func() { require.True(t, stopLater()) })
	stopLater = clk.AfterFunc(2*time.Second, func() { t.Error("stopped callback ran") })

	clk.Advance(3 * time.Second)
	require.Equal(t, 0, clk.Waiters())
}

func TestHeapOrderUnderChurn(t *testing.T) {
	// Arm many timers at random due times, stop a random third of them,
	// and check the rest fire in (due, arming) order.
	clk := NewManualClock(start)
	rng := rand.New(rand.NewPCG(1, 2))
	type key struct {
		due time.Duration
		id  int
	}
	var fired, want []key
	var stops []func() bool
	for id := range 500 {
		due := time.Duration(rng.IntN(100)) * time.Millisecond
		k := key{due, id}
		stops = append(stops, clk.AfterFunc(due, func() {
			require.Equal(t, at(k.due), clk.Now())
			fired = append(fired, k)
		}))
		want = append(want, k)
	}
	for id := range want {
		if rng.IntN(3) == 0 {
			require.True(t, stops[id]())
			want[id].id = -1
		}
	}
	want = slices.DeleteFunc(want, func(k key) bool { return k.id < 0 })
	slices.SortStableFunc(want, func(a, b key) int { return int(a.due - b.due) })

	clk.Advance(time.Second)
	require.Equal(t, want, fired)
	require.Equal(t, 0, clk.Waiters())
}
