package scheduler

// The leader-follower wait (JDK DelayedWorkQueue.take, R-20).
//
// Workers with nothing due block in one of two ways:
//
//   - The leader, at most one worker, waits for the head's trigger time: it
//     blocks in a select on its own reusable Timer and its own wake channel.
//   - Every other worker is a follower and waits untimed on the followers
//     sync.Cond.
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

// worker is one pooled goroutine (JDK ThreadPoolExecutor.Worker).
type worker struct {
	// timer and wake are used only while this worker is the leader. timer
	// is made on the worker's first timed wait and reused after.
	timer Timer
	wake  chan struct{} // capacity 1; sent to under q.mu, only while q.leader == this worker
	// deadline is the trigger time the timer is armed for while this
	// worker leads; q.mu. AwaitIdle reads it to know the lead is armed.
	deadline int64

	// current is the task this worker is running, for ShutdownNow's
	// interrupt and for the accounting done when it comes back; q.mu.
	current *task
	// ranOutcome says whether current counted as a run; written by the
	// worker itself, read by it under q.mu in getTask.
	ranOutcome bool
}

// newHeadLocked wakes one waiter to wait for a new, earlier head.
func (q *delayQueue) newHeadLocked() {
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
	if q.leader == nil && q.heap.len() > 0 {
		q.followers.Signal()
	}
}

// wakeAllLocked wakes every waiting worker, for events that concern all of
// them: shutdown, a smaller pool, termination becoming possible.
func (q *delayQueue) wakeAllLocked() {
	q.followers.Broadcast()
	if q.leader != nil {
		q.newHeadLocked()
	}
}

// wakeOneLocked wakes one waiting worker, preferring the leader, so that it
// re-checks whether it should exit (JDK interruptIdleWorkers(ONLY_ONE)).
func (q *delayQueue) wakeOneLocked() {
	q.newHeadLocked()
}

// followLocked waits untimed until signaled. The caller re-checks the queue.
func (q *delayQueue) followLocked() {
	q.parked++
	q.notifyIdleLocked()
	q.followers.Wait()
	q.parked--
}

// leadLocked makes w the leader and waits until the head, due at when, is
// due or w is woken; the caller re-checks the queue. now is the clock
// reading the caller found the head not yet due with.
func (s *Scheduler) leadLocked(w *worker, when, now int64) {
	q := &s.q
	q.leader = w
	delay := when - now
	if w.timer == nil {
		w.timer = s.clock.NewTimer(delayDuration(delay))
	} else {
		w.timer.Reset(delayDuration(delay))
	}
	// A fake clock can be advanced between our reading of now and the
	// Reset above; the timer would then be armed relative to the later
	// time, past the head, and a test that advances exactly to the head
	// would not fire it. Re-read the clock after arming until it
	// did not move. The system clock always moves a little, and a timer a
	// few nanoseconds late is harmless there, so it skips this.
	if !s.systemClock {
		for {
			again := s.now()
			if again == now {
				break
			}
			now = again
			if when-now <= 0 {
				w.timer.Stop()
				q.leader = nil
				return
			}
			w.timer.Reset(delayDuration(when - now))
		}
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
