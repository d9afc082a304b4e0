package scheduler

// FuzzWheel: the heap with the timing wheel in front of it (wheel.go)
// checked against a bare heap holding the same tasks.

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// fzWheelPair is one task as the two queues FuzzWheel compares hold it: a
// task object can be queued in one place only, so each side has its own.
type fzWheelPair struct {
	inQueue, inHeap *futureTask
}

// fzWheelOffset picks a delay from now: around the horizon and the levels'
// spans of FuzzWheel's small wheel, sometimes beyond the top level, ties
// often.
func fzWheelOffset(r *fzReader) int64 {
	switch c := r.byte(); c % 8 {
	case 0:
		return int64(c >> 3) // 0..31: due at once, or very soon: ties
	case 1, 2:
		return int64(r.byte()) << (r.byte() % 42) // any level, and past the top
	case 3:
		return 1<<8 + int64(c>>3) - 16 // about the horizon
	case 4:
		return math.MaxInt64/2 - int64(c>>3) // maxDelay: the heap, and the overflow rule
	default:
		return int64(r.uint64() & (1<<40 - 1))
	}
}

// FuzzWheel checks that the heap with the timing wheel in front (wheel.go)
// pops exactly what the heap alone pops, in the same order, as time moves:
// the same tasks are pushed into a delayQueue with a small wheel (level-0
// slots of 16 ns, a horizon of 256 ns, levels up to 2^40 ns) and into a
// bare taskHeap, and after every step the two agree on the length, the
// earliest trigger time, PeekQueue's smallest, the snapshot, and every task
// popped.
//
// The input is ops, each a byte followed by its operands (op%8): 0-2 push
// (offset), 3 re-push a popped task (index byte, offset), 4 remove (index
// byte), 5 advance the clock (byte: shift) and pop everything due, 6
// filter (mod byte, remainder byte), 7 compare the 1-32 smallest, or drain
// if the next byte%16 is 0, or take the true head (DiscardOldestPolicy's
// path) if it is 1.
func FuzzWheel(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 9, 1, 40, 30, 2, 3, 5, 20, 5, 36, 4, 0, 5, 40})
	f.Add([]byte{1, 200, 39, 1, 100, 20, 0, 3, 7, 5, 5, 31, 7, 16, 7, 1, 6, 2, 1, 5, 41})
	seq := make([]byte, 0, 600)
	for i := range 150 {
		seq = append(seq, byte(i%3), byte(i*37), byte(i%42))
	}
	for i := range 40 {
		seq = append(seq, 5, byte(4+i%30), 4, byte(i*7))
	}
	f.Add(seq)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fzReader{b: data}
		q := &delayQueue{wheel: newTimingWheel(4, 1<<8)}
		q.followers.L = &q.mu
		ref := &taskHeap{}
		var now int64
		pairs := map[uint64]*fzWheelPair{} // by seq, the queued ones
		var popped []*fzWheelPair
		var counter uint64
		fail := func(step int, op, format string, args ...any) {
			t.Helper()
			t.Fatalf("step %d (%s): %s", step, op, fmt.Sprintf(format, args...))
		}
		push := func(p *fzWheelPair, when int64) {
			p.inQueue.when, p.inHeap.when = when, when
			q.offerLocked(p.inQueue)
			ref.push(p.inHeap)
			pairs[p.inQueue.seq] = p
		}
		for step := 0; r.more() && step < 2000; step++ {
			var op string
			switch c := r.byte(); c % 8 {
			case 0, 1, 2:
				counter++
				p := &fzWheelPair{
					inQueue: &futureTask{heapIndex: notQueued, seq: counter},
					inHeap:  &futureTask{heapIndex: notQueued, seq: counter},
				}
				when := now + fzWheelOffset(r)
				op = fmt.Sprintf("push (%d, %d)", when, counter)
				push(p, when)
			case 3:
				if len(popped) == 0 {
					continue
				}
				i := int(r.byte()) % len(popped)
				p := popped[i]
				popped = slices.Delete(popped, i, i+1)
				when := now + fzWheelOffset(r)
				op = fmt.Sprintf("re-push (%d, %d)", when, p.inQueue.seq)
				push(p, when)
			case 4:
				if ref.len() == 0 {
					continue
				}
				x := ref.at(int(r.byte()) % ref.len())
				p := pairs[x.seq]
				op = fmt.Sprintf("remove %d", x.seq)
				if !q.removeLocked(p.inQueue) {
					fail(step, op, "the queue did not hold the task")
				}
				ref.removeAt(int(x.heapIndex))
				delete(pairs, x.seq)
				popped = append(popped, p)
				if q.removeLocked(p.inQueue) {
					fail(step, op, "removed twice")
				}
			case 5:
				d := int64(r.byte()) << (r.byte() % 40)
				now += d
				op = fmt.Sprintf("advance %d to %d, pop the due", d, now)
				// As a worker's take: advance the wheel, then pop while due.
				for {
					q.advanceWheelLocked(now)
					head := q.heap.peek()
					want := ref.peek()
					wantDue := want != nil && want.when-now <= 0
					if !wantDue {
						if head != nil && head.when-now <= 0 {
							fail(step, op, "the queue has seq %d due, the heap alone nothing", head.seq)
						}
						break
					}
					if head == nil || head.seq != want.seq {
						fail(step, op, "the queue's head is %v, the heap alone's is seq %d", head, want.seq)
					}
					q.pollLocked()
					ref.popHead()
					popped = append(popped, pairs[want.seq])
					delete(pairs, want.seq)
				}
			case 6:
				mod := uint64(r.byte()%5) + 1
				rem := uint64(r.byte()) % mod
				op = fmt.Sprintf("filter(seq %% %d == %d)", mod, rem)
				calls := map[*futureTask]int{}
				q.filterLocked(func(x *futureTask) bool {
					calls[x]++
					return x.seq%mod == rem
				})
				ref.filter(func(x *futureTask) bool { return x.seq%mod == rem })
				if len(calls) != len(pairs) {
					fail(step, op, "drop called for %d tasks, %d queued", len(calls), len(pairs))
				}
				for s, p := range pairs {
					if calls[p.inQueue] != 1 {
						fail(step, op, "drop called %d times for seq %d", calls[p.inQueue], s)
					}
					if s%mod == rem {
						delete(pairs, s)
						popped = append(popped, p)
					}
				}
			case 7:
				switch sub := r.byte(); sub % 16 {
				case 0:
					op = "drain"
					got := q.drainLocked()
					want := ref.drain()
					if len(got) != len(want) {
						fail(step, op, "drained %d tasks, the heap alone %d", len(got), len(want))
					}
					for i := range got {
						if got[i].seq != want[i].seq {
							fail(step, op, "drain[%d] is seq %d, the heap alone's seq %d", i, got[i].seq, want[i].seq)
						}
						popped = append(popped, pairs[want[i].seq])
						delete(pairs, want[i].seq)
					}
				case 1:
					op = "true head, polled"
					head := q.headLocked()
					want := ref.peek()
					if (head == nil) != (want == nil) || (want != nil && head.seq != want.seq) {
						fail(step, op, "head %v, the heap alone's %v", head, want)
					}
					if want != nil {
						q.pollLocked()
						ref.popHead()
						popped = append(popped, pairs[want.seq])
						delete(pairs, want.seq)
					}
				default:
					k := int(sub>>4)*2 + 1 + int(sub%16)
					op = fmt.Sprintf("smallest(%d)", k)
					got := q.smallestLocked(k)
					want := ref.smallest(k)
					if len(got) != len(want) {
						fail(step, op, "%d tasks, the heap alone %d", len(got), len(want))
					}
					for i := range got {
						if got[i].seq != want[i].seq {
							fail(step, op, "[%d] is seq %d, the heap alone's seq %d", i, got[i].seq, want[i].seq)
						}
					}
				}
			}
			fzWheelCheck(t, step, op, q, ref, now, pairs)
		}
	})
}

// fzWheelCheck compares the queue with the heap alone: length, earliest
// trigger time, the queued set, every task's recorded position, and the
// wheel's invariants (every task at or after base, none due by now after an
// advance to now).
func fzWheelCheck(t *testing.T, step int, op string, q *delayQueue, ref *taskHeap, now int64, pairs map[uint64]*fzWheelPair) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d (%s): %s", step, op, fmt.Sprintf(format, args...))
	}
	if q.lenLocked() != ref.len() || ref.len() != len(pairs) {
		fail("the queue holds %d tasks, the heap alone %d, the model %d", q.lenLocked(), ref.len(), len(pairs))
	}
	when, ok := q.wakeTimeLocked(q.heap.peek())
	if want := ref.peek(); ok != (want != nil) || (ok && when != want.when) {
		fail("earliest trigger time %d (%v), the heap alone's %v", when, ok, want)
	}
	snap := q.snapshotLocked()
	if len(snap) != len(pairs) {
		fail("snapshot of %d tasks, %d queued", len(snap), len(pairs))
	}
	for _, e := range snap {
		p := pairs[e.seq]
		if p == nil || p.inQueue != e.t || e.when != e.t.when {
			fail("snapshot holds seq %d, which is not queued as such", e.seq)
		}
		switch i := e.t.heapIndex; {
		case i >= 0:
			if q.heap.at(int(i)) != e.t {
				fail("seq %d: heapIndex %d is not its heap slot", e.seq, i)
			}
		case i == notQueued:
			fail("seq %d is queued with heapIndex notQueued", e.seq)
		default:
			if e.t.when-q.wheel.base < 0 {
				fail("seq %d is in the wheel but due at %d, before its base %d", e.seq, e.t.when, q.wheel.base)
			}
		}
	}
	if err := heapFault(&q.heap); err != nil {
		fail("%v", err)
	}
}
