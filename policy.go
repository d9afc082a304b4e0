package scheduler

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// Policies: what happens to a submission the scheduler cannot accept (JDK
// RejectedExecutionHandler and its four implementations), and the policy
// setters and getters of ScheduledThreadPoolExecutor.

// RejectionPolicy decides what happens to a submission the scheduler cannot
// accept: after Shutdown, or beyond WithMaxQueueSize (JDK
// RejectedExecutionHandler). Rejected is called once per rejected
// submission, in the submitting goroutine, with the future the call returns.
// A non-nil error is returned by the scheduling call. Unlike the JDK, a
// future the policy leaves neither done nor queued is then canceled, so no
// future is left pending forever.
type RejectionPolicy interface {
	Rejected(s *Scheduler, f ScheduledFuture) error
}

var (
	// AbortPolicy, the default, returns an error wrapping ErrRejected (JDK
	// AbortPolicy); the task's future is canceled.
	AbortPolicy RejectionPolicy = abortPolicy{}
	// CallerRunsPolicy runs the task's first run at once in the submitting
	// goroutine, hooks included; a periodic task is then queued for its
	// next run. After Shutdown it discards, as the JDK's does.
	CallerRunsPolicy RejectionPolicy = callerRunsPolicy{}
	// DiscardPolicy drops the task silently; its future is canceled.
	DiscardPolicy RejectionPolicy = discardPolicy{}
	// DiscardOldestPolicy cancels the earliest-due queued task and queues
	// the new one in its place. After Shutdown it discards, as the JDK's
	// does.
	DiscardOldestPolicy RejectionPolicy = discardOldestPolicy{}
)

type abortPolicy struct{}

func (abortPolicy) Rejected(s *Scheduler, f ScheduledFuture) error {
	reason := "the scheduler is shut down"
	if !s.IsShutdown() {
		reason = fmt.Sprintf("the queue is full (max %d)", s.maxQueueSize)
	}
	return rejected(fmt.Sprint(f), reason, nil)
}

type callerRunsPolicy struct{}

func (callerRunsPolicy) Rejected(s *Scheduler, f ScheduledFuture) error {
	if s.IsShutdown() {
		return nil
	}
	s.runInCaller(f)
	return nil
}

type discardPolicy struct{}

func (discardPolicy) Rejected(*Scheduler, ScheduledFuture) error { return nil }

type discardOldestPolicy struct{}

func (discardOldestPolicy) Rejected(s *Scheduler, f ScheduledFuture) error {
	if s.IsShutdown() {
		return nil
	}
	s.replaceOldest(f)
	return nil
}

// reject hands t to the rejection policy (JDK reject) and makes sure its
// future is not left pending: unless the policy ran it, queued it or
// completed it, it is canceled.
func (s *Scheduler) reject(t *futureTask) (ScheduledFuture, error) {
	s.rejected.Add(1)
	f := t.face()
	err := s.callPolicy(*s.policy.Load(), f)
	if !t.IsDone() && !s.queuedOrRunning(t) {
		t.cancelState()
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// callPolicy calls the policy, turning a panic into an error.
func (s *Scheduler) callPolicy(p RejectionPolicy, f ScheduledFuture) (err error) {
	if pe := s.guard("rejection policy", s.taskOf(f), func() { err = p.Rejected(s, f) }); pe != nil {
		return rejected("rejection policy", "panicked", pe)
	}
	return err
}

// queuedOrRunning reports whether t is in the queue or on a worker.
func (s *Scheduler) queuedOrRunning(t *futureTask) bool {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	if t.heapIndex != notQueued {
		return true
	}
	for w := range s.workers {
		if w.run.t == t {
			return true
		}
	}
	return false
}

// runInCaller runs f's first run in the calling goroutine, for
// CallerRunsPolicy. It counts as active while it runs.
func (s *Scheduler) runInCaller(f ScheduledFuture) {
	t := s.taskOf(f)
	if t == nil {
		return
	}
	q := &s.q
	q.mu.Lock()
	s.active++
	rec := newRunRecordLocked(t, q.now())
	s.callerRuns = append(s.callerRuns, &rec)
	q.mu.Unlock()
	ran := s.runTask(t, &rec)
	q.mu.Lock()
	s.callerRuns = slices.DeleteFunc(s.callerRuns, func(r *runRecord) bool { return r == &rec })
	s.finishRunLocked(ran)
	q.mu.Unlock()
}

// replaceOldest cancels the earliest-due queued task and queues f in its
// place, for DiscardOldestPolicy.
func (s *Scheduler) replaceOldest(f ScheduledFuture) {
	t := s.taskOf(f)
	if t == nil {
		return
	}
	q := &s.q
	q.mu.Lock()
	if s.state != stateRunning {
		q.mu.Unlock()
		return
	}
	var oldest *futureTask
	if q.headLocked() != nil {
		oldest = q.pollLocked()
	}
	q.offerLocked(t)
	s.ensurePrestartLocked()
	q.mu.Unlock()
	if oldest != nil {
		oldest.cancelState()
	}
}

// SetRemoveOnCancelPolicy sets the remove-on-cancel policy (JDK
// setRemoveOnCancelPolicy); see [WithRemoveOnCancel]. It does not remove
// tasks canceled before the call: [Scheduler.Purge] does.
func (s *Scheduler) SetRemoveOnCancelPolicy(remove bool) { s.removeOnCancel.Store(remove) }

// RemoveOnCancelPolicy returns the remove-on-cancel policy (JDK
// getRemoveOnCancelPolicy).
func (s *Scheduler) RemoveOnCancelPolicy() bool { return s.removeOnCancel.Load() }

// SetContinueExistingPeriodicTasksAfterShutdownPolicy sets the policy of
// [WithContinueExistingPeriodicTasksAfterShutdown]. Setting it to false
// after Shutdown cancels the queued periodic tasks at once (JDK).
func (s *Scheduler) SetContinueExistingPeriodicTasksAfterShutdownPolicy(keep bool) {
	s.setShutdownPolicy(&s.continuePeriodic, keep)
}

// ContinueExistingPeriodicTasksAfterShutdownPolicy returns the policy set
// by SetContinueExistingPeriodicTasksAfterShutdownPolicy (default false).
func (s *Scheduler) ContinueExistingPeriodicTasksAfterShutdownPolicy() bool {
	return s.continuePeriodic.Load()
}

// SetExecuteExistingDelayedTasksAfterShutdownPolicy sets the policy of
// [WithExecuteExistingDelayedTasksAfterShutdown]. Setting it to false after
// Shutdown cancels the queued one-shot tasks not yet due at once (JDK).
func (s *Scheduler) SetExecuteExistingDelayedTasksAfterShutdownPolicy(keep bool) {
	s.setShutdownPolicy(&s.executeDelayed, keep)
}

// ExecuteExistingDelayedTasksAfterShutdownPolicy returns the policy set by
// SetExecuteExistingDelayedTasksAfterShutdownPolicy (default true).
func (s *Scheduler) ExecuteExistingDelayedTasksAfterShutdownPolicy() bool {
	return s.executeDelayed.Load()
}

func (s *Scheduler) setShutdownPolicy(p *atomic.Bool, keep bool) {
	s.q.mu.Lock()
	p.Store(keep)
	if !keep && s.state == stateShutdown {
		s.onShutdownLocked()
		s.q.wakeAllLocked()
	}
	s.unlockAndTryTerminate()
}

// SetRejectionPolicy replaces the rejection policy (JDK
// setRejectedExecutionHandler). nil means AbortPolicy.
func (s *Scheduler) SetRejectionPolicy(p RejectionPolicy) {
	if p == nil {
		p = AbortPolicy
	}
	s.policy.Store(&p)
}
