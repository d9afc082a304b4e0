package scheduler

import "container/heap"

// The heap: the binary min-heap of the delay queue (JDK DelayedWorkQueue's
// array and its siftUp/siftDown), ordered by (trigger time, sequence), each
// task keeping its own index so it leaves in O(log n); the walks that read
// its earliest tasks without taking them (PeekQueue, TaskByID); and the
// bounded max-heap in which the timing wheel's walk keeps its earliest.

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

// heapFirst reports whether queued task t is due before entry e.
func heapFirst(t *futureTask, e *heapEntry) bool {
	x := heapEntry{when: t.when, seq: t.seq}
	return x.less(e)
}

// smallest returns the up to k earliest-due tasks in due order, walking the
// heap best first: a candidate set, itself a small heap of slots, starts
// with the root; taking its least slot adds that slot's two children. Every
// slot taken is the least of those not yet taken, by the heap property.
func (h *taskHeap) smallest(k int) []*futureTask {
	k = min(k, h.len())
	if k == 0 {
		return nil
	}
	out := make([]*futureTask, 0, k)
	c := slotHeap{h: h, slots: make([]int, 0, k+1)}
	heap.Push(&c, 0)
	for len(out) < k {
		i := heap.Pop(&c).(int)
		out = append(out, h.at(i))
		for _, child := range [2]int{2*i + 1, 2*i + 2} {
			if child < h.len() {
				heap.Push(&c, child)
			}
		}
	}
	return out
}

// findSeq returns the queued task with sequence number seq, or nil: a scan
// of the slots' inline keys, which touches no task but the one found.
func (h *taskHeap) findSeq(seq uint64) *futureTask {
	for i := range h.a {
		if h.a[i].seq == seq {
			return h.a[i].t
		}
	}
	return nil
}

// slotHeap is a min-heap of slots of a taskHeap, ordered as the slots'
// entries are; smallest's candidate set.
type slotHeap struct {
	h     *taskHeap
	slots []int
}

func (c *slotHeap) Len() int           { return len(c.slots) }
func (c *slotHeap) Less(i, j int) bool { return c.h.a[c.slots[i]].less(&c.h.a[c.slots[j]]) }
func (c *slotHeap) Swap(i, j int)      { c.slots[i], c.slots[j] = c.slots[j], c.slots[i] }
func (c *slotHeap) Push(x any)         { c.slots = append(c.slots, x.(int)) }
func (c *slotHeap) Pop() any {
	n := len(c.slots) - 1
	x := c.slots[n]
	c.slots = c.slots[:n]
	return x
}

// latestFirst is a max-heap of entries by due order: its root is the
// latest-due of the entries kept, the one an earlier entry replaces.
type latestFirst []heapEntry

// offer keeps e if fewer than k entries are kept or e is due before the
// latest kept one, which it then replaces.
func (h *latestFirst) offer(e heapEntry, k int) {
	s := *h
	if len(s) < k {
		s = append(s, e)
		for i := len(s) - 1; i > 0; {
			p := (i - 1) / 2
			if !s[p].less(&s[i]) {
				break
			}
			s[p], s[i] = s[i], s[p]
			i = p
		}
		*h = s
		return
	}
	if !e.less(&s[0]) {
		return
	}
	s[0] = e
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if c+1 < len(s) && s[c].less(&s[c+1]) {
			c++
		}
		if !s[i].less(&s[c]) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
}

// cmpEntries orders heap entries as the heap does.
func cmpEntries(x, y heapEntry) int {
	if x.less(&y) {
		return -1
	}
	if y.less(&x) {
		return 1
	}
	return 0
}
