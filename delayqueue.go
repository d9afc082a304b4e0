package scheduler

import (
	"math"
	"math/bits"
	"sync"
	"time"
)

// delayQueue is the blocking delay queue (JDK DelayedWorkQueue): the heap of
// tasks ordered by trigger time, the clock those times are read on, and the
// bookkeeping of the workers that block on it. This file holds the queue's
// operations (offer, poll, remove, drain, filter), its time, and below them
// the moves of tasks between the timing wheel and the heap; heap.go holds
// the heap, wheel.go the timing wheel, and leader.go take, the
// leader-follower wait that workers block in.
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

// Queue operations on the timing wheel (wheel.go): they move tasks between
// the wheel and the heap, and wake a waiter, so they are methods of the
// delay queue. q.mu.

// wheelLenLocked returns the number of tasks in the wheel.
func (q *delayQueue) wheelLenLocked() int {
	if q.wheel == nil {
		return 0
	}
	return q.wheel.count
}

// offerWheelLocked puts t in the wheel if it is due beyond the horizon and
// within the wheel's span, and reports whether it did. If the wheel now
// needs a worker's attention sooner than anyone waits for, it wakes one.
func (q *delayQueue) offerWheelLocked(t *futureTask) bool {
	w := q.wheel
	if w == nil || t.when-w.base < w.horizon {
		return false
	}
	level, slot, ok := w.place(t.when)
	if !ok {
		return false
	}
	newSlot := w.levels[level].occupied&(1<<slot) == 0
	first := w.count == 0
	w.add(t, level, slot)
	if first || newSlot {
		if st := w.slotStart(level, slot); first || st-w.start < 0 {
			w.start = st
		}
	}
	if !first && t.when-w.minWhen >= 0 {
		return true // not the earliest: nobody needs to wait for less
	}
	// The earliest task in the wheel: below the old bound, so exact.
	w.minWhen, w.minExact = t.when, true
	if head := q.heap.peek(); head != nil && head.when-t.when <= 0 {
		return true // the wait for the head ends first
	}
	if l := q.leader; l != nil && l.deadline-t.when <= 0 {
		return true // the leader wakes in time
	}
	q.newHeadLocked()
	return true
}

// removeWheelLocked removes t if it is in the wheel, and reports whether it
// was.
func (q *delayQueue) removeWheelLocked(t *futureTask) bool {
	if q.wheel == nil || t.heapIndex > -2 {
		return false
	}
	if level, _ := wheelSlotOf(t.heapIndex); level >= wheelLevels {
		return false
	}
	q.wheel.remove(t)
	return true
}

// advanceWheelLocked moves into the heap every wheel task due within the
// horizon of now, cascading the slots above level 0 on the way: after it,
// every task due by now + horizon is in the heap. Slots are processed in
// start order; each task is moved at most once per level.
func (q *delayQueue) advanceWheelLocked(now int64) {
	w := q.wheel
	if w == nil {
		return
	}
	reach := w.horizon
	if q.precise && q.margin > reach {
		reach = q.margin // a fine wait looks at the heap only
	}
	for w.count > 0 && w.start-now <= reach {
		level, slot, start := w.earliestSlot()
		w.start = start
		if start-now > reach {
			break
		}
		q.processSlotLocked(level, slot, start)
	}
	// No task in the wheel is due before now + horizon, so base may
	// follow now: new tasks then land in lower levels.
	w.raiseBase(now)
}

// processSlotLocked cascades a slot of a level above 0 into the levels
// below, or pulls a slot of level 0 into the heap. start is the slot's
// start, and no task in the wheel is due before it.
func (q *delayQueue) processSlotLocked(level, slot int, start int64) {
	w := q.wheel
	list := w.detach(level, slot)
	if level == 0 {
		w.raiseBase(start + 1<<w.tickShift)
	} else {
		w.raiseBase(start)
	}
	for t := list; t != nil; {
		next := t.next
		t.next, t.prev = nil, nil
		w.count--
		t.heapIndex = notQueued
		if l, s, ok := w.place(t.when); level > 0 && ok && l < level {
			w.add(t, l, s)
		} else {
			w.left(t)
			q.heap.push(t)
		}
		t = next
	}
}

// cascadeForViewLocked cascades the wheel's earliest slots above level 0,
// as the passing of time will, while they may hold one of the k
// earliest-due tasks: those the heap holds k tasks due before need not be.
// A slot of a high level can hold hundreds of thousands of tasks (a million
// due over the minutes around an hour from now: about 275,000 in one slot
// of 4.6 minutes); walking it for every page of the queue view held the
// lock for tens of milliseconds (BenchmarkQueuePageWithAMillionQueued in
// the dashboard module), cascading it once leaves slots of a few dozen. The
// order of runs does not change: the wheel never decides it. Each task is
// still moved at most once per level, only sooner; afterwards tasks due
// before the cascaded slot go straight to the heap until time reaches it.
func (q *delayQueue) cascadeForViewLocked(k int) {
	w := q.wheel
	for w != nil && w.count > 0 {
		level, slot, start := w.earliestSlot()
		if level == 0 {
			return
		}
		if hs := q.heap.smallest(k); len(hs) == k && hs[k-1].when-start < 0 {
			return
		}
		q.processSlotLocked(level, slot, start)
	}
}

// headLocked returns the earliest-due queued task, or nil: the heap's head
// once every wheel slot that may hold an earlier task has been moved in.
// For the rare callers that need the true head whatever its time
// (DiscardOldestPolicy, the overflow rule of huge delays); workers advance
// the wheel by time instead.
func (q *delayQueue) headLocked() *futureTask {
	w := q.wheel
	for w != nil && w.count > 0 {
		level, slot, start := w.earliestSlot()
		if head := q.heap.peek(); head != nil && head.when-start < 0 {
			break
		}
		q.processSlotLocked(level, slot, start)
	}
	return q.heap.peek()
}

// wakeTimeLocked returns when the next timed wait must end: the trigger
// time of the earliest task, head (the heap's) or the wheel's. ok is false
// if nothing is queued.
func (q *delayQueue) wakeTimeLocked(head *futureTask) (when int64, ok bool) {
	w := q.wheel
	if w == nil || w.count == 0 {
		if head == nil {
			return 0, false
		}
		return head.when, true
	}
	if head != nil && head.when-w.minWhen <= 0 {
		return head.when, true // before the wheel's lower bound: no need for the exact one
	}
	when = w.nextDue()
	if head != nil && head.when-when < 0 {
		when = head.when
	}
	return when, true
}

// filterWheelLocked removes from the wheel every task for which drop returns
// true, calling drop once per task.
func (q *delayQueue) filterWheelLocked(drop func(*futureTask) bool) {
	w := q.wheel
	if w == nil || w.count == 0 {
		return
	}
	for l := range w.levels {
		lv := &w.levels[l]
		for occ := lv.occupied; occ != 0; occ &= occ - 1 {
			for t := lv.slots[bits.TrailingZeros64(occ)]; t != nil; {
				next := t.next
				if drop(t) {
					w.remove(t)
				}
				t = next
			}
		}
	}
}

// flushWheelLocked moves every wheel task into the heap.
func (q *delayQueue) flushWheelLocked() {
	w := q.wheel
	if w == nil || w.count == 0 {
		return
	}
	for l := range w.levels {
		for occ := w.levels[l].occupied; occ != 0; occ &= occ - 1 {
			slot := bits.TrailingZeros64(occ)
			for t := w.detach(l, slot); t != nil; {
				next := t.next
				t.next, t.prev = nil, nil
				w.count--
				w.left(t)
				q.heap.push(t)
				t = next
			}
		}
	}
}
