// Package scheduler runs delayed and periodic tasks on a fixed pool of
// worker goroutines: the Go counterpart of Java's
// ScheduledThreadPoolExecutor.
//
// A [Scheduler] is related to [time.AfterFunc], but instead of a goroutine
// per firing it keeps one queue, a binary min-heap ordered by trigger time
// with a timing wheel in front of it for the tasks due more than a few
// seconds ahead ([WithTimingWheel]), and a pool of workers that take tasks
// from it as they come due. It adds
// what the JDK has: one-shot delays, fixed-rate runs that catch up when late
// ([Scheduler.ScheduleAtFixedRate]), fixed-delay runs
// ([Scheduler.ScheduleWithFixedDelay]), futures with typed results
// ([Future]), O(log n) cancel, orderly and abrupt shutdown with their
// policies, rejection policies, hooks and statistics. In Go idiom: a task
// gets a [context.Context] that Cancel(true) and ShutdownNow cancel, errors
// work with errors.Is, panics are recovered into [*PanicError] and logged
// through log/slog, and a stopped scheduler leaves no goroutine behind.
//
// Beyond the JDK: calendar schedules ([Scheduler.ScheduleWithTrigger], with
// cron specs from [github.com/go-stpe/scheduler/cron]), control over missed
// runs ([WithMissedRuns]) and jitter ([WithJitter]), start times within tens
// of microseconds of due ([WithPreciseTiming]), and a view of every run
// ([Hooks].Observe, [CurrentRun], [WithBaseContext]) that the otelscheduler
// module turns into OpenTelemetry metrics and traces. Durable and
// cluster-wide work is the cluster module's, on Redis.
//
// All time comes from a [Clock]; tests use schedulertest.NewManualClock with
// [Scheduler.AwaitIdle], or run the scheduler inside a testing/synctest
// bubble (the recipes are in the doc of
// [github.com/go-stpe/scheduler/schedulertest]). Where this package differs
// from the JDK, the doc comment says so.
//
// # Memory model
//
// As in the JDK (the "memory consistency effects" of ScheduledExecutorService
// and Future): a scheduling call happens before the task's first run; each
// run of a periodic task happens before its next run, so a periodic task
// may keep state in variables only it touches without a lock; and a run
// happens before the return of Wait or Get and the closing of Done that
// report its outcome, and before the AfterExecute and Observe hooks are
// called for it.
// AwaitIdle (no JDK counterpart) returns nil only once every run that had
// started has ended, and those runs happen before that return: a test may
// read what its tasks wrote without a lock.
//
// # Where things are
//
// One file per job, named after the JDK concept it holds; each file opens
// with a comment saying what it owns. scheduler.go has the Scheduler and the
// scheduling calls, nextrun.go the kinds of task and when each runs next,
// run.go the running of one task, task.go the task and its future,
// delayqueue.go the queue, heap.go its binary heap, wheel.go the timing
// wheel in front of the heap, leader.go the wait on the queue, and policy.go
// the rejection and shutdown policies.
package scheduler
