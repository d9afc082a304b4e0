// Package schedulertest helps test code that uses the scheduler: a manual
// clock whose time moves only when the test says so ([NewManualClock]), and
// [AdvanceAndSettle], which moves it the way real time would. Its
// counterparts elsewhere are the fake clocks of benbjohnson/clock and
// jonboulle/clockwork; the JDK has none.
//
// This page is where the project's testing recipes live. Code that schedules
// work should be tested on fake time: an hour passes in a microsecond, and
// nothing depends on how busy the machine is. There are two recipes, a
// manual clock and a [testing/synctest] bubble. Both are exact, and the
// scheduler's own behavioural suite runs under each, so they agree. Choose
// by what else the code under test does (see "Which one" below). A complete
// example is the module's examples/testing/heartbeat: a service that sends
// a heartbeat every 30 s, tested both ways.
//
// # Recipe 1: a manual clock
//
// Give the scheduler a [ManualClock] with [scheduler.WithClock]. Its time
// moves only when the test calls [ManualClock.Advance] or [ManualClock.Set].
// The scheduler reacts on its own goroutines, so after moving the clock call
// [scheduler.Scheduler.AwaitIdle] before checking anything. AwaitIdle
// returns at an instant when no task is running, no queued task is due, and
// every worker is parked with its timer armed; every run that had started by
// then has ended, and what it wrote is visible to the test without further
// locking. [Example] runs this loop:
//
//	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
//	s, err := scheduler.New(1, scheduler.WithClock(clk))
//	require.NoError(t, err)
//	t.Cleanup(func() { s.ShutdownNow(); _ = s.AwaitTermination(context.Background()) })
//
//	hb := heartbeat.New(s, send, heartbeat.Config{}) // the code under test, handed s
//	require.NoError(t, hb.Start())
//	for i := 1; i <= 4; i++ {
//		clk.Advance(30 * time.Second)                // one heartbeat falls due...
//		require.NoError(t, s.AwaitIdle(t.Context())) // ...and has been sent
//		require.Equal(t, uint64(i), hb.Sent())
//	}
//
// How time moves:
//
//   - Advance does not jump straight to the target: it fires every timer
//     that falls due on the way, in due order, and before firing each one it
//     sets the clock to that timer's due time. A timer's channel receives its
//     due time, and an AfterFunc callback that reads Now sees its due time
//     ([ExampleManualClock_AfterFunc]).
//   - A worker re-reads the clock after arming its timer, so an Advance that
//     races with a worker going to sleep is never lost, and
//     Advance(d); AwaitIdle(ctx) in a loop is exact.
//   - One big jump is not the same span of real time. The scheduler wakes
//     only after Advance has returned, when the clock reads the end of the
//     jump. A fixed-rate task with period p computes its next run from its
//     previous scheduled time: after one Advance(10*p) it runs 10 times back
//     to back, all at the end of the jump (the JDK's catch-up), while ten
//     Advance(p) calls give 10 runs, each at its own instant. A fixed-delay
//     task computes its next run from the end of its last run: it runs once
//     per jump ([ExampleManualClock_Advance]).
//   - To move time the way real time would, call
//     AdvanceAndSettle(ctx, clk, s, d). It steps from timer to timer, and at
//     each one sets the clock to that timer's due time and calls s.AwaitIdle.
//     Fixed-delay tasks, tasks that schedule other tasks, and catch-up after
//     a slow run then behave exactly as on real time
//     ([ExampleAdvanceAndSettle]).
//   - Code that waits on the clock itself (clk.NewTimer, clk.AfterFunc)
//     rather than through a scheduler must have armed its timer before the
//     test moves the clock. [ManualClock.BlockUntilWaiters] waits for that
//     without polling ([ExampleManualClock_BlockUntilWaiters]).
//   - The clock never goes back: Advance with a negative duration, or Set
//     to an earlier time, does nothing. AwaitIdle with a ctx that has already
//     ended returns ctx.Err() at once. Every method of the clock is safe for
//     concurrent use.
//
// Limits:
//
//   - Only the scheduler's time is fake. A context.WithTimeout, time.After
//     or time.Sleep inside a task still runs on real time. To test those,
//     pass the clock through to the code, or use a bubble.
//   - AwaitIdle waits for running tasks to finish. A task that blocks until
//     the test moves the clock (one waiting on a timer of the manual clock,
//     say) makes AwaitIdle wait forever: release such a task from the test,
//     then call AwaitIdle.
//   - It works alongside anything else the process does: real network I/O,
//     goroutines the test did not start, other libraries' timers.
//
// # Recipe 2: a testing/synctest bubble
//
// Create the scheduler inside [testing/synctest.Test], on the default clock.
// Inside a bubble, time.Now, timers and time.Sleep run on the bubble's fake
// clock, which jumps ahead only when every goroutine in the bubble is
// durably blocked. time.Sleep(d) lets d of fake time pass; synctest.Wait
// returns once everything woken by that time is done:
//
//	func TestHeartbeat(t *testing.T) {
//		synctest.Test(t, func(t *testing.T) {
//			s, err := scheduler.New(1) // inside the bubble: on its fake time
//			require.NoError(t, err)
//			t.Cleanup(func() { // runs inside the bubble
//				s.ShutdownNow()
//				_ = s.AwaitTermination(context.Background()) // t.Context() is already canceled here
//			})
//			hb := heartbeat.New(s, send, heartbeat.Config{})
//			require.NoError(t, hb.Start())
//
//			time.Sleep(5 * time.Minute) // returns at once
//			synctest.Wait()             // what came due at 5m is done
//			require.Equal(t, uint64(10), hb.Sent()) // at 30s, 60s, ... 300s
//		})
//	}
//
// The scheduler can be tested this way because every wait in it blocks
// durably inside a bubble: the leader waits on a timer, the other workers
// on a sync.Cond, and AwaitIdle, AwaitTermination and futures on channels.
// No wait holds a mutex, nothing polls, and a parked pool arms no timer until
// something is due. Everything in the bubble runs on fake time, the code's
// own timeouts included: a send that hangs until its 10 s
// context.WithTimeout expires is tested exactly (TestSynctestSlowSenderTimesOut
// in the heartbeat example), which a manual clock cannot do. And time.Sleep
// moves time the way real time would, so fixed delay, catch-up and
// long-running tasks behave as in production without a stepping helper.
//
// Limits:
//
//   - Create the scheduler inside the bubble. One made outside it runs on
//     real time, and its workers are not in the bubble.
//   - No real I/O. A goroutine in a system call or waiting on the network is
//     not durably blocked, so the fake clock does not move past it:
//     synctest.Wait and time.Sleep then wait on real time, or panic with a
//     deadlock. The same goes for waiting on goroutines or channels created
//     outside the bubble, and for sync.Mutex contention.
//   - Shut every scheduler down before the bubble ends, or its parked
//     workers make synctest.Test fail.
//   - It needs Go 1.25 (synctest.Test).
//
// # Which one
//
// If the tasks only compute or talk to fakes, prefer the bubble: all time is
// fake, timeouts included, and it is closest to production. If they talk to
// real servers (an integration test), if goroutines outside the test take
// part, or if time must stop at points the test picks, use the manual clock.
// With a manual clock the scheduler may be created anywhere; with a bubble
// it must be created inside it, on the default clock.
//
// # No goroutine left behind
//
// A stopped scheduler leaves no goroutine behind, so a test can check for
// leaks with go.uber.org/goleak: call goleak.VerifyTestMain(m) from TestMain
// in every package whose tests start schedulers, and shut each scheduler
// down in the test that made it, with ShutdownNow (or Shutdown) followed by
// AwaitTermination. Do that in t.Cleanup with context.Background():
// t.Context() is canceled before cleanup functions run, and AwaitTermination
// on a canceled ctx returns at once, before the workers have exited.
//
// # Examples
//
// Each recipe step has a compiled, tested example on this page: [Example]
// (Advance + AwaitIdle), [ExampleNewManualClock], [ExampleManualClock_AfterFunc],
// [ExampleManualClock_Advance] (one big jump), [ExampleAdvanceAndSettle] and
// [ExampleManualClock_BlockUntilWaiters]. Their source is example_test.go.
//
// [Example]: https://pkg.go.dev/github.com/go-stpe/scheduler/schedulertest#example-package
// [ExampleNewManualClock]: https://pkg.go.dev/github.com/go-stpe/scheduler/schedulertest#example-NewManualClock
// [ExampleManualClock_AfterFunc]: https://pkg.go.dev/github.com/go-stpe/scheduler/schedulertest#example-ManualClock.AfterFunc
// [ExampleManualClock_Advance]: https://pkg.go.dev/github.com/go-stpe/scheduler/schedulertest#example-ManualClock.Advance
// [ExampleAdvanceAndSettle]: https://pkg.go.dev/github.com/go-stpe/scheduler/schedulertest#example-AdvanceAndSettle
// [ExampleManualClock_BlockUntilWaiters]: https://pkg.go.dev/github.com/go-stpe/scheduler/schedulertest#example-ManualClock.BlockUntilWaiters
package schedulertest
