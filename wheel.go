package scheduler

import (
	"math/bits"
	"slices"
)

// The timing wheel in front of the heap: where tasks due far ahead wait,
// so that the heap holds only the tasks due soon (Kafka's purgatory timer,
// Netty's HashedWheelTimer, the Linux kernel's timer wheel). A far task is
// queued and canceled in O(1), with no heap sift and no growth of the heap's
// array; as its time comes near, it moves into the heap, which orders it
// exactly. The wheel never decides an order: every task that is due, or
// due within the horizon, is in the heap before a worker looks at the head,
// so the runs, their order and every rule of the queue are the heap's.
//
// The wheel has wheelLevels levels of wheelSlots slots each. A slot of
// level 0 spans 2^tickShift clock nanoseconds, and each level's slots are
// wheelSlots times wider than the level below: with the default tick of
// about a millisecond the levels span 67 ms, 4.3 s, 4.6 min, 4.9 h, 13 days
// and 2.3 years. A slot is a doubly linked list through the tasks' wheel
// links (futureTask.next, prev), so a task costs the wheel no memory beyond
// those two pointers. A task goes to the lowest level whose span from base
// reaches its trigger time; one beyond the top level goes to the heap.
//
// Slots are processed in the order of their start times. The first slot of
// a level above 0 is cascaded: its tasks are placed again, from its start,
// into the levels below. The first slot of level 0 is pulled: its tasks are
// pushed into the heap. A task is placed at most once per level.
//
// This file holds the wheel alone: the delay queue moves tasks between the
// wheel and the heap and wakes the waiters (delayqueue.go).

// WithTimingWheel sets whether tasks due more than a few seconds ahead wait
// in a hierarchical timing wheel in front of the queue's heap (default
// true). With it, scheduling and canceling such a task is O(1), and the
// heap holds only the tasks due within the next few seconds, so a queue of
// millions of far-future tasks (timeouts, reminders) costs no heap sifts
// and no growth of one large array. The order of runs, every policy,
// Queue, PeekQueue, Stats and the manual clock are exactly as without it.
//
// The trade-offs: every task carries the wheel's two links (16 bytes; a
// task in the wheel has no 24-byte heap entry instead), and far tasks move
// into the heap in groups, when the worker that waits for the earliest of
// them wakes: all those due within the next few seconds at once, in
// O(group size) under the queue's lock, which that first run waits for.
// Worker wake-ups are the same as without the wheel: the timer is armed
// for the earliest task's own time. With false, every task goes straight
// into the heap, as in the JDK's DelayedWorkQueue.
func WithTimingWheel(on bool) Option {
	return optionFunc(func(c *config) { c.timingWheel = on })
}

const (
	wheelSlotBits = 6
	wheelSlots    = 1 << wheelSlotBits // slots per level: one bit each in a uint64
	wheelLevels   = 6

	// defaultWheelTickShift makes a level-0 slot 2^20 ns (about 1 ms) wide.
	defaultWheelTickShift = 20
	// defaultWheelHorizon is how far ahead of now the heap holds every
	// task: about 4.3 s. Tasks submitted to run sooner go straight to the
	// heap, so the timing of short delays, periodic tasks and bursts is
	// the heap's alone.
	defaultWheelHorizon = 1 << 32
)

// notQueued is the heapIndex of a task that is neither in the heap nor in
// the wheel. A heapIndex of 0 or more is a heap slot; one of -2 or less is a
// wheel slot (wheelIndex).
const notQueued = -1

// wheelIndex encodes slot slot of level level as a task's heapIndex.
func wheelIndex(level, slot int) int32 { return int32(-2 - (level<<wheelSlotBits | slot)) }

// wheelSlotOf decodes a heapIndex of wheelIndex.
func wheelSlotOf(i int32) (level, slot int) {
	k := int(-2 - i)
	return k >> wheelSlotBits, k & (wheelSlots - 1)
}

// timingWheel is the wheel's state; the delay queue's mutex guards it. All
// times are clock nanoseconds since the queue's origin and are compared by
// subtraction, as the heap's are.
//
// The invariants: every task in the wheel is due at or after base, and the
// tasks of a level lie in the wheelSlots slots that start at base's slot of
// that level, so a slot's index names one slot in time. base only moves
// forward, and never past a task in the wheel.
type timingWheel struct {
	tickShift uint  // log2 of a level-0 slot's width
	horizon   int64 // the heap holds every task due within horizon of now (as of the last advance)

	base  int64
	count int

	// Valid while count > 0: start is a lower bound on the start of the
	// earliest non-empty slot, and minWhen one on every task's trigger
	// time, exact while minExact. A task that leaves the wheel at minWhen
	// makes it inexact; nextDue recomputes it when a wait needs it.
	start    int64
	minWhen  int64
	minExact bool

	levels [wheelLevels]wheelLevel
}

// wheelLevel is one level: the head of each slot's list, and a bit per
// non-empty slot.
type wheelLevel struct {
	occupied uint64
	slots    [wheelSlots]*futureTask
}

func newTimingWheel(tickShift uint, horizon int64) *timingWheel {
	return &timingWheel{tickShift: tickShift, horizon: horizon}
}

// shift returns log2 of the width of a slot of level level.
func (w *timingWheel) shift(level int) uint { return w.tickShift + uint(level*wheelSlotBits) }

// place returns the level and slot for a task due at when, or ok false if
// when is before base or beyond the top level's span.
func (w *timingWheel) place(when int64) (level, slot int, ok bool) {
	off := when - w.base
	if off < 0 {
		return 0, 0, false
	}
	b := uint64(w.base)
	for l := range wheelLevels {
		s := w.shift(l)
		// k: how many slots of this level after base's slot.
		if k := (b&(1<<s-1) + uint64(off)) >> s; k < wheelSlots {
			return l, int((b>>s + k) & (wheelSlots - 1)), true
		}
	}
	return 0, 0, false
}

// slotStart returns the start time of slot slot of level level.
func (w *timingWheel) slotStart(level, slot int) int64 {
	s := w.shift(level)
	b := uint64(w.base)
	k := (uint64(slot) - b>>s) & (wheelSlots - 1)
	return w.base - int64(b&(1<<s-1)) + int64(k<<s)
}

// earliestSlot returns the non-empty slot that starts first, and its start;
// of slots starting together, the highest level's, so that a slot is
// cascaded before a lower one it may overlap is pulled. count must be > 0.
func (w *timingWheel) earliestSlot() (level, slot int, start int64) {
	level = -1
	for l := wheelLevels - 1; l >= 0; l-- {
		occ := w.levels[l].occupied
		if occ == 0 {
			continue
		}
		cur := int(uint64(w.base)>>w.shift(l)) & (wheelSlots - 1)
		k := bits.TrailingZeros64(bits.RotateLeft64(occ, -cur))
		sl := (cur + k) & (wheelSlots - 1)
		st := w.slotStart(l, sl)
		if level < 0 || st-start < 0 {
			level, slot, start = l, sl, st
		}
	}
	return level, slot, start
}

// exactMin returns the earliest trigger time in the wheel: the least of each
// level's earliest slot. count must be > 0.
func (w *timingWheel) exactMin() int64 {
	first := true
	var m int64
	for l := range wheelLevels {
		occ := w.levels[l].occupied
		if occ == 0 {
			continue
		}
		cur := int(uint64(w.base)>>w.shift(l)) & (wheelSlots - 1)
		k := bits.TrailingZeros64(bits.RotateLeft64(occ, -cur))
		for t := w.levels[l].slots[(cur+k)&(wheelSlots-1)]; t != nil; t = t.next {
			if first || t.when-m < 0 {
				m, first = t.when, false
			}
		}
	}
	return m
}

// add links t at the head of a slot.
func (w *timingWheel) add(t *futureTask, level, slot int) {
	lv := &w.levels[level]
	head := lv.slots[slot]
	t.next, t.prev = head, nil
	if head != nil {
		head.prev = t
	}
	lv.slots[slot] = t
	lv.occupied |= 1 << slot
	t.heapIndex = wheelIndex(level, slot)
	w.count++
}

// remove unlinks t, which is in the wheel, in O(1).
func (w *timingWheel) remove(t *futureTask) {
	w.left(t)
	level, slot := wheelSlotOf(t.heapIndex)
	lv := &w.levels[level]
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		lv.slots[slot] = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	}
	if lv.slots[slot] == nil {
		lv.occupied &^= 1 << slot
	}
	t.next, t.prev = nil, nil
	t.heapIndex = notQueued
	w.count--
}

// detach empties a slot and returns its list.
func (w *timingWheel) detach(level, slot int) *futureTask {
	lv := &w.levels[level]
	head := lv.slots[slot]
	lv.slots[slot] = nil
	lv.occupied &^= 1 << slot
	return head
}

// raiseBase moves base forward to at, if at is later.
func (w *timingWheel) raiseBase(at int64) {
	if at-w.base > 0 {
		w.base = at
	}
}

// nextDue returns the earliest trigger time in the wheel, recomputing it
// if a task that left made the bound inexact. count must be > 0.
func (w *timingWheel) nextDue() int64 {
	if !w.minExact {
		w.minWhen, w.minExact = w.exactMin(), true
	}
	return w.minWhen
}

// left notes that t left the wheel (removed or moved into the heap).
func (w *timingWheel) left(t *futureTask) {
	if t.when == w.minWhen {
		w.minExact = false
	}
}

// eachWheelTask calls f for every task in the wheel. f must not change the
// wheel.
func (w *timingWheel) eachWheelTask(f func(t *futureTask)) {
	for l := range w.levels {
		lv := &w.levels[l]
		for occ := lv.occupied; occ != 0; occ &= occ - 1 {
			for t := lv.slots[bits.TrailingZeros64(occ)]; t != nil; t = t.next {
				f(t)
			}
		}
	}
}

// smallest returns up to k of the wheel's earliest-due tasks, in due
// order. It visits slots in start order and stops at the first slot that
// starts after the k-th earliest task found so far: the slots that may
// hold an earlier one, not the whole wheel. A slot of a high level can hold
// hundreds of thousands of tasks (every task due within minutes of an hour
// ahead), so the k earliest are kept in a bounded max-heap while walking:
// one comparison per task and k entries of memory, never a sort of the
// slot (BenchmarkQueuePageWithAMillionQueued in the dashboard module).
func (w *timingWheel) smallest(k int) []heapEntry {
	if w == nil || w.count == 0 || k <= 0 {
		return nil
	}
	type slotRef struct {
		level, slot int
		start       int64
	}
	var refs []slotRef
	for l := range w.levels {
		for occ := w.levels[l].occupied; occ != 0; occ &= occ - 1 {
			s := bits.TrailingZeros64(occ)
			refs = append(refs, slotRef{l, s, w.slotStart(l, s)})
		}
	}
	base := w.base
	slices.SortFunc(refs, func(x, y slotRef) int {
		// Offsets from base: a slot starts at most one slot width
		// before it, so these never wrap.
		return cmpInt64(x.start-base, y.start-base)
	})
	top := make(latestFirst, 0, min(k, w.count))
	for _, r := range refs {
		if len(top) == k && r.start-top[0].when > 0 {
			break
		}
		for t := w.levels[r.level].slots[r.slot]; t != nil; t = t.next {
			top.offer(heapEntry{when: t.when, seq: t.seq, t: t}, k)
		}
	}
	slices.SortFunc(top, cmpEntries)
	return top
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
