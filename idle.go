package scheduler

import "context"

// AwaitIdle: how a test that drives a manual clock waits for the work it
// made due. There is no JDK counterpart.

// AwaitIdle blocks until, at one instant, no task is running, no queued task
// is due by the scheduler's clock, and every worker is parked (with its
// timer armed if it waits for the head) and none has yet to exit after a
// SetCorePoolSize or a shutdown; then it returns nil. It returns ctx.Err() if ctx ends first, at once if ctx has
// already ended. There is no JDK counterpart.
//
// It is how a test that drives a manual clock waits for the work it made
// due: clk.Advance(d); s.AwaitIdle(ctx). An Advance racing with a worker
// that arms its timer is never missed: the worker arms a timer that has
// ResetAt for the head's instant itself, re-reads any other fake clock once
// after arming, and AwaitIdle wakes a leader whose head is due by the clock
// while its timer has not fired.
// One Advance(10*period) gives a fixed-rate task its 10 runs back to back
// (the JDK's catch-up); ten Advance(period) calls give 10 runs, each at its
// own instant. A fixed-delay task runs once per jump, as it would after a
// real jump in time: to move time as real time would, step from timer to
// timer (schedulertest.AdvanceAndSettle). On the system clock AwaitIdle
// returns when nothing is due now.
func (s *Scheduler) AwaitIdle(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.q.mu.Lock()
		if s.idleLocked() {
			s.q.mu.Unlock()
			return nil
		}
		s.q.wakeLateLeaderLocked()
		ch := s.q.idleChanLocked()
		s.q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// idleLocked is AwaitIdle's condition: no run in progress, every worker
// parked in take, none that must exit (it has been woken to do so and is
// not idle yet; so after AwaitIdle, Stats().PoolSize is settled too), not
// stateTidying (the Terminated hook is running), and the waits settled for
// the head (delayQueue.settledLocked: a head not yet due has a leader whose
// timer is armed, so a later Advance fires it).
func (s *Scheduler) idleLocked() bool {
	if s.active > 0 || s.q.parked < len(s.workers) || s.state == stateTidying {
		return false
	}
	if len(s.workers) > 0 && s.workerMustExitLocked() {
		return false
	}
	return s.q.settledLocked()
}
