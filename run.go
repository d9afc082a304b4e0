package scheduler

import (
	"context"
	"errors"
	"runtime/pprof"
	"time"
)

// Running one task on a worker: the run-state check, the hooks around the
// body, the body itself with its panic recovery, the re-queue of a periodic
// task (when it runs next is nextrun.go's), and the one recover guard every
// other call of user code goes through (JDK ScheduledFutureTask.run,
// FutureTask.run/runAndReset, and the beforeExecute/afterExecute calls of
// ThreadPoolExecutor.runWorker).

// canRun says whether t may run in the current run state (JDK
// canRunInCurrentRunState): always while running; never once stopped; after
// Shutdown, periodic tasks by the continue-existing-periodic policy and
// one-shot tasks by the execute-existing-delayed policy, or if already due.
func (s *Scheduler) canRun(t *futureTask) bool {
	switch st := runState(s.stateA.Load()); {
	case st == stateRunning:
		return true
	case st >= stateStop:
		return false
	}
	if t.kind().periodic() {
		return s.continuePeriodic.Load()
	}
	// t.when is read without q.mu: t is a one-shot task this goroutine took
	// from the queue (or is about to run as the caller), and its when was
	// written under q.mu before that.
	return s.executeDelayed.Load() || t.when-s.q.now() <= 0
}

// runTask runs one dequeued task (JDK ScheduledFutureTask.run wrapped in
// runWorker's hooks) and reports whether it counts as a run for Stats. rec
// is the run's record, filled in when the task was taken.
func (s *Scheduler) runTask(t *futureTask, rec *runRecord) (ran bool) {
	if !s.canRun(t) {
		t.cancelState() // JDK: a task that may no longer run is canceled
		return false
	}
	if t.loadState() != stateNew {
		return false // canceled while queued: discarded, no hooks
	}
	if t.kind() == KindTrigger && s.requeueIfEarly(t) {
		return false
	}
	if ext := t.ext(); ext != nil && ext.coalesce {
		s.coalesceMissed(t, rec)
	}
	f := t.face()
	if pe := s.beforeExecute(t, f); pe != nil {
		// The JDK loses such a task; here its future fails.
		if t.complete(pe) {
			s.failed.Add(1)
			s.panicked.Add(1)
		}
		if s.observing {
			s.observe(rec, rec.started, pe)
		}
		s.recordRun(rec, pe)
		return true
	}
	// Cancel may have won since the check above (while BeforeExecute ran,
	// say): then the body does not start (JDK FutureTask.run re-checks
	// too), it is no run for Stats, and a BeforeExecute that was called
	// still gets its AfterExecute.
	if !t.beginRun() {
		if s.hasBeforeExecute {
			s.afterExecute(t, f, ErrCanceled)
		}
		return false
	}
	err, panicked := s.callBody(t, rec)
	t.endRun()
	switch {
	case t.kind() == KindOneShot:
		t.complete(err)
	case err != nil && !panicked && errors.Is(err, context.Canceled) && runState(s.stateA.Load()) >= stateStop:
		// The run gave up because ShutdownNow canceled its ctx: the task
		// ends canceled, as one that returned nil would, not failed.
		t.cancelState()
	case err != nil && !t.continueOnError():
		// JDK runAndReset: a failed run suppresses later runs.
		if t.complete(err) && !panicked {
			s.logger.Error("scheduler: periodic task stopped by error",
				"task", t.logName(), "error", err)
		}
	case err != nil:
		s.logger.Warn("scheduler: periodic run failed; continuing",
			"task", t.logName(), "error", err)
		s.reExecutePeriodic(t, rec)
	default:
		s.reExecutePeriodic(t, rec)
	}
	if err != nil {
		s.failed.Add(1)
		if panicked {
			s.panicked.Add(1)
		}
	}
	s.afterExecute(t, f, err)
	if s.observing {
		s.observe(rec, s.q.now(), err)
	}
	s.recordRun(rec, err)
	return true
}

// beforeExecute calls every BeforeExecute hook in order, each guarded, and
// returns the panic of the first that panicked (the later ones are then
// not called).
func (s *Scheduler) beforeExecute(t *futureTask, f ScheduledFuture) *PanicError {
	for i := range s.hooks {
		if h := s.hooks[i].BeforeExecute; h != nil {
			if pe := s.guard("BeforeExecute hook", t, func() { h(f) }); pe != nil {
				return pe
			}
		}
	}
	return nil
}

// afterExecute calls every AfterExecute hook in order, each guarded: a
// panic in one does not keep the others from running.
func (s *Scheduler) afterExecute(t *futureTask, f ScheduledFuture, err error) {
	for i := range s.hooks {
		if h := s.hooks[i].AfterExecute; h != nil {
			s.guard("AfterExecute hook", t, func() { h(f, err) })
		}
	}
}

// callBody runs the task's body once, with its pprof labels, and turns a
// panic into a *PanicError. rec is the run's record, for the hooks of a run
// that ends the goroutine with runtime.Goexit.
//
// Unlike errgroup, which lets panics crash the program, a scheduler must
// recover: one panicking heartbeat would otherwise take every other task and
// the process down, and the JDK catches every Throwable here too (FutureTask
// run / runAndReset). The panic is not lost: it is the future's outcome, it
// reaches AfterExecute, it is counted in Stats.Panicked and logged at Error.
func (s *Scheduler) callBody(t *futureTask, rec *runRecord) (err error, panicked bool) {
	normal := false
	labeled := false
	if ext := t.ext(); ext != nil && ext.labels != nil {
		pprof.SetGoroutineLabels(ext.labels)
		labeled = true
	}
	defer func() {
		if labeled {
			pprof.SetGoroutineLabels(context.Background())
		}
		if normal {
			return
		}
		r := recover()
		if r == nil {
			// runtime.Goexit: it cannot be stopped; record it, give the
			// hooks the run as for any other failure, and let
			// runWorker's deferred exit replace the worker.
			t.complete(errGoexit)
			s.failed.Add(1)
			s.logger.Error("scheduler: task called runtime.Goexit", "task", t.logName())
			s.afterExecute(t, t.face(), errGoexit)
			if s.observing {
				s.observe(rec, s.q.now(), errGoexit)
			}
			s.recordRun(rec, errGoexit)
			return
		}
		pe := newPanicError(r)
		err, panicked = pe, true
		s.logPanic("task", t, pe)
	}()
	err = t.fn(t.runContext())
	normal = true
	return err, false
}

// reExecutePeriodic re-queues a periodic task for its next run, or cancels
// it if it may no longer run (JDK reExecutePeriodic). A re-queue is never
// rejected, not even beyond WithMaxQueueSize. A trigger task whose trigger
// has no next time ends here, or fails if its trigger failed.
func (s *Scheduler) reExecutePeriodic(t *futureTask, rec *runRecord) {
	var next time.Time
	if t.kind() == KindTrigger {
		var ok bool
		if next, ok = s.nextTriggerTime(t); !ok {
			return
		}
	}
	q := &s.q
	q.mu.Lock()
	// From here another worker may start the next run while this one
	// calls the hooks: CurrentRun must find that run, not this record.
	rec.requeued = true
	if t.loadState() == stateNew && s.canRun(t) {
		t.setWhenLocked(s.nextRunTimeLocked(t, next))
		q.offerLocked(t)
		s.ensurePrestartLocked()
		q.mu.Unlock()
		return
	}
	q.mu.Unlock()
	// Canceled meanwhile (then this does nothing), or shut down.
	t.cancelState()
}

// guard calls call and recovers a panic in it: the panic is logged at Error
// (logPanic) and returned, and the calling goroutine survives. It is
// the one recover for everything the scheduler calls on a user's behalf
// except a task's body (callBody, which must also tell runtime.Goexit
// apart): hooks, the decorator, the rejection policy. what names the
// callee in the log ("BeforeExecute hook"); t, if not nil, the task.
func (s *Scheduler) guard(what string, t *futureTask, call func()) (pe *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			pe = newPanicError(r)
			s.logPanic(what, t, pe)
		}
	}()
	call()
	return nil
}

// logPanic logs a recovered panic at Error, always with the same fields:
// the task's name (when there is a task), the panic value and the stack.
func (s *Scheduler) logPanic(what string, t *futureTask, pe *PanicError) {
	msg := "scheduler: " + what + " panicked"
	if t == nil {
		s.logger.Error(msg, "panic", pe.Value, "stack", string(pe.Stack))
		return
	}
	s.logger.Error(msg, "task", t.logName(), "periodic", t.kind().periodic(),
		"panic", pe.Value, "stack", string(pe.Stack))
}
