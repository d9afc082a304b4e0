package schedulertest

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/go-stpe/scheduler"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start is an arbitrary fixed instant; tests express times as offsets from it.
var start = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// at returns start+d, for readable expectations.
func at(d time.Duration) time.Time { return start.Add(d) }

// requireEmpty fails if a value can be received from c right now.
func requireEmpty(t *testing.T, c <-chan time.Time) {
	t.Helper()
	select {
	case v := <-c:
		t.Fatalf("unexpected value on C: %v", v)
	default:
	}
}

// requireValue receives the value that must already be in c.
func requireValue(t *testing.T, c <-chan time.Time) time.Time {
	t.Helper()
	select {
	case v := <-c:
		return v
	default:
		t.Fatal("no value on C")
		return time.Time{}
	}
}

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

func TestConcurrentUse(t *testing.T) {
	// Many goroutines arm, reset, stop and fire timers while others
	// advance the clock. Run under -race; the checks (assert, not require,
	// off the test goroutine) are that nothing
	// deadlocks, Now never goes backwards, and every callback either runs
	// once or is stopped.
	clk := NewManualClock(start)
	var created, ran, stopped atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			last := clk.Now()
			for range 200 {
				d := time.Duration(rng.IntN(50)) * time.Millisecond
				switch rng.IntN(5) {
				case 0:
					clk.Advance(d)
				case 1:
					tm := clk.NewTimer(d)
					tm.Reset(d / 2)
					if rng.IntN(2) == 0 {
						tm.Stop()
					}
				case 2:
					created.Add(1)
					stop := clk.AfterFunc(d, func() { ran.Add(1) })
					if rng.IntN(2) == 0 && stop() {
						stopped.Add(1)
					}
				case 3:
					clk.Waiters()
					clk.NextDue()
				case 4:
					// Wait for a timer's value while other goroutines
					// move time; Advance ourselves if nobody does.
					tm := clk.NewTimer(d)
					for {
						select {
						case v := <-tm.C():
							assert.False(t, v.Before(last), "timer value before arming time")
						default:
							clk.Advance(time.Millisecond)
							continue
						}
						break
					}
				}
				now := clk.Now()
				assert.False(t, now.Before(last), "Now went backwards")
				last = now
			}
		})
	}
	wg.Wait()

	clk.Advance(time.Hour) // fire whatever is left
	require.Equal(t, 0, clk.Waiters())
	require.Equal(t, created.Load(), ran.Load()+stopped.Load())
}

// recordingIdle is a fake scheduler for AdvanceAndSettle: AwaitIdle records
// the clock's time at each call and then runs react, standing in for the work
// a scheduler does after its timers fire.
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
