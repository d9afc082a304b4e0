package scheduler

import "sync"

// delayQueue is the blocking delay queue (JDK DelayedWorkQueue): a heap of
// tasks ordered by trigger time, and the bookkeeping of the workers that
// block on it. Workers take the head once it is due; how they wait for that
// is in leader.go.
//
// One mutex guards the queue and the pool state of the Scheduler (run
// state, worker set, counts): a submission checks the run state and queues
// under one lock, so it cannot race with Shutdown (the JDK needs a re-check
// for that, see delayedExecute), and a worker's "finish the last task, take
// the next" is one critical section.
type delayQueue struct {
	mu sync.Mutex // guards the fields below and the Scheduler fields marked "q.mu"

	heap taskHeap

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

func (q *delayQueue) init() {
	q.followers.L = &q.mu
}

// offerLocked queues t, and if t became the head, wakes one waiter to take
// over the timed wait for it (JDK offer).
func (q *delayQueue) offerLocked(t *task) {
	q.heap.push(t)
	if q.heap.peek() == t {
		q.newHeadLocked()
	}
}

// pollLocked removes and returns the head (JDK finishPoll), and hands the
// lead on if others may be needed for what remains (JDK take's finally).
func (q *delayQueue) pollLocked() *task {
	t := q.heap.popHead()
	q.handOffLocked()
	return t
}

// removeLocked removes t if it is queued in this heap, in O(log n) through
// its heap index (JDK remove + indexOf's sanity check). It reports whether t
// was removed.
func (q *delayQueue) removeLocked(t *task) bool {
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
func (q *delayQueue) drainLocked() []*task {
	ts := q.heap.drain()
	q.notifyIdleLocked()
	return ts
}

// filterLocked removes every task for which drop returns true (JDK purge and
// onShutdown, which remove one by one; this rebuilds the heap once).
func (q *delayQueue) filterLocked(drop func(*task) bool) {
	q.heap.filter(drop)
	q.notifyIdleLocked()
}

// snapshotLocked returns the queued tasks in heap order.
func (q *delayQueue) snapshotLocked() []heapEntry {
	return append([]heapEntry(nil), q.heap.a...)
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
