package scheduler

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
// wall clock. The first time it finds still ahead (or the end, or the
// trigger's failure) is kept for the re-queue after the run, so a run
// calls Next once, as under CatchUpMissed.
func (s *Scheduler) coalesceTrigger(t *futureTask, rec *runRecord) {
	wallNow := t.ext.clockWall // read by requeueIfEarly as this run began
	due := rec.dueWall
	next, err := s.nextTrigger(t, due)
	for err == nil && !next.IsZero() && !next.After(wallNow) {
		due = next
		next, err = s.nextTrigger(t, due)
	}
	// Read back only by this worker, in reExecuteTrigger after the run.
	t.ext.lookahead = triggerLookahead{next: next, err: err, ok: true}
	if due.Equal(rec.dueWall) {
		return
	}
	q := &s.q
	q.mu.Lock()
	rec.dueWall = due
	rec.jitter = 0
	t.ext.dueWall = due
	t.ext.offset = 0
	q.mu.Unlock()
}
