package schedulertest

// ManualClock used from many goroutines at once (manualclock.go), under
// -race.

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
