// Package schedulertest provides test helpers for the scheduler: a manual
// clock whose time moves only when the test says so, and a helper that moves
// it the way real time would.
//
// # The manual clock
//
// NewManualClock returns a scheduler.Clock that never moves by itself. A
// test passes it to the scheduler, then moves time with Advance or Set. This
// makes timing tests fast (an hour passes in a microsecond) and
// deterministic (nothing depends on how busy the machine is).
//
// Advance does not jump straight to the target: it fires every timer that
// falls due on the way, in due order, and before firing each one it sets the
// clock to that timer's own due time. A timer's channel therefore receives
// its due time, and an AfterFunc callback that reads Now sees its due time,
// just as they would on a real clock.
//
// # Testing a scheduler
//
// The scheduler does its work on its own goroutines, so after moving time a
// test waits for the scheduler to finish reacting before it checks anything:
//
//	clk := schedulertest.NewManualClock(start)
//	// ... build the scheduler s on clk and schedule tasks ...
//	clk.Advance(d)
//	if err := s.AwaitIdle(ctx); err != nil {
//		t.Fatal(err)
//	}
//	// now check what the tasks did
//
// One big Advance is not the same as the same span of real time. The
// scheduler only wakes once Advance has returned, and by then Now reads the
// end of the jump. A fixed-rate task with period p computes its next run from
// its previous scheduled time, so after Advance(10*p) it finds itself ten
// periods behind and runs 10 times back to back to catch up (as the JDK's
// ScheduledThreadPoolExecutor does). A fixed-delay task computes its next run
// from when the last run ended, which is the end of the jump, so it runs once.
// To move time the way real time would, step from timer to timer and let the
// scheduler settle at each one: AdvanceAndSettle does exactly that.
package schedulertest
