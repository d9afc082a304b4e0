package scheduler

// Fuzz targets for the data structures everything else rests on:
//
//   - FuzzHeap drives the indexed binary heap (heap.go) with random pushes,
//     pops, removals at an index, bulk filters, drains and re-pushes of the
//     same task object, and checks it after every step against a sorted
//     slice: the heap order, every task's heap index, -1 for every task not
//     queued, and the exact pop order. Trigger times include the extremes
//     (math.MinInt64, math.MaxInt64 and wrap-around) within the JDK's
//     overflowFree rule: all queued times lie within MaxInt64 of each other.
//
//   - FuzzWheel drives the heap with the timing wheel in front of it
//     (wheel.go) and a bare heap with the same tasks, and checks that they
//     pop the same tasks in the same order as time moves.
//
//   - FuzzDelayQueue drives a real Scheduler with a pool of one on fakeClock,
//     a small deterministic fake Clock (this package cannot import
//     schedulertest: import cycle), and checks after every step that exactly
//     the tasks a model says are due have run, in (due, submission) order,
//     and that Queue, Stats, IsDone, IsCanceled, Delay and the shutdown
//     lists agree with the model.
//
// `go test` runs the f.Add seeds and the committed corpus under
// testdata/fuzz/<target>; `go test -run XXX -fuzz FuzzHeap -fuzztime 20s .`
// explores further.
//
// Each target has its own file (fuzz_heap_test.go, fuzz_wheel_test.go,
// fuzz_delayqueue_test.go with its model in fuzz_delayqueue_model_test.go);
// this one holds the input reader they share.

import (
	"encoding/binary"
)

// fzReader hands out the fuzz input a byte or a word at a time, zeros once
// the input is used up.
type fzReader struct {
	b []byte
}

func (r *fzReader) more() bool { return len(r.b) > 0 }

func (r *fzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fzReader) uint64() uint64 {
	var buf [8]byte
	n := copy(buf[:], r.b)
	r.b = r.b[n:]
	return binary.LittleEndian.Uint64(buf[:])
}
