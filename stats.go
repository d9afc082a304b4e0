package scheduler

import "fmt"

// Stats: the counters of a Scheduler (JDK ThreadPoolExecutor getPoolSize,
// getActiveCount, getTaskCount and friends).

// Stats is a snapshot of a Scheduler's counters (the JDK's getPoolSize,
// getActiveCount, getTaskCount and friends). The pool and queue fields,
// Completed and the cancels counted under the queue lock are read at one
// instant, so TaskCount = Completed + Active + Queued holds exactly;
// Rejected, Failed, Panicked and the other cancels are atomic counters read
// just after, so a run failing at that moment may be counted in Failed and
// not yet in Completed.
type Stats struct {
	// PoolSize is the number of live workers; CorePoolSize the target;
	// LargestPoolSize the most there ever were.
	PoolSize, CorePoolSize, LargestPoolSize int
	// Active counts tasks running now; Queued the tasks in the queue,
	// canceled ones not yet removed included.
	Active, Queued int
	// TaskCount = Completed + Active + Queued (JDK getTaskCount).
	TaskCount uint64
	// Completed counts finished runs, each periodic run and failed runs
	// included. Failed counts runs that returned an error or panicked;
	// Panicked those that panicked. Rejected counts rejected submissions;
	// Canceled futures canceled by any path.
	Completed, Rejected, Failed, Panicked, Canceled uint64
}

// Stats returns the scheduler's counters.
func (s *Scheduler) Stats() Stats {
	s.q.mu.Lock()
	st := Stats{
		PoolSize:        len(s.workers),
		CorePoolSize:    s.corePoolSize,
		LargestPoolSize: s.largestPoolSize,
		Active:          s.active,
		Queued:          s.q.lenLocked(),
		Completed:       s.completed,
		Canceled:        s.canceledLocked,
	}
	s.q.mu.Unlock()
	st.TaskCount = st.Completed + uint64(st.Active) + uint64(st.Queued)
	st.Rejected = s.rejected.Load()
	st.Failed = s.failed.Load()
	st.Panicked = s.panicked.Load()
	st.Canceled += s.canceled.Load()
	return st
}

// String describes the scheduler as JDK ThreadPoolExecutor.toString does.
func (s *Scheduler) String() string {
	st := s.Stats()
	return fmt.Sprintf("scheduler.Scheduler[%v, pool size = %d, active tasks = %d, queued tasks = %d, completed tasks = %d]",
		runState(s.stateA.Load()), st.PoolSize, st.Active, st.Queued, st.Completed)
}
