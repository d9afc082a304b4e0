package scheduler

import "time"

// Missed runs: CoalesceMissed merges the runs of a fixed-rate or trigger
// task that are already due when a worker takes it into one run (R-23,
// Quartz's misfire "fire once now"). CatchUpMissed needs nothing here: the
// re-queue after each run, due at the next time even if that is past, runs
// the missed ones back to back (JDK fixed rate).

// coalesceMissed moves the run being started to the latest of t's due
// times that have already come, so that it stands for all of them; the
// next run is then the first one after that. A merged run has no jitter: it
// starts at once.
func (s *Scheduler) coalesceMissed(t *futureTask, rec *runRecord) {
	if t.isTrigger() {
		s.coalesceTrigger(t, rec)
		return
	}
	if t.period <= 0 {
		return // fixed delay: nothing to merge
	}
	k := (rec.started - rec.due) / t.period
	if k <= 0 {
		return
	}
	q := &s.q
	q.mu.Lock()
	rec.due += k * t.period
	rec.jitter = 0
	t.ext.offset = 0
	t.when = rec.due
	q.mu.Unlock()
}

// coalesceTrigger is coalesceMissed for a trigger task: it walks the
// trigger from this run's due time while the next time has come by the
// wall clock. A failing trigger stops the walk; the re-queue after the run
// calls it again and fails the task.
func (s *Scheduler) coalesceTrigger(t *futureTask, rec *runRecord) {
	wallNow := s.q.wallNow()
	due := rec.dueWall
	for {
		next, err := s.nextTriggerQuiet(t, due)
		if err != nil || next.IsZero() || next.After(wallNow) {
			break
		}
		due = next
	}
	if due.Equal(rec.dueWall) {
		return
	}
	q := &s.q
	q.mu.Lock()
	rec.dueWall = due
	rec.due = rec.started - int64(wallNow.Sub(due))
	rec.jitter = 0
	t.ext.dueWall = due
	t.ext.offset = 0
	q.mu.Unlock()
}

// nextTriggerQuiet is nextTrigger without logging a panic: a trigger that
// panics while missed runs are merged is called again, and logged, when
// the task is re-queued.
func (s *Scheduler) nextTriggerQuiet(t *futureTask, after time.Time) (next time.Time, err error) {
	defer func() {
		if r := recover(); r != nil {
			next, err = time.Time{}, newPanicError(r)
		}
	}()
	next = t.ext.trigger.Next(after)
	if !next.IsZero() && !next.After(after) {
		return time.Time{}, ErrInvalidArgument
	}
	return next, nil
}
