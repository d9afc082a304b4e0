package scheduler

import (
	"fmt"
	"time"
)

// Calendar schedules: Trigger, ScheduleWithTrigger, and how trigger times,
// which are wall-clock instants, are waited for on the monotonic clock.

// Trigger computes the run times of a calendar task (Spring's
// org.springframework.scheduling.Trigger; the JDK has none). Next returns the
// first run time strictly after t, or the zero Time when there are no more
// runs. It has the shape of robfig/cron's Schedule interface, so a parsed
// robfig/cron or gocron spec is a Trigger as it is, and so is a
// *cron.Schedule of this module's cron package.
//
// Next is called by the worker that ran the task, never concurrently for one
// task; a Trigger shared by several tasks must be safe for concurrent use.
type Trigger interface {
	Next(t time.Time) time.Time
}

// TriggerFunc adapts a function to a [Trigger].
type TriggerFunc func(t time.Time) time.Time

// Next implements [Trigger]: it returns f(t).
func (f TriggerFunc) Next(t time.Time) time.Time { return f(t) }

// ScheduleWithTrigger runs task at the times trigger computes (Spring's
// TaskScheduler.schedule(Runnable, Trigger); the JDK has no counterpart):
// first at trigger.Next(now), then each time at the trigger's next time
// after the previous run's due time. Times are wall-clock instants: each is
// turned into a delay from the clock's Now when the task is queued, and
// the task never starts before its time by the wall clock, even if the
// wall clock was stepped back while it waited (it waits for the rest). A
// wall clock stepped forward, or a machine that slept, makes a run late;
// what happens to the runs missed meanwhile is the missed-run policy's
// choice, CoalesceMissed by default (one run for all of them, then the
// trigger's next time), or CatchUpMissed with [WithMissedRuns].
//
// The task is periodic in every other respect: IsPeriodic is true,
// runs never overlap, a failed run stops it unless [ContinueOnError], the
// continue-existing-periodic shutdown policy applies, and Cancel, Remove,
// Queue, ShutdownNow, hooks and Stats treat it like a fixed-rate task. When
// Next returns the zero Time the task ends: its future is done, not
// canceled, and Wait returns nil. A Next that returns a time not after its
// argument, or panics, fails the task with an error wrapping
// ErrInvalidArgument or a *PanicError, logged at Error: a broken trigger
// never spins. If that happens on the first call, ScheduleWithTrigger
// returns the error and queues nothing; if the first call returns the zero
// Time, it returns a future that is already done. A nil task or trigger is
// ErrInvalidArgument.
func (s *Scheduler) ScheduleWithTrigger(task Task, trigger Trigger, opts ...TaskOption) (ScheduledFuture, error) {
	if task == nil {
		return nil, fmt.Errorf("%w: ScheduleWithTrigger: nil task", ErrInvalidArgument)
	}
	if trigger == nil || isNilFunc(trigger) {
		return nil, fmt.Errorf("%w: ScheduleWithTrigger: nil trigger", ErrInvalidArgument)
	}
	t := &futureTask{}
	if err := s.initTask(t, task, periodTrigger, kindTrigger, opts, nil); err != nil {
		return nil, err
	}
	t.ext.trigger = trigger
	wallNow := s.q.wallNow()
	first, err := s.nextTrigger(t, wallNow)
	if err != nil {
		s.logger.Error("scheduler: trigger failed; task not scheduled", "task", t.logName(), "error", err)
		return nil, fmt.Errorf("ScheduleWithTrigger: %w", err)
	}
	if first.IsZero() {
		t.complete(nil) // no run at all
		return t.face(), nil
	}
	t.ext.dueWall = first
	return s.delayedExecute(t, first.Sub(wallNow))
}

// isNilFunc reports whether trigger is a nil TriggerFunc.
func isNilFunc(trigger Trigger) bool {
	f, ok := trigger.(TriggerFunc)
	return ok && f == nil
}

// nextTrigger calls t's trigger for the first time after after, guarded: a
// panic becomes a *PanicError (logged), and a non-zero time not after after
// an error wrapping ErrInvalidArgument.
func (s *Scheduler) nextTrigger(t *futureTask, after time.Time) (time.Time, error) {
	var next time.Time
	if pe := s.guard("trigger", t, func() { next = t.ext.trigger.Next(after) }); pe != nil {
		return time.Time{}, pe
	}
	if !next.IsZero() && !next.After(after) {
		return time.Time{}, fmt.Errorf("%w: Trigger.Next(%v) returned %v, which is not after it",
			ErrInvalidArgument, after, next)
	}
	return next, nil
}

// nextTriggerTime returns the trigger's next time after this run's due
// time, for the re-queue. When there is none the task ends (done, not
// canceled); when the trigger fails the task fails with its error; either
// way ok is false.
func (s *Scheduler) nextTriggerTime(t *futureTask) (next time.Time, ok bool) {
	// ext.dueWall and ext.lookahead are written only by this worker while
	// the task runs.
	next, err := t.ext.lookahead.next, t.ext.lookahead.err
	if !t.ext.lookahead.ok {
		next, err = s.nextTrigger(t, t.ext.dueWall)
	}
	t.ext.lookahead = triggerLookahead{}
	switch {
	case err != nil:
		if t.complete(err) {
			s.logger.Error("scheduler: trigger task stopped: its trigger failed",
				"task", t.logName(), "error", err)
		}
		return time.Time{}, false
	case next.IsZero():
		t.complete(nil) // the trigger has no more runs: done, not canceled
		return time.Time{}, false
	}
	return next, true
}

// requeueIfEarly puts a trigger task that was taken before its wall-clock
// time back in the queue for the rest of the wait, and reports whether it
// did. The wait ran on the monotonic clock; if the wall clock was stepped
// back meanwhile (NTP), the run is early by the wall clock, and a run at
// 03:00 must not start at 02:59.
func (s *Scheduler) requeueIfEarly(t *futureTask) bool {
	// ext.dueWall and ext.offset are written under q.mu before the task
	// was taken, or by this worker since: no lock to read them, and none
	// at all on the common path. The readings taken here serve the whole
	// run: CoalesceMissed and the re-queue use them too, so a trigger run
	// reads the clock once.
	q := &s.q
	t.ext.clockMono, t.ext.clockWall = q.readClocks()
	start := t.ext.dueWall
	if t.ext.offset != 0 {
		start = start.Add(time.Duration(t.ext.offset))
	}
	early := start.Sub(t.ext.clockWall)
	if early <= 0 {
		return false
	}
	q.mu.Lock()
	if t.loadState() == stateNew && s.canRun(t) {
		t.when = q.triggerTimeLocked(t.ext.clockMono, int64(early))
		q.offerLocked(t)
		q.mu.Unlock()
		return true
	}
	q.mu.Unlock()
	t.cancelState() // canceled or shut down meanwhile, as in reExecutePeriodic
	return true
}

// wallClock is implemented by a Clock whose wall-clock reading can differ
// from the time its timers run on: the system clock's can, when NTP steps
// it, and so can a test clock that simulates that. Trigger times are
// wall-clock instants and are compared with WallNow; a Clock without the
// method is read with Now.
type wallClock interface {
	WallNow() time.Time
}

// wallNow returns the clock's wall-clock reading, for trigger times.
func (q *delayQueue) wallNow() time.Time {
	_, wall := q.readClocks()
	return wall
}

// readClocks returns the clock's monotonic reading (nanoseconds since
// q.origin, as now) and its wall-clock reading, taken together: one Now
// carries both, except for a Clock with its own WallNow. A trigger time is
// mapped onto the monotonic clock with such a pair: mono + (next - wall).
func (q *delayQueue) readClocks() (mono int64, wall time.Time) {
	now := q.clock.Now()
	mono = int64(now.Sub(q.origin))
	if w, ok := q.clock.(wallClock); ok {
		return mono, w.WallNow()
	}
	// Round(0) drops the monotonic reading, so that Sub and Before
	// against a trigger time compare wall readings.
	return mono, now.Round(0)
}

// triggerLookahead is the trigger's next time after a run's due time, found
// by CoalesceMissed before the run and kept for the re-queue after it.
type triggerLookahead struct {
	next time.Time
	err  error
	ok   bool
}
