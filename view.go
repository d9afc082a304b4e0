package scheduler

import "time"

// Views for a page or an operator: the head of the queue without copying
// the queue, the runs in progress, and a task found by its ID. The JDK's
// getQueue returns the live queue, whose iterator copies it whole; Queue is
// that copy here.

// TaskID identifies a task within its Scheduler for as long as the task is
// queued or running: it is the task's sequence number, handed out when the
// task is first queued. A page may show it and act on it later through
// [Scheduler.TaskByID]. IDs are not reused by a Scheduler.
type TaskID uint64

// QueuedTask describes one queued task, as [Scheduler.PeekQueue] reports
// it.
type QueuedTask struct {
	ID     TaskID
	Future ScheduledFuture // the value the scheduling call returned
	Name   string          // WithName's, or ""
	Kind   TaskKind
	// Due is when the task runs next by the scheduler's clock, its jitter
	// included.
	Due time.Time
	// Period is the period of a fixed-rate task or the delay of a
	// fixed-delay task; 0 for the other kinds.
	Period time.Duration
	// Trigger is a trigger task's Trigger (print it with %v: a
	// *cron.Schedule prints its spec), nil for the other kinds.
	Trigger Trigger
	// Canceled is true for a canceled task not yet removed (see
	// WithRemoveOnCancel and Purge).
	Canceled bool
}

// PeekQueue returns up to limit queued tasks, the earliest due first, as
// Queue would order them, but without copying the queue: it walks the heap
// best first, in O(limit log limit) under the queue's lock, and reads the
// timing wheel's earliest slots after cascading the coarse ones into finer
// ones (once, as time would later), so a page can show the head of a queue
// of millions. limit <= 0 returns nil.
func (s *Scheduler) PeekQueue(limit int) []QueuedTask {
	if limit <= 0 {
		return nil
	}
	s.q.mu.Lock()
	ts := s.q.smallestLocked(limit)
	out := make([]QueuedTask, len(ts))
	for i, t := range ts {
		out[i] = s.queuedTaskLocked(t)
	}
	s.q.mu.Unlock()
	return out
}

// queuedTaskLocked describes t, which is queued. q.mu.
func (s *Scheduler) queuedTaskLocked(t *futureTask) QueuedTask {
	qt := QueuedTask{
		ID:       TaskID(t.seq),
		Future:   t.face(),
		Name:     t.Name(),
		Kind:     t.kind(),
		Due:      s.q.origin.Add(time.Duration(t.when)),
		Canceled: t.loadState() == stateCanceled,
	}
	switch qt.Kind {
	case KindFixedRate:
		qt.Period = time.Duration(t.period())
	case KindFixedDelay:
		qt.Period = time.Duration(-t.period())
	case KindTrigger:
		qt.Trigger = t.ext().trigger
	}
	return qt
}

// Running returns the runs in progress, on workers and in callers'
// goroutines (CallerRunsPolicy), with Future, Due, Started and Jitter as
// [CurrentRun] gives them; in no particular order.
func (s *Scheduler) Running() []RunInfo {
	s.q.mu.Lock()
	recs := make([]runRecord, 0, s.active+len(s.callerRuns))
	for w := range s.workers {
		if w.run.t != nil {
			recs = append(recs, w.run)
		}
	}
	for _, rec := range s.callerRuns {
		recs = append(recs, *rec)
	}
	s.q.mu.Unlock()
	out := make([]RunInfo, len(recs))
	for i := range recs {
		out[i] = s.runInfo(&recs[i])
	}
	return out
}

// TaskByID returns the future of the task with ID id if it is queued or
// running, and false otherwise (done, removed, or never this Scheduler's).
// It looks through the runs in progress and then the queue, in O(n) under
// the queue's lock: about a millisecond for a million queued tasks, for an
// operator's click, not for a hot path.
func (s *Scheduler) TaskByID(id TaskID) (ScheduledFuture, bool) {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	for w := range s.workers {
		if t := w.run.t; t != nil && TaskID(t.seq) == id {
			return t.face(), true
		}
	}
	for _, rec := range s.callerRuns {
		if TaskID(rec.t.seq) == id {
			return rec.t.face(), true
		}
	}
	if t := s.q.findSeqLocked(uint64(id)); t != nil {
		return t.face(), true
	}
	return nil, false
}
