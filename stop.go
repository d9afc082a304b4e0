package scheduler

import (
	"context"
	"fmt"
)

// Stop: the context-bounded stop a Go service calls on its way out, in the
// style of net/http's Server.Shutdown. Shutdown and ShutdownNow, the JDK's
// two steps, are in shutdown.go.

// Stop stops the scheduler and waits for it, for as long as ctx allows, as
// net/http's Server.Shutdown does for a server:
//
//  1. New submissions are rejected, as after [Scheduler.Shutdown].
//  2. Every queued task that has not started is removed and canceled, due
//     or not: one-shot tasks, and periodic tasks between runs. Their
//     futures are done and canceled, so nothing waits on them for ever.
//  3. Runs in progress are left to finish. A periodic task ends with the
//     run in progress: it is not queued again.
//  4. Stop returns once the scheduler has terminated (every run has ended
//     and the Terminated hook has run), or when ctx ends. If ctx ends
//     first, the ctx of every run still in progress is canceled, as
//     [Scheduler.ShutdownNow] does, and Stop returns without waiting for
//     those runs to return.
//
// It returns nil when the scheduler terminated and no one-shot task was
// dropped. Otherwise it returns a *[StopError] that says what was lost: the
// one-shot tasks removed before they ran, and ctx.Err() if the runs in
// progress had not ended in time (errors.Is(err, context.DeadlineExceeded)
// sees it). Periodic tasks are not counted as dropped: ending at the stop is
// how a periodic task ends, under the JDK's default shutdown policy too.
//
// Stop ignores the shutdown policies (WithExecuteExistingDelayedTasksAfterShutdown
// and WithContinueExistingPeriodicTasksAfterShutdown): they say what
// Shutdown keeps running, and Stop keeps nothing that has not started. To
// let queued delayed tasks run first, the JDK's way, call Shutdown and then
// AwaitTermination. Calling Stop again, or after Shutdown or ShutdownNow, is
// safe: it drops what is still queued and waits again.
func (s *Scheduler) Stop(ctx context.Context) error {
	dropped := s.stopTaking()
	err := s.AwaitTermination(ctx)
	if err != nil {
		s.ShutdownNow() // the queue is empty: this only interrupts the runs in progress
	}
	if err == nil && len(dropped) == 0 {
		return nil
	}
	return &StopError{Dropped: dropped, Err: err}
}

// stopTaking shuts the scheduler down, removes and cancels every queued
// task, and returns the one-shot tasks among them that this call canceled,
// in due order.
func (s *Scheduler) stopTaking() []ScheduledFuture {
	s.q.mu.Lock()
	if s.state < stateShutdown {
		s.setStateLocked(stateShutdown)
	}
	ts := s.q.drainLocked()
	var dropped []ScheduledFuture
	for _, t := range ts {
		if t.cancelState() && !t.IsPeriodic() {
			dropped = append(dropped, t.face())
		}
	}
	s.q.wakeAllLocked()
	s.unlockAndTryTerminate()
	return dropped
}

// StopError is what [Scheduler.Stop] returns when it did not stop cleanly:
// one-shot tasks were dropped before they ran, or ctx ended while runs were
// still in progress, or both.
type StopError struct {
	// Dropped are the one-shot tasks that were queued when Stop was called
	// and never ran, in due order; each is done and canceled.
	Dropped []ScheduledFuture
	// Err is ctx.Err() if ctx ended before every run in progress had
	// returned (their ctx was then canceled), and nil otherwise.
	Err error
}

// Error says what was dropped and whether runs were still in progress.
func (e *StopError) Error() string {
	dropped := fmt.Sprintf("%d one-shot tasks dropped before they ran", len(e.Dropped))
	if len(e.Dropped) == 1 {
		dropped = "1 one-shot task dropped before it ran"
	}
	switch {
	case e.Err != nil && len(e.Dropped) > 0:
		return fmt.Sprintf("scheduler: stop: %s, and runs still in progress when the context ended: %v", dropped, e.Err)
	case e.Err != nil:
		return fmt.Sprintf("scheduler: stop: runs still in progress when the context ended: %v", e.Err)
	}
	return "scheduler: stop: " + dropped
}

// Unwrap returns Err, so errors.Is(err, context.DeadlineExceeded) finds it.
func (e *StopError) Unwrap() error { return e.Err }
