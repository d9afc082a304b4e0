package scheduler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Kinds of task and when each runs next: the one place that knows a
// task's kind (one-shot, fixed rate, fixed delay, trigger) and the rules
// that place its runs in time (fixed rate, fixed delay, the trigger's next
// time and its wall-clock guard, missed runs, jitter). A new kind of
// schedule is a constant and its cases here, plus its scheduling method in
// scheduler.go.

// TaskKind says how a task is scheduled: which scheduling call made it.
// It decides when the task runs next and the defaults of its task options;
// [Scheduler.PeekQueue] reports it. The JDK tells only periodic from not
// (isPeriodic).
type TaskKind uint8

const (
	// KindOneShot runs once: Schedule, Submit, Execute and the callables.
	KindOneShot TaskKind = iota
	// KindFixedRate runs at initialDelay + k*period: ScheduleAtFixedRate.
	KindFixedRate
	// KindFixedDelay runs a delay after each run ends:
	// ScheduleWithFixedDelay.
	KindFixedDelay
	// KindTrigger runs at its Trigger's times: ScheduleWithTrigger.
	KindTrigger
)

// String names the kind as the documentation does: "one-shot", "fixed
// rate", "fixed delay", "trigger".
func (k TaskKind) String() string {
	switch k {
	case KindOneShot:
		return "one-shot"
	case KindFixedRate:
		return "fixed rate"
	case KindFixedDelay:
		return "fixed delay"
	case KindTrigger:
		return "trigger"
	}
	return fmt.Sprintf("TaskKind(%d)", uint8(k))
}

// periodic reports whether tasks of kind k run more than once (JDK
// isPeriodic).
func (k TaskKind) periodic() bool { return k != KindOneShot }

// coalescesMissed reports whether a task of kind k merges missed runs,
// given its options: fixed-rate tasks catch up unless told to coalesce,
// trigger tasks coalesce unless told to catch up, and the other kinds
// have no missed runs.
func (k TaskKind) coalescesMissed(tc *taskConfig) bool {
	switch k {
	case KindFixedRate:
		return tc.missedSet && tc.missed == CoalesceMissed
	case KindTrigger:
		return !tc.missedSet || tc.missed == CoalesceMissed
	}
	return false
}

// A task stores its kind in its period field (in taskAux), the JDK's
// encoding: 0 for a one-shot task, the period for a fixed-rate task, minus
// the delay for a fixed-delay task, periodTrigger for a trigger task. A
// one-shot task without options has no aux, and so no period field: it
// reads as 0. encodePeriod and period are its only writer and reader.

// periodTrigger is the period field of a trigger task: Trigger.Next, not a
// period, says when it runs next. No fixed delay is this long.
const periodTrigger = math.MinInt64

// encodePeriod returns the period field of a task of kind k; span is the
// period of a fixed-rate task and the delay of a fixed-delay task, and is
// not used for the other kinds.
func encodePeriod(k TaskKind, span time.Duration) int64 {
	switch k {
	case KindFixedRate:
		return int64(span)
	case KindFixedDelay:
		return -int64(span)
	case KindTrigger:
		return periodTrigger
	}
	return 0
}

// period returns t's period field: 0 when t has no aux.
func (t *futureTask) period() int64 {
	if a := t.aux.Load(); a != nil {
		return a.period
	}
	return 0
}

// kind returns t's kind, decoded from its period field.
func (t *futureTask) kind() TaskKind {
	switch p := t.period(); {
	case p == 0:
		return KindOneShot
	case p > 0:
		return KindFixedRate
	case p == periodTrigger:
		return KindTrigger
	}
	return KindFixedDelay
}

// setWhenLocked sets the trigger time of t's next run: it is the only
// writer of t.when. The heap keeps a copy of when and seq beside each queued
// task (heapEntry), so that a sift compares without loading the tasks; so
// t.when must never change while t is queued. Every caller holds q.mu and
// has t out of the heap: not yet queued, or taken to run.
func (t *futureTask) setWhenLocked(when int64) { t.when = when }

// Fixed rate and fixed delay, and jitter.

// nextRunTimeLocked returns the trigger time of t's next run (JDK
// setNextRunTime): for a trigger task next, the trigger's time, mapped onto
// the monotonic clock with the pair of readings taken as the run began
// (requeueIfEarly); for a fixed-rate task the previous due time plus the
// period, drift-free, so a late task catches up; for a fixed-delay task
// the delay from now. With jitter the nominal due time keeps the phase and
// only the start moves.
func (s *Scheduler) nextRunTimeLocked(t *futureTask, next time.Time) int64 {
	q := &s.q
	var due int64
	switch t.kind() {
	case KindTrigger:
		ext := t.ext()
		ext.dueWall = next
		return q.triggerTimeLocked(ext.clockMono, t.withJitter(int64(next.Sub(ext.clockWall))))
	case KindFixedRate:
		due = t.due() + t.period()
	default: // fixed delay; a one-shot task is never re-queued
		due = q.triggerTimeLocked(q.now(), -t.period())
	}
	if ext := t.ext(); ext != nil && ext.jitter != 0 {
		return q.triggerTimeLocked(due, t.withJitter(0))
	}
	return due
}

// due returns the nominal due time of t's next run, before its jitter:
// when less this run's offset. q.mu.
func (t *futureTask) due() int64 {
	if ext := t.ext(); ext != nil {
		return t.when - ext.offset
	}
	return t.when
}

// withJitter returns delay (clamped at 0, as the JDK's triggerTime does)
// plus a fresh random offset in [0, jitter) for the run being queued, and
// records the offset; it saturates at MaxInt64. q.mu, as it writes the
// offset. Without WithJitter it returns delay as it is.
func (t *futureTask) withJitter(delay int64) int64 {
	ext := t.ext()
	if ext == nil || ext.jitter == 0 {
		return delay
	}
	delay = max(delay, 0)
	off := rand.Int64N(ext.jitter)
	ext.offset = off
	if d := delay + off; d >= delay {
		return d
	}
	return math.MaxInt64
}

// Missed runs: CoalesceMissed merges the runs of a fixed-rate or trigger
// task that are already due when a worker takes it into one run (Quartz's
// misfire "fire once now"). CatchUpMissed needs nothing here: the re-queue
// after each run, due at the next time even if that is past, runs the
// missed ones back to back (JDK fixed rate).

// coalesceMissed moves the run being started to the latest of t's due
// times that have already come, so that it stands for all of them; the
// next run is then the first one after that. A merged run has no jitter: it
// starts at once.
func (s *Scheduler) coalesceMissed(t *futureTask, rec *runRecord) {
	switch t.kind() {
	case KindTrigger:
		s.coalesceTrigger(t, rec)
		return
	case KindFixedRate:
	default:
		return // nothing to merge
	}
	period := t.period()
	k := (rec.started - rec.due) / period
	if k <= 0 {
		return
	}
	q := &s.q
	q.mu.Lock()
	rec.due += k * period
	rec.jitter = 0
	t.ext().offset = 0
	t.setWhenLocked(rec.due)
	q.mu.Unlock()
}

// coalesceTrigger is coalesceMissed for a trigger task: it walks the
// trigger from this run's due time while the next time has come by the
// wall clock. The first time it finds still ahead (or the end, or the
// trigger's failure) is kept for the re-queue after the run, so a run
// calls Next once, as under CatchUpMissed.
func (s *Scheduler) coalesceTrigger(t *futureTask, rec *runRecord) {
	ext := t.ext()
	wallNow := ext.clockWall // read by requeueIfEarly as this run began
	due := rec.dueWall
	next, err := s.nextTrigger(t, due)
	for err == nil && !next.IsZero() && !next.After(wallNow) {
		due = next
		next, err = s.nextTrigger(t, due)
	}
	// Read back only by this worker, in reExecuteTrigger after the run.
	ext.lookahead = triggerLookahead{next: next, err: err, ok: true}
	if due.Equal(rec.dueWall) {
		return
	}
	q := &s.q
	q.mu.Lock()
	rec.dueWall = due
	rec.jitter = 0
	ext.dueWall = due
	ext.offset = 0
	q.mu.Unlock()
}

// Triggers: the trigger's next time, and how trigger times, which are
// wall-clock instants, are waited for on the monotonic clock.

// nextTrigger calls t's trigger for the first time after after, guarded: a
// panic becomes a *PanicError (logged), and a non-zero time not after after
// an error wrapping ErrInvalidArgument.
func (s *Scheduler) nextTrigger(t *futureTask, after time.Time) (time.Time, error) {
	var next time.Time
	if pe := s.guard("trigger", t, func() { next = t.ext().trigger.Next(after) }); pe != nil {
		return time.Time{}, pe
	}
	if !next.IsZero() && !next.After(after) {
		return time.Time{}, invalid("Trigger.Next", "Next(%v) returned %v, which is not after it", after, next)
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
	ext := t.ext()
	next, err := ext.lookahead.next, ext.lookahead.err
	if !ext.lookahead.ok {
		next, err = s.nextTrigger(t, ext.dueWall)
	}
	ext.lookahead = triggerLookahead{}
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
	ext := t.ext()
	ext.clockMono, ext.clockWall = q.readClocks()
	start := ext.dueWall
	if ext.offset != 0 {
		start = start.Add(time.Duration(ext.offset))
	}
	early := start.Sub(ext.clockWall)
	if early <= 0 {
		return false
	}
	q.mu.Lock()
	if t.loadState() == stateNew && s.canRun(t) {
		t.setWhenLocked(q.triggerTimeLocked(ext.clockMono, int64(early)))
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
