package scheduler

// FuzzHeap: the indexed binary heap (heap.go) checked after every step
// against a sorted slice.

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// fzHeapModel is the reference for taskHeap: the queued tasks sorted by
// (trigger time, sequence). Trigger times are compared as unsigned offsets
// from base, which is how they are meant to be read: every queued time lies
// in [base, base+MaxInt64] modulo 2^64. That is a different computation from
// the heap's subtraction, so the two check each other.
type fzHeapModel struct {
	base int64
	ts   []*futureTask // sorted
}

func (m *fzHeapModel) key(t *futureTask) uint64 { return uint64(t.when - m.base) }

func (m *fzHeapModel) cmp(a, b *futureTask) int {
	if ka, kb := m.key(a), m.key(b); ka != kb {
		if ka < kb {
			return -1
		}
		return 1
	}
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

func (m *fzHeapModel) insert(t *futureTask) {
	i, found := slices.BinarySearchFunc(m.ts, t, m.cmp)
	if found {
		panic("fzHeapModel: duplicate key")
	}
	m.ts = slices.Insert(m.ts, i, t)
}

func (m *fzHeapModel) delete(t *futureTask) {
	i := slices.Index(m.ts, t)
	if i < 0 {
		panic("fzHeapModel: deleting a task it does not hold")
	}
	m.ts = slices.Delete(m.ts, i, i+1)
}

// fzHeapCheck verifies the heap (heapFault) and checks it against the model
// and every task ever made: the model's order, every queued task's heap
// index, and -1 for tasks not queued.
func fzHeapCheck(t *testing.T, step int, op string, h *taskHeap, m *fzHeapModel, all []*futureTask) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d (%s): %s", step, op, fmt.Sprintf(format, args...))
	}
	if h.len() != len(m.ts) {
		fail("heap holds %d tasks, model %d", h.len(), len(m.ts))
	}
	if err := heapFault(h); err != nil {
		fail("%v", err)
	}
	for i := 1; i < h.len(); i++ {
		if p := (i - 1) / 2; m.cmp(h.a[i].t, h.a[p].t) < 0 {
			fail("model order: slot %d sorts before its parent %d", i, p)
		}
	}
	queued := make(map[*futureTask]bool, len(m.ts))
	for _, x := range m.ts {
		queued[x] = true
		i := int(x.heapIndex)
		if i < 0 || i >= h.len() || h.at(i) != x {
			fail("queued task seq %d has heapIndex %d, which is not its slot", x.seq, x.heapIndex)
		}
	}
	for _, x := range all {
		if !queued[x] && x.heapIndex != -1 {
			fail("task seq %d is not queued but has heapIndex %d", x.seq, x.heapIndex)
		}
	}
	switch {
	case len(m.ts) == 0 && h.peek() != nil:
		fail("peek of an empty heap returned a task")
	case len(m.ts) > 0 && h.peek() != m.ts[0]:
		fail("peek returned seq %d, the model's head is seq %d", h.peek().seq, m.ts[0].seq)
	}
}

// fzHeapOffset picks a trigger time offset in [0, MaxInt64] from the base:
// mostly small (ties and near ties), sometimes the extremes of the window,
// sometimes anything in it.
func fzHeapOffset(r *fzReader) uint64 {
	switch c := r.byte(); c % 8 {
	case 0, 1, 2:
		return uint64(c >> 3) // 0..31: many ties
	case 3:
		return uint64(c>>3) << 20
	case 4:
		return math.MaxInt64 - uint64(c>>3) // the far end of the window
	case 5:
		return math.MaxInt64 / 2 // maxDelay, where overflowFree starts
	default:
		return r.uint64() & math.MaxInt64
	}
}

// fzHeapBases are the windows' starting points FuzzHeap picks from; with an
// offset up to MaxInt64 the trigger times wrap past MaxInt64 to negative
// values, as the JDK's nanoTime-based times do.
var fzHeapBases = []int64{0, math.MinInt64, math.MaxInt64, math.MaxInt64 - 1<<20, -1, math.MinInt64 / 2, math.MaxInt64 / 2}

// FuzzHeap checks taskHeap against a sorted slice.
//
// The input is a base byte (an index into fzHeapBases), then ops, each a
// byte followed by its operands (op%8): 0-2 push (seq byte, offset), 3
// re-push a removed task (index byte, offset), 4 popHead, 5 removeAt (index
// byte), 6 filter (mod byte, remainder byte), 7 drain if the next byte%8
// is 0, else only the checks. An offset is a byte (%8: 0-2 small, 3
// shifted, 4 MaxInt64-k, 5 MaxInt64/2, 6-7 eight more bytes, raw).
func FuzzHeap(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1, 0, 2, 0, 3, 0, 4, 1, 5, 2, 6, 3, 7, 3, 8, 4, 9, 5, 10})
	f.Add([]byte("\x01\x00\x04\x00\x0c\x00\x05\x00\x06\x02\x02\x02\x03\x07\x03\x01"))
	f.Add([]byte("\x02\x00\x04\x00\x0c\x01\x05\x00\x06\x00\x03\x03\x07\x04\x04\x02\x02\x02"))
	seq := make([]byte, 0, 400)
	for i := range 100 { // enough pushes to grow past 16 and 24
		seq = append(seq, 0, byte(i*37), 0)
	}
	for i := range 40 {
		seq = append(seq, byte(2+i%3), byte(i*11), byte(i))
	}
	f.Add(seq)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fzReader{b: data}
		m := &fzHeapModel{base: fzHeapBases[int(r.byte())%len(fzHeapBases)]}
		h := &taskHeap{}
		var all []*futureTask     // every task made, for the heapIndex == -1 check
		var removed []*futureTask // tasks out of the heap, for re-pushes
		var counter uint64
		for step := 0; r.more() && step < 2000; step++ {
			op := r.byte()
			var name string
			switch op % 8 {
			case 0, 1, 2: // push a new task
				x := &futureTask{heapIndex: -1}
				counter++
				x.seq = uint64(r.byte())<<32 | counter // unique, not monotonic
				x.when = m.base + int64(fzHeapOffset(r))
				name = fmt.Sprintf("push (%d, %d)", x.when, x.seq)
				all = append(all, x)
				h.push(x)
				m.insert(x)
			case 3: // re-push a task that left the heap, with a new time (periodic re-queue)
				if len(removed) == 0 {
					continue
				}
				i := int(r.byte()) % len(removed)
				x := removed[i]
				removed = slices.Delete(removed, i, i+1)
				x.when = m.base + int64(fzHeapOffset(r))
				name = fmt.Sprintf("re-push (%d, %d)", x.when, x.seq)
				h.push(x)
				m.insert(x)
			case 4: // pop the head
				name = "popHead"
				if h.len() == 0 {
					continue
				}
				want := m.ts[0]
				got := h.popHead()
				if got != want {
					t.Fatalf("step %d: popHead returned (%d, %d), the model's head is (%d, %d)",
						step, got.when, got.seq, want.when, want.seq)
				}
				m.delete(got)
				removed = append(removed, got)
			case 5: // remove at an index
				if h.len() == 0 {
					continue
				}
				i := int(r.byte()) % h.len()
				name = fmt.Sprintf("removeAt(%d)", i)
				want := h.at(i)
				if got := h.removeAt(i); got != want {
					t.Fatalf("step %d: removeAt(%d) returned another task than the slot held", step, i)
				}
				m.delete(want)
				removed = append(removed, want)
			case 6: // filter out a subset
				mod := uint64(r.byte()%5) + 1
				rem := uint64(r.byte()) % mod
				name = fmt.Sprintf("filter(seq %% %d == %d)", mod, rem)
				calls := make(map[*futureTask]int)
				h.filter(func(x *futureTask) bool {
					calls[x]++
					return x.seq%mod == rem
				})
				if len(calls) != len(m.ts) {
					t.Fatalf("step %d: filter called drop for %d tasks, %d are queued", step, len(calls), len(m.ts))
				}
				for _, x := range slices.Clone(m.ts) {
					if calls[x] != 1 {
						t.Fatalf("step %d: filter called drop %d times for seq %d", step, calls[x], x.seq)
					}
					if x.seq%mod == rem {
						m.delete(x)
						removed = append(removed, x)
					}
				}
			case 7: // drain, rarely; else a peek-only step
				if r.byte()%8 != 0 {
					name = "peek"
					break
				}
				name = "drain"
				want := slices.Clone(m.ts)
				got := h.drain()
				if !slices.Equal(got, want) {
					t.Fatalf("step %d: drain returned %d tasks not in the model's order", step, len(got))
				}
				m.ts = m.ts[:0]
				removed = append(removed, got...)
			}
			fzHeapCheck(t, step, name, h, m, all)
		}
		// Popping everything yields the model's order.
		for i := 0; h.len() > 0; i++ {
			if got := h.popHead(); got != m.ts[i] {
				t.Fatalf("final pop %d: got seq %d, want seq %d", i, got.seq, m.ts[i].seq)
			}
		}
	})
}
