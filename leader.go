package scheduler

import "time"

// The leader-follower wait: take, and every wake-up of a worker blocked in it
// (JDK DelayedWorkQueue.take). It reads top to bottom: take, the two
// waits, the events that end them, and the check AwaitIdle makes on them.
//
// Workers with nothing due block in one of two ways:
//
//   - The leader, at most one worker, waits for the head's trigger time: it
//     blocks in a select on its own reusable Timer and its own wake channel.
//   - Every other worker is a follower and waits untimed on the followers
//     sync.Cond.
//   - With WithPreciseTiming, the leader's timer fires a margin before the
//     head is due, and the worker finishes the wait in a fine wait, one
//     high-resolution wait per head (precise.go). That worker, q.fine, is
//     not the leader: beside it one worker leads, its timer armed a while
//     after the head, for when the fine waiter is busy with a long task; a
//     new head due sooner than the fine waiter's wait ends wakes the fine
//     waiter instead of the leader.
//
// Go's sync.Cond has no timed wait, and bridging one to a deadline costs a
// goroutine or a broadcast per wake-up. Splitting the roles gives each wait
// the primitive that fits it: followers never need a timeout, and the leader
// never needs to be found among followers, since the queue knows who it is
// (q.leader) and wakes it through its channel. Both waits are durably
// blocking in a testing/synctest bubble (a channel select with a runtime
// timer, and Cond.Wait); no wait holds the mutex and none polls.
//
// The rules that keep it free of lost wake-ups and herds, each an event that
// wakes exactly one goroutine:
//
//   - A new head (offer) may be due sooner than the leader's timer: the queue
//     clears q.leader and wakes the leader through its channel; with no
//     leader it signals one follower, which becomes the leader. q.leader is
//     cleared before the wake, under the mutex, so the woken worker and any
//     worker arriving meanwhile compete for the lead afresh rather than both
//     believing the old leader still waits.
//   - A worker that takes a task, or leaves, while no one leads and tasks
//     remain signals one follower to take the lead before it runs its task
//     (JDK take's finally). Without that hand-off the remaining head would
//     wait until some busy worker came back.
//   - The leader clears q.leader itself when it wakes, if it still holds it.

// takeLocked returns the head if it is due (JDK take). Otherwise it waits
// once, as the leader until the head is due or as a follower until
// signaled, and returns nil: the caller re-checks whether the worker must
// exit, then calls again. (The JDK's take loops inside and learns of a
// shutdown by an interrupt; here every wake-up returns to the caller's
// check, which costs a few comparisons.)
func (q *delayQueue) takeLocked(w *worker) *futureTask {
	head := q.heap.peek()
	if head == nil && q.wheelLenLocked() == 0 {
		q.followLocked()
		return nil
	}
	now := q.now()
	if q.wheel != nil {
		q.advanceWheelLocked(now) // every task due by now is in the heap
		head = q.heap.peek()
	}
	if head != nil && head.when-now <= 0 {
		w.taken = now // the run's Started (RunInfo), at no extra clock read
		return q.pollLocked()
	}
	// The wait is for the head, or for the timing wheel's earliest task
	// if that comes first: the wheel then moves it into the heap.
	when, _ := q.wakeTimeLocked(head)
	d := when - now
	switch {
	case head != nil && when == head.when && q.fine == nil && d <= q.margin && q.preciseLocked():
		q.fineWaitLocked(w)
	case q.leader != nil:
		q.followLocked()
	default:
		q.leadLocked(w, when, now)
	}
	return nil
}

// followLocked waits untimed until signaled.
func (q *delayQueue) followLocked() {
	q.parked++
	q.notifyIdleLocked()
	q.followers.Wait()
	q.parked--
}

// leadLocked makes w the leader and waits until the head, due at when, is
// due or w is woken. now is the clock reading the caller found the head not
// yet due with. With precise timing the wait ends q.margin early, and
// the caller's next take finishes it in the fine wait (precise.go); while
// a fine waiter waits for the head, the wait ends preciseWatchdog late.
func (q *delayQueue) leadLocked(w *worker, when, now int64) {
	q.leader = w
	if q.precise && q.preciseLocked() {
		if when-now > q.margin {
			when -= q.margin
		} else if q.fine != nil {
			when += int64(preciseWatchdog)
		}
	}
	if !q.armLocked(w, when, now) {
		q.leader = nil
		return
	}
	w.deadline = when
	q.parked++
	q.notifyIdleLocked()
	q.mu.Unlock()
	select {
	case <-w.timer.C():
	case <-w.wake:
		w.timer.Stop()
	}
	q.mu.Lock()
	q.parked--
	if q.leader == w {
		q.leader = nil
	}
	// A wake sent while the timer fired is stale now that we lead no
	// more; senders need q.leader == w, so none can follow this drain.
	select {
	case <-w.wake:
	default:
	}
}

// armLocked arms w's timer to fire at the trigger time when; now is the
// clock reading the caller found the head not yet due with. It reports
// false, with the timer stopped, when the head turned out to be due.
//
// A fake clock can be advanced between the reading of now and the arming;
// a timer armed for the delay when-now would then fire past the head, and a
// test that advances exactly to the head would not fire it. So:
//
//   - A timer that can be armed for an instant (it has ResetAt, as
//     schedulertest's timers do) is armed for when itself: exact whatever
//     the clock did meanwhile.
//   - Any other timer of a clock other than the system clock is armed for
//     the delay, the clock is read once more, and if it moved the timer is
//     re-armed for what is left. Only once: a clock that reads real time
//     (with an offset, wrapped, truncated) always moves, and waiting for it
//     to stand still would hold the queue's lock until the head is due. A
//     fake clock moved again within that window leaves the timer late;
//     AwaitIdle wakes such a leader once its head is due (idle.go).
//   - On the system clock a timer a few nanoseconds late is harmless: no
//     second reading.
func (q *delayQueue) armLocked(w *worker, when, now int64) bool {
	delay := time.Duration(when - now)
	if w.timer == nil {
		w.timer = q.clock.NewTimer(delay)
		if q.systemClock {
			return true
		}
	} else if q.systemClock {
		w.timer.Reset(delay)
		return true
	}
	if at, ok := w.timer.(instantTimer); ok {
		at.ResetAt(q.origin.Add(time.Duration(when)))
		return true
	}
	w.timer.Reset(delay)
	again := q.now()
	if again == now {
		return true
	}
	if when-again <= 0 {
		w.timer.Stop()
		return false
	}
	w.timer.Reset(time.Duration(when - again))
	return true
}

// newHeadLocked wakes one waiter to wait for a new, earlier head: the fine
// waiter if it waits past it, else the leader, else a follower.
func (q *delayQueue) newHeadLocked() {
	if h := q.heap.peek(); h != nil && q.sleeper.until != 0 && h.when-q.sleeper.until < 0 {
		// The fine waiter sleeps past the new head: it takes it.
		q.wakeFineLocked()
		return
	}
	if l := q.leader; l != nil {
		q.leader = nil
		select {
		case l.wake <- struct{}{}:
		default: // already woken
		}
		return
	}
	q.followers.Signal()
}

// handOffLocked signals a follower to lead when nobody leads and tasks
// remain (JDK take's finally block).
func (q *delayQueue) handOffLocked() {
	if q.leader == nil && q.lenLocked() > 0 {
		q.followers.Signal()
	}
}

// wakeAllLocked wakes every waiting worker, for events that concern all of
// them: shutdown, a smaller pool (JDK interruptIdleWorkers).
func (q *delayQueue) wakeAllLocked() {
	q.followers.Broadcast()
	q.wakeFineLocked()
	if q.leader != nil {
		q.newHeadLocked()
	}
}

// wakeOneLocked wakes one waiting worker, preferring the leader, so that it
// re-checks whether it should exit (JDK interruptIdleWorkers(ONLY_ONE)).
func (q *delayQueue) wakeOneLocked() { q.newHeadLocked() }

// settledLocked reports whether the waits are settled for the head: no
// head, or a head not yet due (and a timing wheel that need not advance
// yet) with a leader whose timer is armed for a time still ahead (the
// head's time or the wheel's, or a margin before it with precise timing),
// so that a later Advance of the clock fires it. A worker in the fine wait
// is not parked, so the scheduler is not idle while it waits. Counting
// parked workers is not enough for AwaitIdle: a worker counts as parked
// until it re-takes the lock, so a leader whose timer fired, or that a new
// head woke, still counts while nobody waits for the head.
func (q *delayQueue) settledLocked() bool {
	head := q.heap.peek()
	if head == nil && q.wheelLenLocked() == 0 {
		return true
	}
	now := q.now()
	if when, _ := q.wakeTimeLocked(head); when-now <= 0 {
		return false // the head is due, or a task in the timing wheel is
	}
	l := q.leader
	return l != nil && l.deadline-now > 0
}

// wakeLateLeaderLocked wakes the leader if the head is due by the clock
// while the leader still waits: its timer was armed late, by a fake clock
// moved again while it armed (armLocked). AwaitIdle calls it, so that
// Advance(d); AwaitIdle(ctx) is exact on any clock. A leader whose timer
// has just fired is woken twice, which is harmless: the second wake is
// drained.
func (q *delayQueue) wakeLateLeaderLocked() {
	if q.leader == nil {
		return
	}
	if when, ok := q.wakeTimeLocked(q.heap.peek()); ok && when-q.now() <= 0 {
		q.newHeadLocked()
	}
}

// notifyIdleLocked wakes the AwaitIdle callers, if any, to re-check.
func (q *delayQueue) notifyIdleLocked() {
	if q.idle != nil {
		close(q.idle)
		q.idle = nil
	}
}

// idleChanLocked returns the channel that notifyIdleLocked closes next.
func (q *delayQueue) idleChanLocked() <-chan struct{} {
	if q.idle == nil {
		q.idle = make(chan struct{})
	}
	return q.idle
}
