package scheduler

// The indexed binary min-heap (heap.go), and heapFault, the one check
// of its invariants (FuzzHeap uses it too).

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// heapTask returns a task keyed (when, seq) that is in no heap.
func heapTask(when int64, seq uint64) *futureTask {
	t := &futureTask{seq: seq, heapIndex: -1}
	t.when = when
	return t
}

// heapFault returns the first broken invariant of h, nil if none: every
// slot holds a task that knows its slot and whose (when, seq) key is the
// slot's inline copy; no slot is less than its parent by (when, seq), in
// the manner of container/heap's verify; and slots past the end hold no
// task, so the GC can reclaim removed tasks.
func heapFault(h *taskHeap) error {
	for i := range h.a {
		e := &h.a[i]
		switch {
		case e.t == nil:
			return fmt.Errorf("slot %d holds no task", i)
		case int(e.t.heapIndex) != i:
			return fmt.Errorf("slot %d holds a task whose heapIndex is %d", i, e.t.heapIndex)
		case e.when != e.t.when || e.seq != e.t.seq:
			return fmt.Errorf("slot %d: inline key (%d, %d) is not its task's (%d, %d)", i, e.when, e.seq, e.t.when, e.t.seq)
		}
		if p := (i - 1) / 2; i > 0 && e.less(&h.a[p]) {
			return fmt.Errorf("heap invariant violated: slot %d (when %d, seq %d) < its parent %d (when %d, seq %d)",
				i, e.when, e.seq, p, h.a[p].when, h.a[p].seq)
		}
	}
	for i, e := range h.a[len(h.a):cap(h.a)] {
		if e.t != nil {
			return fmt.Errorf("slot %d past the end still points to a task", len(h.a)+i)
		}
	}
	return nil
}

// requireHeap fails the test if h breaks an invariant (see heapFault).
func requireHeap(t *testing.T, h *taskHeap) {
	t.Helper()
	if err := heapFault(h); err != nil {
		t.Fatal(err)
	}
}

// byKey orders tasks by (when, seq), as the heap does.
func byKey(a, b *futureTask) int {
	if a.when != b.when {
		if a.when < b.when {
			return -1
		}
		return 1
	}
	if a.seq < b.seq {
		return -1
	}
	return 1
}

func TestInternalHeapRandomOperations(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			var h taskHeap
			model := map[*futureTask]bool{}
			var seq uint64
			for op := range 4000 {
				switch r := rng.IntN(100); {
				case r < 50 || h.len() == 0: // push; a small range of times makes ties
					tk := heapTask(rng.Int64N(64), seq)
					seq++
					h.push(tk)
					model[tk] = true
				case r < 75: // popHead returns the least (when, seq)
					want := slices.MinFunc(slices.Collect(maps.Keys(model)), byKey)
					got := h.popHead()
					require.Same(t, want, got, "op %d: popHead", op)
					require.Equal(t, int32(-1), got.heapIndex)
					delete(model, got)
				case r < 98: // removeAt any slot
					i := rng.IntN(h.len())
					want := h.at(i)
					got := h.removeAt(i)
					require.Same(t, want, got, "op %d: removeAt(%d)", op, i)
					require.Equal(t, int32(-1), got.heapIndex)
					delete(model, got)
				default: // filter, the bulk removal of Purge and Shutdown
					mod := int64(rng.IntN(5) + 2)
					var dropped []*futureTask
					h.filter(func(tk *futureTask) bool {
						if tk.when%mod == 0 {
							dropped = append(dropped, tk)
							return true
						}
						return false
					})
					for _, tk := range dropped {
						require.Equal(t, int32(-1), tk.heapIndex)
						delete(model, tk)
					}
				}
				require.Equal(t, len(model), h.len(), "op %d", op)
				requireHeap(t, &h)
			}
			// drain returns everything in (when, seq) order.
			want := slices.AppendSeq([]*futureTask{}, maps.Keys(model)) // empty, not nil, as drain returns
			slices.SortFunc(want, byKey)
			got := h.drain()
			require.Equal(t, want, got)
			for _, tk := range got {
				require.Equal(t, int32(-1), tk.heapIndex)
			}
			require.Zero(t, h.len())
			requireHeap(t, &h)
		})
	}
}

func TestInternalHeapGrowsByHalf(t *testing.T) {
	var h taskHeap
	var caps []int
	for i := range 200 {
		h.push(heapTask(int64(i), uint64(i)))
		if c := cap(h.a); len(caps) == 0 || caps[len(caps)-1] != c {
			caps = append(caps, c)
		}
	}
	// JDK DelayedWorkQueue: INITIAL_CAPACITY 16, then old + old>>1.
	require.Equal(t, []int{16, 24, 36, 54, 81, 121, 181, 271}, caps)
	requireHeap(t, &h)
}

func TestInternalHeapRemoveAt(t *testing.T) {
	// build pushes tasks with the given times in order and returns them.
	build := func(t *testing.T, whens ...int64) (*taskHeap, []*futureTask) {
		var h taskHeap
		var ts []*futureTask
		for i, w := range whens {
			tk := heapTask(w, uint64(i))
			h.push(tk)
			ts = append(ts, tk)
		}
		requireHeap(t, &h)
		return &h, ts
	}
	whensOf := func(h *taskHeap) []int64 {
		var out []int64
		for _, e := range h.a {
			out = append(out, e.when)
		}
		return out
	}
	t.Run("the replacement moves up", func(t *testing.T) {
		// Slots: 0:1, 1:10, 2:2, 3:11, 4:12, 5:3, 6:4. Removing slot 3
		// moves the last entry (4) there, under 10: it has no children, so
		// sift-down leaves it and only sift-up restores the heap.
		h, _ := build(t, 1, 10, 2, 11, 12, 3, 4)
		require.Equal(t, []int64{1, 10, 2, 11, 12, 3, 4}, whensOf(h))
		got := h.removeAt(3)
		require.Equal(t, int64(11), got.when)
		require.Equal(t, []int64{1, 4, 2, 10, 12, 3}, whensOf(h))
		requireHeap(t, h)
	})
	t.Run("the replacement moves down", func(t *testing.T) {
		h, _ := build(t, 1, 2, 3, 4, 5, 6, 7)
		h.removeAt(1)
		require.Equal(t, []int64{1, 4, 3, 7, 5, 6}, whensOf(h))
		requireHeap(t, h)
	})
	t.Run("the last slot", func(t *testing.T) {
		h, ts := build(t, 1, 2, 3)
		require.Same(t, ts[2], h.removeAt(2))
		require.Equal(t, []int64{1, 2}, whensOf(h))
		requireHeap(t, h)
	})
	t.Run("ties order by sequence", func(t *testing.T) {
		h, ts := build(t, 5, 5, 5, 5, 5)
		h.removeAt(1)
		for _, want := range []*futureTask{ts[0], ts[2], ts[3], ts[4]} {
			require.Same(t, want, h.popHead())
			requireHeap(t, h)
		}
	})
}
