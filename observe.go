package scheduler

import (
	"context"
	"time"
)

// Observing runs: what each run was (RunInfo), how a run finds out about
// itself (CurrentRun), and the Observe hook. Spring's TriggerContext and
// Quartz's JobExecutionContext are the nearest counterparts; the JDK has
// none.

// RunInfo describes one run of a task, for [Hooks].Observe and
// [CurrentRun]. Times are read from the scheduler's clock.
type RunInfo struct {
	// Future is the task's future: the very value its scheduling call
	// returned.
	Future ScheduledFuture
	// Due is the run's nominal due time, before any jitter: the trigger's
	// time exactly as Trigger.Next returned it, initialDelay + k*period for
	// a fixed-rate task, the previous run's end plus the delay for a
	// fixed-delay task, or the scheduling time plus the delay for a
	// one-shot task. For runs merged by CoalesceMissed it is the latest
	// merged due time. Together with Future it identifies the run.
	Due time.Time
	// Started is when the worker took the task off the queue to run it;
	// Ended is when the run (and AfterExecute) had returned. Started - Due -
	// Jitter is the scheduler's own lateness.
	Started, Ended time.Time
	// Jitter is this run's random offset (WithJitter): it was to start at
	// Due + Jitter. A run merged by CoalesceMissed has none.
	Jitter time.Duration
	// Err is the run's outcome: nil, the task's error, or a *PanicError
	// (also the one of a BeforeExecute hook that panicked).
	Err error
}

// CurrentRun returns the run that ctx was given to: Future, Due, Started
// and Jitter, as Observe will get them (Ended and Err are zero). It works on
// the run's ctx and on any context derived from it, while the run is in
// progress; ok is false for any other ctx, and once the run has returned.
// Spring's TriggerContext and Quartz's getScheduledFireTime play this part.
func CurrentRun(ctx context.Context) (r RunInfo, ok bool) {
	if ctx == nil {
		return RunInfo{}, false
	}
	t, _ := ctx.Value(currentRunKey{}).(*futureTask)
	if t == nil {
		return RunInfo{}, false
	}
	s := t.s
	s.q.mu.Lock()
	rec, found := s.findRunLocked(t)
	s.q.mu.Unlock()
	if !found {
		return RunInfo{}, false
	}
	return s.runInfo(&rec), true
}

// currentRunKey is the context key under which a run's ctx answers with its
// task; see runCtx.Value.
type currentRunKey struct{}

// runRecord is what the scheduler knows of a run in progress: the task and
// the Due, Started and Jitter that CurrentRun and Observe report. A worker
// keeps its own in worker.run; CallerRunsPolicy's runs are listed in
// Scheduler.callerRuns. q.mu: written when the task is taken, and when
// CoalesceMissed merges runs.
type runRecord struct {
	t       *futureTask
	due     int64     // nominal due time, clock nanoseconds
	dueWall time.Time // a trigger task's due time as Next returned it
	jitter  int64     // this run's offset, clock nanoseconds
	started int64     // when the task was taken, clock nanoseconds
	// requeued: the run returned and its periodic task is queued again,
	// so its next run may be in progress on another worker while this
	// one still calls the hooks; CurrentRun skips this record.
	requeued bool
}

// newRunRecordLocked records t's run starting at started. q.mu.
func newRunRecordLocked(t *futureTask, started int64) runRecord {
	rec := runRecord{t: t, due: t.when, started: started}
	if ext := t.ext(); ext != nil {
		rec.due -= ext.offset
		rec.jitter = ext.offset
		rec.dueWall = ext.dueWall
	}
	return rec
}

// findRunLocked returns the record of t's run in progress.
func (s *Scheduler) findRunLocked(t *futureTask) (runRecord, bool) {
	for w := range s.workers {
		if w.run.t == t && !w.run.requeued {
			return w.run, true
		}
	}
	for _, rec := range s.callerRuns {
		if rec.t == t && !rec.requeued {
			return *rec, true
		}
	}
	return runRecord{}, false
}

// runInfo builds the RunInfo of a run from its record, Ended and Err left
// zero.
func (s *Scheduler) runInfo(rec *runRecord) RunInfo {
	due := rec.dueWall
	if rec.t.kind() != KindTrigger {
		due = s.q.origin.Add(time.Duration(rec.due))
	}
	r := RunInfo{
		Future:  rec.t.face(),
		Due:     due,
		Started: s.q.origin.Add(time.Duration(rec.started)),
		Jitter:  time.Duration(rec.jitter),
	}
	return r
}

// observe calls every Observe hook for a finished run, each guarded. ended
// is the run's end by the clock (Started for a run whose BeforeExecute
// panicked).
func (s *Scheduler) observe(rec *runRecord, ended int64, err error) {
	r := s.runInfo(rec)
	r.Ended = s.q.origin.Add(time.Duration(ended))
	r.Err = err
	for i := range s.hooks {
		if h := s.hooks[i].Observe; h != nil {
			s.guard("Observe hook", rec.t, func() { h(r) })
		}
	}
}
