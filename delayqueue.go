package scheduler

import (
	"math"
	"sync"
	"time"
)

// delayQueue is the blocking delay queue (JDK DelayedWorkQueue): the heap of
// tasks ordered by trigger time, the clock those times are read on, and the
// bookkeeping of the workers that block on it. This file holds the queue's
// operations (offer, poll, remove, drain, filter) and its time; leader.go
// holds take, the leader-follower wait that workers block in.
//
// One mutex guards the queue and the pool state of the Scheduler (run
// state, worker set, counts): a submission checks the run state and queues
// under one lock, so it cannot race with Shutdown (the JDK needs a re-check
// for that, see delayedExecute), and a worker's "finish the last task, take
// the next" is one critical section.
type delayQueue struct {
	mu sync.Mutex // guards the fields below and the Scheduler fields marked "q.mu"

	heap taskHeap

	// Set by init, then read-only.
	clock       Clock
	systemClock bool      // clock is SystemClock: read it through time.Since, arm timers without a second reading
	origin      time.Time // clock reading that trigger times count from
	precise     bool      // WithPreciseTiming (precise.go); set by New

	// preciseOff is set, for good, when a fine wait found that the clock
	// did not move across a real sleep: a synctest bubble (precise.go).
	preciseOff bool
	// fine is the worker in the fine wait for the head, or nil (precise.go).
	// It is not the leader: beside it, one worker may lead.
	fine *worker
	// margin is how long before the head is due the fine wait begins:
	// preciseMargin, set by init; tests lengthen it.
	margin int64
	// onFineWait, if set (tests only), is called under mu as a fine wait
	// begins.
	onFineWait func()

	// leader is the one worker in a timed wait for the head, or nil. A
	// worker that finds a leader waits untimed in followers.
	leader    *worker
	followers sync.Cond // L is &mu

	// parked counts the workers blocked in take (leader and followers).
	parked int

	// idle is closed, and set to nil, when something happens that may
	// make the scheduler idle; AwaitIdle waits on it. nil while nobody
	// waits, so the hot path only compares a pointer.
	idle chan struct{}
}

func (q *delayQueue) init(clock Clock) {
	q.followers.L = &q.mu
	q.clock = clock
	_, q.systemClock = clock.(systemClock)
	q.origin = clock.Now()
	q.margin = int64(preciseMargin)
}

// now returns the clock's time in nanoseconds since q.origin: the unit of
// every trigger time (JDK System.nanoTime).
func (q *delayQueue) now() int64 {
	if q.systemClock {
		// time.Since reads only the monotonic clock when origin has a
		// monotonic reading: one vDSO call instead of Now's two.
		return int64(time.Since(q.origin))
	}
	return int64(q.clock.Now().Sub(q.origin))
}

// maxDelay is the JDK's Long.MAX_VALUE >> 1: delays from here on go through
// overflowFree.
const maxDelay = math.MaxInt64 >> 1

// triggerTimeLocked returns the trigger time delay after now (JDK
// triggerTime): a negative delay means now, and a huge one is kept within
// MaxInt64 of the head's so that comparing by subtraction cannot overflow
// (JDK overflowFree).
func (q *delayQueue) triggerTimeLocked(now, delay int64) int64 {
	if delay < 0 {
		delay = 0
	}
	if delay >= maxDelay {
		if head := q.heap.peek(); head != nil {
			headDelay := head.when - now
			if headDelay < 0 && delay-headDelay < 0 {
				delay = math.MaxInt64 + headDelay
			}
		}
	}
	return now + delay
}

// lenLocked returns the number of queued tasks, canceled ones included.
func (q *delayQueue) lenLocked() int { return q.heap.len() }

// offerLocked queues t, and if t became the head, wakes one waiter to take
// over the timed wait for it (JDK offer).
func (q *delayQueue) offerLocked(t *futureTask) {
	q.heap.push(t)
	if q.heap.peek() == t {
		q.newHeadLocked()
	}
}

// pollLocked removes and returns the head (JDK finishPoll), and hands the
// lead on if others may be needed for what remains (JDK take's finally).
// The heap must not be empty.
func (q *delayQueue) pollLocked() *futureTask {
	t := q.heap.popHead()
	q.handOffLocked()
	return t
}

// removeLocked removes t if it is queued in this heap, in O(log n) through
// its heap index (JDK remove + indexOf's sanity check). It reports whether t
// was removed.
func (q *delayQueue) removeLocked(t *futureTask) bool {
	i := int(t.heapIndex)
	if i < 0 || i >= q.heap.len() || q.heap.at(i) != t {
		return false
	}
	q.heap.removeAt(i)
	q.notifyIdleLocked()
	return true
}

// drainLocked removes every queued task and returns them in due order (JDK
// drainQueue; the JDK returns the not-yet-due ones in heap order).
func (q *delayQueue) drainLocked() []*futureTask {
	ts := q.heap.drain()
	q.notifyIdleLocked()
	return ts
}

// filterLocked removes every task for which drop returns true (JDK purge and
// onShutdown, which remove one by one; this rebuilds the heap once).
func (q *delayQueue) filterLocked(drop func(*futureTask) bool) {
	q.heap.filter(drop)
	q.notifyIdleLocked()
}

// snapshotLocked returns the queued tasks in heap order.
func (q *delayQueue) snapshotLocked() []heapEntry {
	return append([]heapEntry(nil), q.heap.a...)
}
