package scheduler

// The binary min-heap of the delay queue (JDK DelayedWorkQueue's array and
// its siftUp/siftDown): ordered by (trigger time, sequence), each task
// keeping its own index so it leaves in O(log n).

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
