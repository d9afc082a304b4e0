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

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"testing"
	"time"
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

// ---------------------------------------------------------------------------
// FuzzHeap

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

// ---------------------------------------------------------------------------
// FuzzDelayQueue

// fzUnit is the time unit of FuzzDelayQueue's delays and steps.
const fzUnit = time.Millisecond

// fzTaskState is the model's view of one submitted task.
type fzTaskState int

const (
	fzQueued     fzTaskState = iota // in the queue, not canceled
	fzCanceled                      // canceled by Cancel or by Shutdown
	fzDone                          // a one-shot that ran, or a periodic task that failed
	fzRemoved                       // removed by Remove: never runs again, not done
	fzHandedBack                    // returned by ShutdownNow
)

// fzTask is one submitted task in the model.
type fzTask struct {
	id     int
	f      ScheduledFuture
	value  *Future[int] // a callable's future, or nil
	period time.Duration
	fixed  bool // fixed rate (else fixed delay) when period > 0
	failOn int  // a periodic task fails on this run (1-based); 0 never
	when   int64
	seq    int // submission order
	queued bool
	state  fzTaskState
	runs   int
}

// fzModel is what FuzzDelayQueue expects the scheduler to have done.
type fzModel struct {
	now       int64 // ns since the scheduler's origin
	tasks     []*fzTask
	log       []int // ids in run order
	failed    int
	canceled  int
	shutdown  bool
	removeOnC bool
}

func (m *fzModel) queue() []*fzTask {
	var q []*fzTask
	for _, x := range m.tasks {
		if x.queued {
			q = append(q, x)
		}
	}
	slices.SortFunc(q, func(a, b *fzTask) int {
		if d := a.when - b.when; d != 0 {
			if d < 0 {
				return -1
			}
			return 1
		}
		return a.seq - b.seq
	})
	return q
}

// settle runs what is due at m.now, in (due, submission) order, as a pool
// of one does.
func (m *fzModel) settle() {
	for {
		q := m.queue()
		if len(q) == 0 || q[0].when-m.now > 0 {
			return
		}
		x := q[0]
		x.queued = false
		if x.state != fzQueued {
			continue // canceled while queued: discarded without a run
		}
		if m.shutdown && x.period != 0 {
			panic("model: a periodic task queued after shutdown")
		}
		x.runs++
		m.log = append(m.log, x.id)
		switch {
		case x.period == 0:
			x.state = fzDone
		case x.failOn == x.runs:
			x.state = fzDone
			m.failed++
		case x.fixed:
			x.when += int64(x.period)
			x.queued = true
		default:
			x.when = m.now + int64(x.period)
			x.queued = true
		}
	}
}

// errFzRun is the error a failing periodic task returns.
var errFzRun = errors.New("fz: periodic run failed")

// fzHarness is the scheduler under test, its clock and the run log.
type fzHarness struct {
	t   *testing.T
	clk *fakeClock
	s   *Scheduler
	ctx context.Context

	mu  sync.Mutex
	log []int
}

func (h *fzHarness) record(id int) {
	h.mu.Lock()
	h.log = append(h.log, id)
	h.mu.Unlock()
}

// settle waits until the scheduler has done everything due; a scheduler
// that never settles is a wedge.
func (h *fzHarness) settle(step int, op string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
	defer cancel()
	if err := h.s.AwaitIdle(ctx); err != nil {
		h.t.Fatalf("step %d (%s): AwaitIdle: %v (wedged)", step, op, err)
	}
}

// check compares the scheduler with the model.
func (h *fzHarness) check(step int, op string, m *fzModel) {
	t := h.t
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d (%s): %s", step, op, fmt.Sprintf(format, args...))
	}
	h.mu.Lock()
	log := slices.Clone(h.log)
	h.mu.Unlock()
	if !slices.Equal(log, m.log) {
		fail("runs\n got %v\nwant %v", log, m.log)
	}
	if now := h.s.q.now(); now != m.now {
		fail("scheduler reads %d, model %d", now, m.now)
	}
	q := m.queue()
	got := h.s.Queue()
	if len(got) != len(q) {
		fail("Queue() has %d tasks, model %d", len(got), len(q))
	}
	for i, x := range q {
		if got[i] != x.f {
			fail("Queue()[%d] is not task %d", i, x.id)
		}
		if d := x.f.Delay(); d != time.Duration(x.when-m.now) {
			fail("task %d: Delay() = %v, want %v", x.id, d, time.Duration(x.when-m.now))
		}
	}
	completed, canceled := 0, m.canceled
	for _, x := range m.tasks {
		completed += x.runs
		done := x.state == fzDone || x.state == fzCanceled
		if x.f.IsDone() != done {
			fail("task %d: IsDone() = %v, model state %d", x.id, x.f.IsDone(), x.state)
		}
		if x.f.IsCanceled() != (x.state == fzCanceled) {
			fail("task %d: IsCanceled() = %v, model state %d", x.id, x.f.IsCanceled(), x.state)
		}
		select {
		case <-x.f.Done():
			if !done {
				fail("task %d: Done() closed but the task is not done", x.id)
			}
		default:
			if done {
				fail("task %d: done, but Done() is not closed", x.id)
			}
		}
		if !done {
			continue
		}
		err := x.f.Wait(h.ctx)
		switch {
		case x.state == fzCanceled:
			if !errors.Is(err, ErrCanceled) {
				fail("task %d: Wait() = %v, want ErrCanceled", x.id, err)
			}
		case x.period != 0:
			if !errors.Is(err, errFzRun) {
				fail("task %d: Wait() = %v, want the run's error", x.id, err)
			}
		case err != nil:
			fail("task %d: Wait() = %v, want nil", x.id, err)
		case x.value != nil:
			if v, err := x.value.Get(h.ctx); err != nil || v != x.id {
				fail("task %d: Get() = %d, %v; want %d, nil", x.id, v, err, x.id)
			}
		}
	}
	st := h.s.Stats()
	want := Stats{
		PoolSize:        st.PoolSize,
		CorePoolSize:    1,
		LargestPoolSize: st.LargestPoolSize,
		Queued:          len(q),
		TaskCount:       uint64(completed + len(q)),
		Completed:       uint64(completed),
		Failed:          uint64(m.failed),
		Canceled:        uint64(canceled),
	}
	if st != want {
		fail("Stats()\n got %+v\nwant %+v", st, want)
	}
	if st.PoolSize > 1 || st.LargestPoolSize > 1 {
		fail("a pool of one has %d workers (largest %d)", st.PoolSize, st.LargestPoolSize)
	}
}

// fzDelay decodes a signed delay in fzUnit, most of them small; 255 asks
// for a delay at or near math.MaxInt64.
func fzDelay(r *fzReader) time.Duration {
	c := r.byte()
	if c == 255 {
		return math.MaxInt64 - time.Duration(r.byte())
	}
	return time.Duration(int8(c)) * fzUnit
}

// FuzzDelayQueue drives a Scheduler with a pool of one on fakeClock and checks
// it against fzModel after every step. After each step it waits with
// AwaitIdle, so the scheduler has done everything due.
//
// The input is a config byte (bit 0: remove-on-cancel; bit 1: the heap
// alone, else a small timing wheel whose level-0 slots are 1 µs wide and
// whose horizon is 1 ms, so that the ms-scale delays pass through it),
// then ops, each a byte followed by its operands (op%10): 0 Schedule
// (delay), 1 ScheduleCallable (delay), 2-3 a periodic task, fixed rate or,
// if op&16, fixed delay (delay, period byte: 1-32ms), 4 the same failing
// on run k (delay, period, k byte), 5 Cancel, with interrupt if op&16
// (task byte), 6 Remove (task byte), 7 Advance (byte: ms, or ns if op&16),
// 8 Advance to the head's due time, 9 Purge; then a final byte (%3):
// ShutdownNow, Shutdown and drain, Shutdown without the delayed tasks. A
// delay byte is an int8 count of ms; 255 followed by k means MaxInt64-k.
func FuzzDelayQueue(f *testing.F) {
	f.Add([]byte{})
	// one-shots at 5, 3, 3 and now; advance 4; advance to the next due.
	f.Add([]byte{0, 0, 5, 0, 3, 0, 3, 0, 0, 7, 4, 8})
	// fixed rate 10, fixed delay 7, cancel, advance a lot, purge.
	f.Add([]byte{1, 1, 10, 9, 2, 0, 6, 7, 100, 4, 0, 1, 6, 7, 200, 2})
	// remove-on-cancel; a periodic task that fails on its 3rd run; remove.
	f.Add([]byte{3, 3, 5, 4, 2, 7, 50, 5, 0, 0, 0, 20, 7, 30, 1})
	// a far-future task next to near ones, then Shutdown.
	f.Add([]byte{4, 0, 255, 0, 0, 2, 0, 1, 7, 3, 8, 8, 1})
	f.Add([]byte{5, 1, 0, 4, 0, 0, 10, 1, 1, 3, 11, 9, 0, 5, 1, 7, 60, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fzReader{b: data}
		cfg := r.byte()
		m := &fzModel{removeOnC: cfg&1 != 0}
		clk := newFakeClock()
		heapAlone := cfg&2 != 0
		s, err := New(1, WithClock(clk), WithRemoveOnCancel(m.removeOnC), WithLogger(slog.New(slog.DiscardHandler)),
			WithTimingWheel(!heapAlone))
		if err != nil {
			t.Fatal(err)
		}
		if !heapAlone {
			s.q.wheel = newTimingWheel(10, 1<<20) // nothing is queued yet
		}
		h := &fzHarness{t: t, clk: clk, s: s, ctx: context.Background()}
		defer func() {
			s.ShutdownNow()
			ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
			defer cancel()
			if err := s.AwaitTermination(ctx); err != nil {
				t.Fatalf("AwaitTermination: %v (wedged)", err)
			}
		}()
		submit := func(x *fzTask, f ScheduledFuture, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("submitting task %d: %v", x.id, err)
			}
			x.f = f
			x.seq = len(m.tasks)
			x.queued = true
			m.tasks = append(m.tasks, x)
		}
		pick := func() *fzTask {
			if len(m.tasks) == 0 {
				return nil
			}
			return m.tasks[int(r.byte())%len(m.tasks)]
		}

		const maxTasks = 64
		for step := 0; r.more() && step < 300; step++ {
			var op string
			switch c := r.byte(); c % 10 {
			case 0, 1: // a one-shot task, a callable if c says so
				if len(m.tasks) == maxTasks {
					continue
				}
				x := &fzTask{id: len(m.tasks)}
				d := fzDelay(r)
				x.when = m.now + int64(max(d, 0))
				if c%2 == 1 {
					op = fmt.Sprintf("ScheduleCallable(task %d, %v)", x.id, d)
					id := x.id
					fut, err := ScheduleCallable(s, func(context.Context) (int, error) {
						h.record(id)
						return id, nil
					}, d)
					x.value = fut
					submit(x, fut, err)
				} else {
					op = fmt.Sprintf("Schedule(task %d, %v)", x.id, d)
					id := x.id
					fut, err := s.Schedule(func(context.Context) error {
						h.record(id)
						return nil
					}, d)
					submit(x, fut, err)
				}
			case 2, 3, 4: // a periodic task; c%10 == 4 fails on some run
				if len(m.tasks) == maxTasks {
					continue
				}
				x := &fzTask{id: len(m.tasks), fixed: c&16 == 0}
				d := fzDelay(r)
				if d > time.Hour {
					d = time.Hour // keep the window reachable for catch-up runs
				}
				x.period = time.Duration(r.byte()%32+1) * fzUnit
				x.when = m.now + int64(max(d, 0))
				if c%10 == 4 {
					x.failOn = int(r.byte()%4) + 1
				}
				id, failOn := x.id, x.failOn
				runs := 0
				body := func(context.Context) error {
					h.record(id)
					runs++ // a periodic task never overlaps itself
					if runs == failOn {
						return errFzRun
					}
					return nil
				}
				var fut ScheduledFuture
				var err error
				if x.fixed {
					op = fmt.Sprintf("ScheduleAtFixedRate(task %d, %v, %v, failOn %d)", x.id, d, x.period, x.failOn)
					fut, err = s.ScheduleAtFixedRate(body, d, x.period)
				} else {
					op = fmt.Sprintf("ScheduleWithFixedDelay(task %d, %v, %v, failOn %d)", x.id, d, x.period, x.failOn)
					fut, err = s.ScheduleWithFixedDelay(body, d, x.period)
				}
				submit(x, fut, err)
			case 5: // cancel
				x := pick()
				if x == nil {
					continue
				}
				interrupt := c&16 != 0
				op = fmt.Sprintf("Cancel(task %d, %v)", x.id, interrupt)
				want := x.state == fzQueued || x.state == fzRemoved
				if got := x.f.Cancel(interrupt); got != want {
					t.Fatalf("step %d: %s = %v, want %v", step, op, got, want)
				}
				if want {
					x.state = fzCanceled
					m.canceled++
					if m.removeOnC {
						x.queued = false
					}
				}
			case 6: // remove
				x := pick()
				if x == nil {
					continue
				}
				op = fmt.Sprintf("Remove(task %d)", x.id)
				want := x.queued
				if got := s.Remove(x.f); got != want {
					t.Fatalf("step %d: %s = %v, want %v", step, op, got, want)
				}
				if want {
					x.queued = false
					if x.state == fzQueued {
						x.state = fzRemoved
					}
				}
			case 7: // advance the clock
				b := r.byte()
				d := time.Duration(b) * fzUnit
				if c&16 != 0 {
					d = time.Duration(b) // a few nanoseconds
				}
				op = fmt.Sprintf("Advance(%v)", d)
				clk.Advance(d)
				m.now += int64(d)
			case 8: // advance exactly to the head's due time
				q := m.queue()
				if len(q) == 0 || q[0].when-m.now > int64(time.Hour) {
					continue
				}
				d := time.Duration(q[0].when - m.now)
				op = fmt.Sprintf("Advance to the head (%v)", d)
				clk.Advance(d)
				m.now += int64(d)
			case 9: // purge
				op = "Purge"
				s.Purge()
				for _, x := range m.tasks {
					if x.state == fzCanceled {
						x.queued = false
					}
				}
			}
			h.settle(step, op)
			m.settle()
			h.check(step, op, m)
		}

		// The end: ShutdownNow, or Shutdown and let the queued one-shots
		// run, or Shutdown without the delayed tasks.
		switch r.byte() % 3 {
		case 0:
			got := s.ShutdownNow()
			want := m.queue()
			if len(got) != len(want) {
				t.Fatalf("ShutdownNow returned %d tasks, model %d queued", len(got), len(want))
			}
			for i, x := range want {
				if got[i] != x.f {
					t.Fatalf("ShutdownNow()[%d] is not task %d", i, x.id)
				}
				x.queued = false
				if x.state == fzQueued {
					x.state = fzHandedBack
				}
			}
			h.settle(-1, "ShutdownNow")
			h.check(-1, "ShutdownNow", m)
		case 1:
			s.Shutdown()
			m.shutdown = true
			for _, x := range m.tasks { // JDK onShutdown with the default policies
				switch {
				case x.queued && x.state == fzCanceled:
					x.queued = false
				case x.queued && x.period != 0:
					x.queued = false
					x.state = fzCanceled
					m.canceled++
				}
			}
			h.settle(-1, "Shutdown")
			h.check(-1, "Shutdown", m)
			if q := m.queue(); len(q) > 0 {
				last := q[len(q)-1]
				if last.when-m.now > int64(time.Hour) {
					break // far-future tasks: the deferred ShutdownNow ends it
				}
				d := time.Duration(last.when - m.now)
				clk.Advance(d)
				m.now += int64(d)
				h.settle(-1, "drain after Shutdown")
				m.settle()
				h.check(-1, "drain after Shutdown", m)
			}
			ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
			defer cancel()
			if err := s.AwaitTermination(ctx); err != nil {
				t.Fatalf("AwaitTermination after Shutdown drained the queue: %v", err)
			}
		case 2:
			s.Shutdown()
			s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(false)
			for _, x := range m.tasks { // everything queued is now canceled or removed
				if x.queued {
					x.queued = false
					if x.state == fzQueued {
						x.state = fzCanceled
						m.canceled++
					}
				}
			}
			ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
			defer cancel()
			if err := s.AwaitTermination(ctx); err != nil {
				t.Fatalf("AwaitTermination after Shutdown with nothing to run: %v", err)
			}
			h.check(-1, "Shutdown without delayed tasks", m)
		}
	})
}

// ---------------------------------------------------------------------------
// FuzzWheel

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
