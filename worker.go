package scheduler

import (
	"context"
	"errors"
	"runtime/pprof"
	"time"
)

// delayDuration converts a clock delta to a Duration.
func delayDuration(d int64) time.Duration { return time.Duration(d) }

// canAddWorkerLocked says whether a worker may start now (JDK addWorker's
// run-state check): while running, or while shutting down with work left.
func (s *Scheduler) canAddWorkerLocked() bool {
	return s.state == stateRunning || (s.state == stateShutdown && s.q.heap.len() > 0)
}

// addWorkerLocked starts one worker goroutine (JDK addWorker).
func (s *Scheduler) addWorkerLocked() {
	w := &worker{wake: make(chan struct{}, 1)}
	s.workers[w] = struct{}{}
	if n := len(s.workers); n > s.largestPoolSize {
		s.largestPoolSize = n
	}
	go s.runWorker(w)
}

// ensurePrestartLocked starts a worker if the pool is below its core size:
// one per queued task until the pool is full (JDK ensurePrestart). A
// scheduler that never had a task owns no goroutine.
func (s *Scheduler) ensurePrestartLocked() {
	if len(s.workers) < s.corePoolSize && s.canAddWorkerLocked() {
		s.addWorkerLocked()
	}
}

// runWorker is a worker's life (JDK runWorker): take a task, run it, repeat,
// until getTask says to exit. If a task ends the goroutine with
// runtime.Goexit, the deferred exit accounts for it and starts a stand-in.
func (s *Scheduler) runWorker(w *worker) {
	exited := false
	defer func() {
		if !exited {
			s.workerDied(w)
		}
	}()
	for {
		t := s.getTask(w)
		if t == nil {
			exited = true
			return
		}
		w.ranOutcome = s.runTask(t)
	}
}

// getTask finishes the accounting of the worker's last task and blocks
// until a task is due, returning it; or returns nil when the worker must
// exit: the scheduler stopped, shut down with an empty queue, or the pool
// shrank below the number of workers (JDK getTask and DelayedWorkQueue.take).
func (s *Scheduler) getTask(w *worker) *task {
	q := &s.q
	q.mu.Lock()
	if w.current != nil {
		s.finishRunLocked(w.ranOutcome)
		w.current = nil
	}
	for {
		if s.state >= stateStop ||
			(s.state >= stateShutdown && q.heap.len() == 0) ||
			len(s.workers) > s.corePoolSize {
			s.exitLocked(w)
			return nil
		}
		head := q.heap.peek()
		if head == nil {
			q.followLocked()
			continue
		}
		when := head.when
		now := s.now()
		if when-now <= 0 {
			t := q.pollLocked()
			s.active++
			w.current = t
			q.mu.Unlock()
			return t
		}
		if q.leader != nil {
			q.followLocked()
			continue
		}
		s.leadLocked(w, when, now)
	}
}

// finishRunLocked counts a run as finished (JDK completedTasks++ after
// afterExecute), at the same instant as it stops counting as active, so
// TaskCount = Completed + Active + Queued holds in every snapshot.
func (s *Scheduler) finishRunLocked(ran bool) {
	s.active--
	if ran {
		s.completed++
	}
	s.q.notifyIdleLocked()
}

// exitLocked removes w from the pool, unlocks, and finishes termination if
// w was the last worker (JDK processWorkerExit).
func (s *Scheduler) exitLocked(w *worker) {
	delete(s.workers, w)
	if w.timer != nil {
		w.timer.Stop()
	}
	s.q.handOffLocked()
	s.q.notifyIdleLocked()
	s.unlockAndTryTerminate()
}

// workerDied handles a worker whose task called runtime.Goexit: the task's
// future fails with errGoexit (set in runTask's deferred recover), the run is
// counted, and a stand-in worker starts if the pool needs one (JDK
// processWorkerExit with completedAbruptly).
func (s *Scheduler) workerDied(w *worker) {
	s.q.mu.Lock()
	if w.current != nil {
		s.finishRunLocked(true)
		w.current = nil
	}
	delete(s.workers, w)
	if s.state < stateStop && len(s.workers) < s.corePoolSize && s.canAddWorkerLocked() {
		s.addWorkerLocked()
	}
	s.q.handOffLocked()
	s.q.notifyIdleLocked()
	s.unlockAndTryTerminate()
}

// canRun says whether t may run in the current run state (JDK
// canRunInCurrentRunState): always while running; never once stopped; after
// Shutdown, periodic tasks by the continue-existing-periodic policy and
// one-shot tasks by the execute-existing-delayed policy, or if already due.
func (s *Scheduler) canRun(t *task) bool {
	switch st := runState(s.stateA.Load()); {
	case st == stateRunning:
		return true
	case st >= stateStop:
		return false
	}
	if t.period != 0 {
		return s.continuePeriodic.Load()
	}
	// t.when is read without q.mu: t is a one-shot task this goroutine took
	// from the queue (or is about to run as the caller), and its when was
	// written under q.mu before that.
	return s.executeDelayed.Load() || t.when-s.now() <= 0
}

// runTask runs one dequeued task (JDK ScheduledFutureTask.run wrapped in
// runWorker's hooks) and reports whether it counts as a run for Stats.
func (s *Scheduler) runTask(t *task) (ran bool) {
	if !s.canRun(t) {
		t.cancelState() // JDK: a task that may no longer run is canceled
		return false
	}
	if t.loadState() != stateNew {
		return false // canceled while queued: discarded, no hooks
	}
	f := t.face()
	if h := s.hooks.BeforeExecute; h != nil {
		if pe := s.callHook("BeforeExecute", t, func() { h(f) }); pe != nil {
			// The JDK loses such a task; here its future fails.
			if t.complete(pe) {
				s.failed.Add(1)
				s.panicked.Add(1)
			}
			return true
		}
	}
	// Cancel may have won since the check above (while BeforeExecute ran,
	// say): then the body does not start (JDK FutureTask.run re-checks
	// too), it is no run for Stats, and a BeforeExecute that was called
	// still gets its AfterExecute.
	if !t.beginRun() {
		if s.hooks.BeforeExecute != nil {
			if h := s.hooks.AfterExecute; h != nil {
				s.callHook("AfterExecute", t, func() { h(f, ErrCanceled) })
			}
		}
		return false
	}
	err, panicked := s.callBody(t)
	t.endRun()
	switch {
	case t.period == 0:
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
		s.reExecutePeriodic(t)
	default:
		s.reExecutePeriodic(t)
	}
	if err != nil {
		s.failed.Add(1)
		if panicked {
			s.panicked.Add(1)
		}
	}
	if h := s.hooks.AfterExecute; h != nil {
		s.callHook("AfterExecute", t, func() { h(f, err) })
	}
	return true
}

// callBody runs the task's body once, with its pprof labels, and turns a
// panic into a *PanicError.
//
// Unlike errgroup, which lets panics crash the program, a scheduler must
// recover: one panicking heartbeat would otherwise take every other task and
// the process down, and the JDK catches every Throwable here too (FutureTask
// run / runAndReset). The panic is not lost: it is the future's outcome, it
// reaches AfterExecute, it is counted in Stats.Panicked and logged at Error.
func (s *Scheduler) callBody(t *task) (err error, panicked bool) {
	normal := false
	if t.ext != nil && t.ext.labels != nil {
		pprof.SetGoroutineLabels(t.ext.labels)
	}
	defer func() {
		if t.ext != nil && t.ext.labels != nil {
			pprof.SetGoroutineLabels(context.Background())
		}
		if normal {
			return
		}
		r := recover()
		if r == nil {
			// runtime.Goexit: it cannot be stopped; record it and let
			// runWorker's deferred exit replace the worker.
			t.complete(errGoexit)
			s.failed.Add(1)
			s.logger.Error("scheduler: task called runtime.Goexit", "task", t.logName())
			return
		}
		pe := newPanicError(r)
		err, panicked = pe, true
		s.logger.Error("scheduler: task panicked",
			"task", t.logName(), "panic", r, "periodic", t.period != 0,
			"stack", string(pe.Stack))
	}()
	err = t.fn(t.runContext())
	normal = true
	return err, false
}

// callHook runs a hook and recovers a panic in it: logged, returned, and
// the worker survives.
func (s *Scheduler) callHook(name string, t *task, call func()) (pe *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			pe = newPanicError(r)
			s.logger.Error("scheduler: hook panicked", "hook", name,
				"task", t.logName(), "panic", r, "stack", string(pe.Stack))
		}
	}()
	call()
	return nil
}

// reExecutePeriodic re-queues a periodic task for its next run, or cancels
// it if it may no longer run (JDK setNextRunTime + reExecutePeriodic). A
// re-queue is never rejected, not even beyond WithMaxQueueSize.
func (s *Scheduler) reExecutePeriodic(t *task) {
	q := &s.q
	q.mu.Lock()
	if t.loadState() == stateNew && s.canRun(t) {
		if t.period > 0 {
			t.when += t.period // fixed rate: drift-free, catches up
		} else {
			t.when = s.triggerTimeLocked(s.now(), -t.period)
		}
		q.offerLocked(t)
		s.ensurePrestartLocked()
		q.mu.Unlock()
		return
	}
	q.mu.Unlock()
	// Canceled meanwhile (then this does nothing), or shut down.
	t.cancelState()
}
