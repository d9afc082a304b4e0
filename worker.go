package scheduler

// The pool: a worker's life from start to exit, and the pool's size (JDK
// ThreadPoolExecutor's addWorker, runWorker, getTask, processWorkerExit).
// Running one task is in run.go; the wait for the next is take, in leader.go.

// worker is one pooled goroutine (JDK ThreadPoolExecutor.Worker).
type worker struct {
	// timer and wake are used only while this worker is the leader. timer
	// is made on the worker's first timed wait and reused after.
	timer Timer
	wake  chan struct{} // capacity 1; sent to under q.mu, only while q.leader == this worker
	// deadline is the trigger time the timer is armed for while this
	// worker leads; q.mu. AwaitIdle reads it to know the lead is armed.
	deadline int64

	// run is the run this worker is doing (run.t is nil when none), for
	// ShutdownNow's interrupt, for CurrentRun, and for the accounting done
	// when it comes back; q.mu.
	run runRecord
	// taken is the clock reading at which take found the head due: the
	// run's Started. Written by take, under q.mu.
	taken int64
	// ranOutcome says whether the task in run counted as a run; written by the
	// worker itself, read by it under q.mu in getTask.
	ranOutcome bool
}

// canAddWorkerLocked says whether a worker may start now (JDK addWorker's
// run-state check): while running, or while shutting down with work left.
func (s *Scheduler) canAddWorkerLocked() bool {
	return s.state == stateRunning || (s.state == stateShutdown && s.q.lenLocked() > 0)
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

// workerMustExitLocked is the one rule for a worker to leave the pool (JDK
// getTask's checks): the scheduler stopped, it shut down with an empty
// queue, or the pool shrank below the number of workers. AwaitIdle uses it
// too: a worker that must exit has been woken to do so and is not idle.
func (s *Scheduler) workerMustExitLocked() bool {
	return s.state >= stateStop ||
		(s.state >= stateShutdown && s.q.lenLocked() == 0) ||
		len(s.workers) > s.corePoolSize
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
		w.ranOutcome = s.runTask(t, &w.run)
	}
}

// getTask finishes the accounting of the worker's last task and blocks
// until a task is due, returning it; or returns nil when the worker must
// exit (JDK getTask around DelayedWorkQueue.take).
func (s *Scheduler) getTask(w *worker) *futureTask {
	q := &s.q
	q.mu.Lock()
	if w.run.t != nil {
		s.finishRunLocked(w.ranOutcome)
		w.run = runRecord{}
	}
	for {
		if s.workerMustExitLocked() {
			s.exitAndUnlock(w)
			return nil
		}
		if t := q.takeLocked(w); t != nil {
			s.active++
			w.run = newRunRecordLocked(t, w.taken)
			q.mu.Unlock()
			return t
		}
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

// exitAndUnlock removes w from the pool, unlocks q.mu, and finishes
// termination if w was the last worker (JDK processWorkerExit).
func (s *Scheduler) exitAndUnlock(w *worker) {
	delete(s.workers, w)
	if w.timer != nil {
		w.timer.Stop()
	}
	s.q.handOffLocked()
	s.q.notifyIdleLocked()
	s.unlockAndTryTerminate()
}

// workerDied handles a worker whose task called runtime.Goexit: the task's
// future fails with errGoexit (set in callBody's deferred recover), the run
// is counted, and a stand-in worker starts if the pool needs one (JDK
// processWorkerExit with completedAbruptly).
func (s *Scheduler) workerDied(w *worker) {
	s.q.mu.Lock()
	if w.run.t != nil {
		s.finishRunLocked(true)
		w.run = runRecord{}
	}
	if s.state < stateStop && len(s.workers)-1 < s.corePoolSize && s.canAddWorkerLocked() {
		s.addWorkerLocked()
	}
	s.exitAndUnlock(w)
}

// SetCorePoolSize sets the number of workers (JDK setCorePoolSize). Growing
// starts new workers at once if tasks are queued, at most one per queued
// task; shrinking lets the extra workers exit once their current task ends
// (idle ones at once). It returns an error wrapping ErrInvalidArgument if
// n < 1.
func (s *Scheduler) SetCorePoolSize(n int) error {
	if n < 1 {
		return invalid("SetCorePoolSize", "n %d < 1", n)
	}
	q := &s.q
	q.mu.Lock()
	defer q.mu.Unlock()
	delta := n - s.corePoolSize
	s.corePoolSize = n
	if len(s.workers) > n {
		q.wakeAllLocked()
		return nil
	}
	// Like the JDK's addWorker(core=true), never past the core size: the
	// pool may hold fewer workers than the old size (they start lazily).
	for k := min(delta, q.lenLocked()); k > 0 && len(s.workers) < n && s.canAddWorkerLocked(); k-- {
		s.addWorkerLocked()
	}
	return nil
}

// PrestartAllCoreWorkers starts every worker not yet started and returns
// how many it started (JDK prestartAllCoreThreads).
func (s *Scheduler) PrestartAllCoreWorkers() int {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	n := 0
	for len(s.workers) < s.corePoolSize && s.canAddWorkerLocked() {
		s.addWorkerLocked()
		n++
	}
	return n
}
