package scheduler

import "context"

// Shutdown and termination: the run state's way from running to terminated
// (JDK ThreadPoolExecutor shutdown, shutdownNow, tryTerminate,
// awaitTermination, and ScheduledThreadPoolExecutor.onShutdown).

// Shutdown starts an orderly shutdown (JDK shutdown): new submissions are
// rejected; queued one-shot tasks still run when due (unless the
// execute-existing-delayed policy is false, which cancels those not yet
// due); queued periodic tasks are canceled (unless the
// continue-existing-periodic policy is true); canceled tasks still queued
// are removed. Running tasks are not interrupted.
//
// Shutdown does not wait: use [Scheduler.AwaitTermination]. For the abrupt
// form, use [Scheduler.ShutdownNow]. A Scheduler cannot be restarted;
// calling Shutdown again does nothing more.
func (s *Scheduler) Shutdown() {
	s.q.mu.Lock()
	if s.state < stateShutdown {
		s.setStateLocked(stateShutdown)
	}
	s.onShutdownLocked()
	s.q.wakeAllLocked()
	s.unlockAndTryTerminate()
}

// onShutdownLocked removes and cancels the queued tasks that the shutdown
// policies no longer allow to run, and the already-canceled ones (JDK
// onShutdown).
func (s *Scheduler) onShutdownLocked() {
	if s.state != stateShutdown {
		return
	}
	keepDelayed := s.executeDelayed.Load()
	keepPeriodic := s.continuePeriodic.Load()
	now := s.q.now()
	s.q.filterLocked(func(t *futureTask) bool {
		var drop bool
		if t.kind().periodic() {
			drop = !keepPeriodic
		} else {
			drop = !keepDelayed && t.when-now > 0
		}
		if drop {
			t.cancelState()
		}
		return drop || t.loadState() == stateCanceled
	})
}

// ShutdownNow stops the scheduler at once (JDK shutdownNow): new
// submissions are rejected, every queued task is removed and returned in due
// order, and the ctx of every running task is canceled. The returned tasks
// never started and are not canceled (the caller may run its own cleanup or
// cancel them); like the JDK, the list includes canceled tasks still queued.
// A running one-shot task that returns nil after its ctx was canceled
// completes normally; a running periodic task ends canceled.
//
// ShutdownNow does not wait for running tasks to return: use
// [Scheduler.AwaitTermination]. For the graceful form, use Shutdown.
func (s *Scheduler) ShutdownNow() []ScheduledFuture {
	s.q.mu.Lock()
	if s.state < stateStop {
		s.setStateLocked(stateStop)
	}
	for w := range s.workers {
		if w.run.t != nil {
			w.run.t.interrupt()
		}
	}
	ts := s.q.drainLocked()
	s.q.wakeAllLocked()
	s.unlockAndTryTerminate()
	out := make([]ScheduledFuture, len(ts))
	for i, t := range ts {
		out[i] = t.face()
	}
	return out
}

// unlockAndTryTerminate unlocks q.mu and, if the scheduler may now
// terminate, terminates it: the Terminated hook runs outside the lock.
func (s *Scheduler) unlockAndTryTerminate() {
	term := s.tryTerminateLocked()
	s.q.mu.Unlock()
	if term {
		s.finishTermination()
	}
}

// tryTerminateLocked moves the scheduler to stateTidying if it is shut down
// with no queued task and no worker, and reports whether it did; the caller
// must then call finishTermination once unlocked. If only workers remain, it
// wakes one so that it re-checks and exits, and each exit passes the wave
// on (JDK tryTerminate).
func (s *Scheduler) tryTerminateLocked() bool {
	switch {
	case s.state == stateRunning, s.state >= stateTidying:
		return false
	case s.state == stateShutdown && s.q.lenLocked() > 0:
		return false
	case len(s.workers) > 0:
		s.q.wakeOneLocked()
		return false
	}
	s.setStateLocked(stateTidying)
	return true
}

// finishTermination runs the Terminated hook, then publishes termination.
func (s *Scheduler) finishTermination() {
	for i := range s.hooks {
		if h := s.hooks[i].Terminated; h != nil {
			s.guard("Terminated hook", nil, h)
		}
	}
	s.q.mu.Lock()
	s.setStateLocked(stateTerminated)
	close(s.terminated)
	s.q.notifyIdleLocked()
	s.q.mu.Unlock()
}

// AwaitTermination blocks until the scheduler has terminated after a
// shutdown, returning nil: every worker has exited, the queue is empty, and
// the Terminated hook has run. It returns ctx.Err() if ctx ends first (JDK
// awaitTermination).
func (s *Scheduler) AwaitTermination(ctx context.Context) error {
	select {
	case <-s.terminated:
		return nil
	default:
	}
	select {
	case <-s.terminated:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// IsShutdown reports whether Shutdown or ShutdownNow was called (JDK
// isShutdown).
func (s *Scheduler) IsShutdown() bool { return runState(s.stateA.Load()) >= stateShutdown }

// IsTerminating reports whether the scheduler is shut down but not yet
// terminated (JDK isTerminating).
func (s *Scheduler) IsTerminating() bool {
	st := runState(s.stateA.Load())
	return st >= stateShutdown && st < stateTerminated
}

// IsTerminated reports whether the scheduler has terminated (JDK
// isTerminated).
func (s *Scheduler) IsTerminated() bool { return runState(s.stateA.Load()) == stateTerminated }
