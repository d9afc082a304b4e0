package scheduler

import (
	"math"
	"sync"
	"time"
)

// delayQueue is the blocking delay queue (JDK DelayedWorkQueue): the heap of
// tasks ordered by trigger time, the clock those times are read on, and the
// bookkeeping of the workers that block on it. This file holds the queue's
// operations (offer, poll, remove, drain, filter), its time, and below them
// the heap itself; leader.go
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
	// wheel holds the tasks due beyond its horizon (wheel.go); nil
	// without WithTimingWheel.
	wheel *timingWheel

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
	// sleeper is the fine waiter's sleep: its deadline, its futex word
	// (precise.go).
	sleeper fineSleeper
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

func (q *delayQueue) init(clock Clock, wheel bool) {
	q.followers.L = &q.mu
	q.clock = clock
	_, q.systemClock = clock.(systemClock)
	q.origin = clock.Now()
	q.margin = int64(preciseMargin)
	if wheel {
		q.wheel = newTimingWheel(defaultWheelTickShift, defaultWheelHorizon)
	}
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
		if head := q.headLocked(); head != nil {
			headDelay := head.when - now
			if headDelay < 0 && delay-headDelay < 0 {
				delay = math.MaxInt64 + headDelay
			}
		}
	}
	return now + delay
}

// lenLocked returns the number of queued tasks, canceled ones included.
func (q *delayQueue) lenLocked() int { return q.heap.len() + q.wheelLenLocked() }

// offerLocked queues t, and if t became the head, wakes one waiter to take
// over the timed wait for it (JDK offer). A task due beyond the timing
// wheel's horizon waits in the wheel (wheel.go).
func (q *delayQueue) offerLocked(t *futureTask) {
	if q.offerWheelLocked(t) {
		return
	}
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

// removeLocked removes t if it is queued, in O(log n) through its heap
// index (JDK remove + indexOf's sanity check), or in O(1) from the timing
// wheel. It reports whether t was removed.
func (q *delayQueue) removeLocked(t *futureTask) bool {
	if q.removeWheelLocked(t) {
		q.notifyIdleLocked()
		return true
	}
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
	q.flushWheelLocked()
	ts := q.heap.drain()
	q.notifyIdleLocked()
	return ts
}

// filterLocked removes every task for which drop returns true (JDK purge and
// onShutdown, which remove one by one; this rebuilds the heap once).
func (q *delayQueue) filterLocked(drop func(*futureTask) bool) {
	q.filterWheelLocked(drop)
	q.heap.filter(drop)
	q.notifyIdleLocked()
}

// snapshotLocked returns the queued tasks in no particular order: the
// heap's in heap order, then the wheel's.
func (q *delayQueue) snapshotLocked() []heapEntry {
	es := make([]heapEntry, 0, q.lenLocked())
	es = append(es, q.heap.a...)
	if q.wheel != nil {
		q.wheel.eachWheelTask(func(t *futureTask) {
			es = append(es, heapEntry{when: t.when, seq: t.seq, t: t})
		})
	}
	return es
}

// smallestLocked returns the up to k earliest-due queued tasks in due order:
// the heap's walked best first, merged with the wheel's earliest slots.
func (q *delayQueue) smallestLocked(k int) []*futureTask {
	q.cascadeForViewLocked(k)
	fromHeap := q.heap.smallest(k)
	fromWheel := q.wheel.smallest(k)
	out := make([]*futureTask, 0, min(k, len(fromHeap)+len(fromWheel)))
	for len(out) < k && (len(fromHeap) > 0 || len(fromWheel) > 0) {
		if len(fromWheel) == 0 || (len(fromHeap) > 0 && heapFirst(fromHeap[0], &fromWheel[0])) {
			out = append(out, fromHeap[0])
			fromHeap = fromHeap[1:]
			continue
		}
		out = append(out, fromWheel[0].t)
		fromWheel = fromWheel[1:]
	}
	return out
}

// heapFirst reports whether queued task t is due before entry e.
func heapFirst(t *futureTask, e *heapEntry) bool {
	x := heapEntry{when: t.when, seq: t.seq}
	return x.less(e)
}

// findSeqLocked returns the queued task with sequence number seq, or nil.
func (q *delayQueue) findSeqLocked(seq uint64) *futureTask {
	if t := q.heap.findSeq(seq); t != nil {
		return t
	}
	var found *futureTask
	if q.wheel != nil {
		q.wheel.eachWheelTask(func(t *futureTask) {
			if t.seq == seq {
				found = t
			}
		})
	}
	return found
}

// The heap: the binary min-heap of the delay queue (JDK DelayedWorkQueue's
// array and its siftUp/siftDown), ordered by (trigger time, sequence), each
// task keeping its own index so it leaves in O(log n).

// heapEntry is one slot of the heap. The ordering key (when, seq) is kept
// inline so that sifts compare without loading the task: a sift touches only
// the contiguous slice, which matters at a million pending tasks
// (BenchmarkSchedule/pending=1M).
//
// The invariant: while t is queued, when and seq equal t.when and t.seq.
// push copies them in; t.seq is set once, before the task is first queued,
// and t.when only by setWhenLocked (nextrun.go), never while t is queued.
type heapEntry struct {
	when int64  // trigger time: clock nanoseconds since the scheduler's origin
	seq  uint64 // submission order, the tie-break (JDK sequenceNumber)
	t    *futureTask
}

// less orders entries by trigger time, then by sequence number: a total
// order, so tasks due at the same instant run in submission order.
// Times are compared by subtraction, as the JDK does, so that trigger times
// which wrapped past math.MaxInt64 still order correctly; overflowFree keeps
// every queued time within MaxInt64 of the others.
func (x *heapEntry) less(y *heapEntry) bool {
	if d := x.when - y.when; d != 0 {
		return d < 0
	}
	return x.seq < y.seq
}

// initialHeapCapacity is the JDK DelayedWorkQueue's INITIAL_CAPACITY.
const initialHeapCapacity = 16

// taskHeap is a binary min-heap of tasks that keeps each task's heapIndex
// current, so that a task can be removed in O(log n) without a search (JDK
// DelayedWorkQueue). Every write of a slot goes through set, which updates
// the index; a task that leaves the heap gets index -1.
//
// taskHeap is not safe for concurrent use: the delay queue's mutex guards it.
type taskHeap struct {
	a []heapEntry
}

// len returns the number of queued tasks.
func (h *taskHeap) len() int { return len(h.a) }

// peek returns the head (the earliest-due task) or nil. O(1).
func (h *taskHeap) peek() *futureTask {
	if len(h.a) == 0 {
		return nil
	}
	return h.a[0].t
}

// at returns the task in slot i.
func (h *taskHeap) at(i int) *futureTask { return h.a[i].t }

// set writes e into slot k and records k as its task's heap index.
func (h *taskHeap) set(k int, e heapEntry) {
	h.a[k] = e
	e.t.heapIndex = int32(k)
}

// push adds t, keyed by its current trigger time and sequence number.
// O(log n); the array grows by 50% when full (JDK grow).
func (h *taskHeap) push(t *futureTask) {
	n := len(h.a)
	if n == cap(h.a) {
		h.grow()
	}
	h.a = h.a[:n+1]
	h.siftUp(n, heapEntry{when: t.when, seq: t.seq, t: t})
}

// grow enlarges the array by about 50%, starting at 16 (JDK grow).
func (h *taskHeap) grow() {
	c := cap(h.a)
	c += c >> 1
	if c < initialHeapCapacity {
		c = initialHeapCapacity
	}
	a := make([]heapEntry, len(h.a), c)
	copy(a, h.a)
	h.a = a
}

// popHead removes and returns the head. O(log n). The heap must not be empty.
func (h *taskHeap) popHead() *futureTask {
	return h.removeAt(0)
}

// removeAt removes and returns the task in slot i: the last entry takes its
// place and is sifted down, and, if it did not move, up (JDK remove). O(log n).
func (h *taskHeap) removeAt(i int) *futureTask {
	t := h.a[i].t
	s := len(h.a) - 1
	last := h.a[s]
	h.a[s] = heapEntry{} // let the GC reclaim the task eventually
	h.a = h.a[:s]
	if i != s {
		h.siftDown(i, last)
		if h.a[i].t == last.t {
			h.siftUp(i, last)
		}
	}
	t.heapIndex = -1
	return t
}

// siftUp places e at or above slot k (JDK siftUp).
func (h *taskHeap) siftUp(k int, e heapEntry) {
	for k > 0 {
		parent := (k - 1) >> 1
		if !e.less(&h.a[parent]) {
			break
		}
		h.set(k, h.a[parent])
		k = parent
	}
	h.set(k, e)
}

// siftDown places e at or below slot k (JDK siftDown).
func (h *taskHeap) siftDown(k int, e heapEntry) {
	n := len(h.a)
	half := n >> 1
	for k < half {
		child := 2*k + 1
		if right := child + 1; right < n && h.a[right].less(&h.a[child]) {
			child = right
		}
		if !h.a[child].less(&e) {
			break
		}
		h.set(k, h.a[child])
		k = child
	}
	h.set(k, e)
}

// filter removes every task for which drop returns true, calling drop once
// per task, and restores the heap in O(n) (Floyd's heapify). It is the bulk
// form of removeAt used by Purge and by Shutdown's policies.
func (h *taskHeap) filter(drop func(*futureTask) bool) {
	kept := h.a[:0]
	for _, e := range h.a {
		if drop(e.t) {
			e.t.heapIndex = -1
			continue
		}
		kept = append(kept, e)
	}
	clear(h.a[len(kept):])
	h.a = kept
	for i := range h.a {
		h.a[i].t.heapIndex = int32(i)
	}
	for i := len(h.a)/2 - 1; i >= 0; i-- {
		h.siftDown(i, h.a[i])
	}
}

// drain removes every task and returns them in due order. O(n log n).
func (h *taskHeap) drain() []*futureTask {
	out := make([]*futureTask, 0, len(h.a))
	for len(h.a) > 0 {
		out = append(out, h.popHead())
	}
	return out
}
