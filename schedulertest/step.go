package schedulertest

import (
	"context"
	"fmt"
	"time"
)

// maxStepsPerInstant bounds how many times AdvanceAndSettle steps at one
// instant before it gives up. It is a variable so tests can lower it.
var maxStepsPerInstant = 1_000_000

// AdvanceAndSettle moves clk forward by d the way real time would pass: it
// steps from timer to timer, and at each due time lets the code under test
// settle before moving on. It first calls idle.AwaitIdle(ctx), so that work
// submitted just before the call has armed its timers; then, repeatedly, while the earliest live timer is due
// at or before the target, it sets the clock to that due time and calls
// idle.AwaitIdle(ctx); finally it sets the clock to the target and calls
// AwaitIdle once more. It returns the first error from AwaitIdle or ctx.
//
// Because the code under test reacts to each timer while Now still reads that
// timer's due time, fixed-delay tasks, chains of tasks that schedule one
// another, and anything else that computes a new due time from Now behave
// exactly as on a real clock. A single Advance(d) instead lets them see only
// the end of the jump (see the package documentation).
//
// After AwaitIdle returns, a new timer may already be due at the current
// instant (a task that re-arms with zero delay, say), and AdvanceAndSettle
// fires it too without moving time. Code that keeps doing that would never
// let time move on, so after a million steps at one instant AdvanceAndSettle
// gives up with an error. A negative d moves nothing; AwaitIdle is still
// called.
func AdvanceAndSettle(ctx context.Context, clk *ManualClock, idle interface{ AwaitIdle(context.Context) error }, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Settle first: a task scheduled just before this call may not have
	// armed its timer yet, and stepping by NextDue would jump past it.
	if err := idle.AwaitIdle(ctx); err != nil {
		return err
	}
	target := clk.Now().Add(d)
	var instant time.Time // the due time of the previous step
	steps := 0            // how many steps were taken at instant
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		due, ok := clk.NextDue()
		if !ok || due.After(target) {
			break
		}
		if steps > 0 && due.Equal(instant) {
			if steps >= maxStepsPerInstant {
				return fmt.Errorf("schedulertest: AdvanceAndSettle: more than %d timers fired at one instant", maxStepsPerInstant)
			}
		} else {
			instant, steps = due, 0
		}
		steps++
		clk.Set(due)
		if err := idle.AwaitIdle(ctx); err != nil {
			return err
		}
	}
	clk.Set(target)
	return idle.AwaitIdle(ctx)
}
