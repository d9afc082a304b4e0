package scheduler

import "time"

// Calendar schedules: Trigger, TriggerFunc and ScheduleWithTrigger. How
// trigger times, which are wall-clock instants, are waited for on the
// monotonic clock is in nextrun.go, with the other next-run rules.

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
		return nil, invalid("ScheduleWithTrigger", "nil task")
	}
	if trigger == nil || isNilFunc(trigger) {
		return nil, invalid("ScheduleWithTrigger", "nil trigger")
	}
	t := &futureTask{}
	if err := s.initTask(t, task, KindTrigger, 0, opts, nil); err != nil {
		return nil, err
	}
	t.ext().trigger = trigger
	wallNow := s.q.wallNow()
	first, err := s.nextTrigger(t, wallNow)
	if err != nil {
		s.logger.Error("scheduler: trigger failed; task not scheduled", "task", t.logName(), "error", err)
		return nil, &opError{what: "ScheduleWithTrigger", why: "the trigger failed", cause: err}
	}
	if first.IsZero() {
		t.complete(nil) // no run at all
		return t.face(), nil
	}
	t.ext().dueWall = first
	return s.delayedExecute(t, first.Sub(wallNow))
}

// isNilFunc reports whether trigger is a nil TriggerFunc.
func isNilFunc(trigger Trigger) bool {
	f, ok := trigger.(TriggerFunc)
	return ok && f == nil
}
