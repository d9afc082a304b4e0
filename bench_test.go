//go:build unix

// The benchmarks compare the Scheduler with time.AfterFunc (one runtime
// timer per task, a goroutine per firing) and with chanheap, a deliberately
// naive single-goroutine container/heap dispatcher fed over a channel that
// serves as a floor. Every benchmark has the sub-benchmarks impl=afterfunc,
// impl=scheduler and impl=chanheap, so that one run gives the ratios. On a
// shared machine, interleave the passes rather than use -count, so that every
// implementation sees the same load:
//
//	for i in 1 2 3 4 5 6; do go test -run XXX -bench . . >> bench.txt; done
//	benchstat -col '/impl@(afterfunc scheduler chanheap)' bench.txt
//
// CI runs them once with -benchtime 1x so that they keep compiling. The file
// is unix-only because BenchmarkPeriodicRun reads the process's CPU time with
// getrusage.

package scheduler_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// benchImpls names the implementations every benchmark compares, the
// reference first so that benchstat's "vs base" column is the ratio to it.
var benchImpls = []string{"afterfunc", "scheduler", "chanheap"}

// benchPending are the queue sizes the schedule benchmarks run at.
var benchPending = []struct {
	name string
	n    int
}{{"0", 0}, {"1k", 1_000}, {"100k", 100_000}, {"1M", 1_000_000}}

// benchDelays are one-shot delays drawn uniformly from [1h, 2h), so that
// nothing fires during a benchmark and inserts land anywhere in the queue.
// They are drawn once, with a fixed seed, so that no benchmark times a
// random number generator.
var benchDelays = func() []time.Duration {
	r := rand.New(rand.NewPCG(4, 2))
	d := make([]time.Duration, 1<<16)
	for i := range d {
		d[i] = time.Hour + time.Duration(r.Int64N(int64(time.Hour)))
	}
	return d
}()

// benchDelay returns the i-th delay of benchDelays, cycling.
func benchDelay(i int) time.Duration { return benchDelays[i&(len(benchDelays)-1)] }

// benchNop is the body of the tasks whose runs are not what is measured.
func benchNop(context.Context) error { return nil }

// benchNopFunc is benchNop for time.AfterFunc and chanheap.
func benchNopFunc() {}

// benchPool is the pool size of the Scheduler and of chanheap: one worker
// per CPU, as time.AfterFunc's goroutines can use every P.
func benchPool() int { return runtime.GOMAXPROCS(0) }

// benchNewScheduler returns a Scheduler with benchPool workers and
// remove-on-cancel, so that a canceled task leaves the queue at once as a
// stopped runtime timer does. It is shut down when the benchmark ends.
func benchNewScheduler(b *testing.B) *scheduler.Scheduler {
	s, err := scheduler.New(benchPool(), scheduler.WithRemoveOnCancel(true))
	require.NoError(b, err)
	b.Cleanup(func() { benchStopScheduler(b, s) })
	return s
}

// benchStopScheduler shuts s down and waits for its workers to exit.
func benchStopScheduler(b *testing.B, s *scheduler.Scheduler) {
	s.ShutdownNow()
	require.NoError(b, s.AwaitTermination(context.Background()))
}

// ---------------------------------------------------------------------------
// The queues behind BenchmarkSchedule, BenchmarkScheduleCancel and
// BenchmarkPendingMemory: each schedules no-op one-shot tasks far in the
// future and cancels them.

// benchQueue is one implementation as the schedule benchmarks drive it.
type benchQueue interface {
	// prefill schedules n no-op one-shot tasks at benchDelay(0..n-1); they
	// stay queued until close.
	prefill(n int)
	// add schedules a no-op one-shot task to run after d, as part of the
	// current batch.
	add(d time.Duration)
	// dropBatch cancels the tasks of the current batch and starts a new
	// one.
	dropBatch()
	// addCancel schedules a no-op one-shot task to run after d and
	// cancels it at once.
	addCancel(d time.Duration)
	// settle waits until every add and cancel has taken effect (chanheap
	// applies them asynchronously).
	settle()
	// close cancels everything and releases the queue.
	close()
}

// benchNewQueue returns the queue of impl, stopped when the benchmark ends.
// prefill is how many tasks prefill will be called for, and batch how many
// add calls may come between two dropBatch calls: their bookkeeping is
// allocated here, before anything is measured.
func benchNewQueue(b *testing.B, impl string, prefill, batch int) benchQueue {
	switch impl {
	case "scheduler":
		return &benchSchedulerQueue{b: b, s: benchNewScheduler(b),
			batch: make([]scheduler.ScheduledFuture, 0, batch)}
	case "afterfunc":
		q := &benchAfterFuncQueue{
			kept:  make([]*time.Timer, 0, prefill),
			batch: make([]*time.Timer, 0, batch),
		}
		b.Cleanup(q.close)
		return q
	case "chanheap":
		return &benchChanHeapQueue{c: benchNewChanHeap(b, benchPool()),
			batch: make([]*benchChanItem, 0, batch)}
	}
	b.Fatalf("unknown impl %q", impl)
	return nil
}

// benchSchedulerQueue drives a Scheduler. Its queue keeps the prefilled
// tasks; ShutdownNow (benchNewScheduler's cleanup) drops them.
type benchSchedulerQueue struct {
	b     *testing.B
	s     *scheduler.Scheduler
	batch []scheduler.ScheduledFuture
}

func (q *benchSchedulerQueue) schedule(d time.Duration) scheduler.ScheduledFuture {
	f, err := q.s.Schedule(benchNop, d)
	if err != nil {
		q.b.Fatal(err)
	}
	return f
}

func (q *benchSchedulerQueue) prefill(n int) {
	for i := range n {
		q.schedule(benchDelay(i))
	}
}

func (q *benchSchedulerQueue) add(d time.Duration) { q.batch = append(q.batch, q.schedule(d)) }

func (q *benchSchedulerQueue) dropBatch() {
	for _, f := range q.batch {
		f.Cancel(false)
	}
	clear(q.batch)
	q.batch = q.batch[:0]
}

func (q *benchSchedulerQueue) addCancel(d time.Duration) { q.schedule(d).Cancel(false) }

func (q *benchSchedulerQueue) settle() {}
func (q *benchSchedulerQueue) close()  {}

// benchAfterFuncQueue keeps every timer it made, to stop it at the end: a
// runtime timer left pending would keep its memory, and the GC would keep
// scanning it, for the rest of the process.
type benchAfterFuncQueue struct {
	kept  []*time.Timer // the prefilled timers
	batch []*time.Timer
}

func (q *benchAfterFuncQueue) prefill(n int) {
	for i := range n {
		q.kept = append(q.kept, time.AfterFunc(benchDelay(i), benchNopFunc))
	}
}

func (q *benchAfterFuncQueue) add(d time.Duration) {
	q.batch = append(q.batch, time.AfterFunc(d, benchNopFunc))
}

func (q *benchAfterFuncQueue) dropBatch() {
	for _, t := range q.batch {
		t.Stop()
	}
	clear(q.batch)
	q.batch = q.batch[:0]
}

func (q *benchAfterFuncQueue) addCancel(d time.Duration) {
	time.AfterFunc(d, benchNopFunc).Stop()
}

func (q *benchAfterFuncQueue) settle() {}

func (q *benchAfterFuncQueue) close() {
	q.dropBatch()
	for _, t := range q.kept {
		t.Stop()
	}
	q.kept = nil
}

// benchChanHeapQueue drives a chanheap; stopping it (benchNewChanHeap's
// cleanup) drops what is queued.
type benchChanHeapQueue struct {
	c     *benchChanHeap
	batch []*benchChanItem
}

func (q *benchChanHeapQueue) prefill(n int) {
	for i := range n {
		q.c.schedule(benchDelay(i), benchNopFunc)
	}
	q.c.sync()
}

func (q *benchChanHeapQueue) add(d time.Duration) {
	q.batch = append(q.batch, q.c.schedule(d, benchNopFunc))
}

func (q *benchChanHeapQueue) dropBatch() {
	for _, it := range q.batch {
		q.c.cancel(it)
	}
	q.c.sync()
	clear(q.batch)
	q.batch = q.batch[:0]
}

func (q *benchChanHeapQueue) addCancel(d time.Duration) {
	q.c.cancel(q.c.schedule(d, benchNopFunc))
}

func (q *benchChanHeapQueue) settle() { q.c.sync() }
func (q *benchChanHeapQueue) close()  {}

// benchBatch is how many tasks BenchmarkSchedule adds before it cancels
// them, outside the timer, so that the queue stays near its pending size
// however long the benchmark runs.
func benchBatch(pending int) int { return max(1000, pending/10) }

// BenchmarkSchedule measures scheduling one one-shot task at a random delay
// of 1h..2h into a queue holding pending tasks (and up to benchBatch more:
// every batch of scheduled tasks is canceled outside the timer).
func BenchmarkSchedule(b *testing.B) {
	for _, p := range benchPending {
		for _, impl := range benchImpls {
			b.Run("pending="+p.name+"/impl="+impl, func(b *testing.B) {
				b.ReportAllocs()
				batch := benchBatch(p.n)
				q := benchNewQueue(b, impl, p.n, batch)
				q.prefill(p.n)
				n := 0
				for b.Loop() {
					q.add(benchDelay(p.n + n))
					if n++; n%batch == 0 {
						q.settle()
						b.StopTimer()
						q.dropBatch()
						b.StartTimer()
					}
				}
				q.settle()
			})
		}
	}
}

// BenchmarkScheduleCancel measures scheduling one one-shot task at a random
// delay of 1h..2h and canceling it (time.AfterFunc + Stop), with pending
// other tasks queued: the timeout pattern. The Scheduler removes canceled
// tasks at once (WithRemoveOnCancel), so the queue keeps its size.
func BenchmarkScheduleCancel(b *testing.B) {
	for _, p := range benchPending {
		for _, impl := range benchImpls {
			b.Run("pending="+p.name+"/impl="+impl, func(b *testing.B) {
				b.ReportAllocs()
				q := benchNewQueue(b, impl, p.n, 0)
				q.prefill(p.n)
				n := 0
				for b.Loop() {
					q.addCancel(benchDelay(p.n + n))
					n++
				}
				q.settle()
			})
		}
	}
}

// BenchmarkPendingMemory reports the heap bytes each pending task holds
// (B/pending): the live heap after a GC with pending tasks queued, less the
// live heap before, divided by pending. The tasks share one body, and their
// handles are not counted (a Scheduler keeps its tasks in its queue; the
// afterfunc handles are allocated before the baseline).
func BenchmarkPendingMemory(b *testing.B) {
	for _, p := range benchPending[2:] {
		for _, impl := range benchImpls {
			b.Run("pending="+p.name+"/impl="+impl, func(b *testing.B) {
				b.ReportAllocs()
				var sum float64
				for range b.N {
					sum += benchBytesPerPending(b, impl, p.n)
				}
				b.ReportMetric(sum/float64(b.N), "B/pending")
			})
		}
	}
}

// benchBytesPerPending fills a new queue of impl with n tasks and returns
// the live heap bytes per task.
func benchBytesPerPending(b *testing.B, impl string, n int) float64 {
	q := benchNewQueue(b, impl, n, 0)
	defer q.close()
	before := benchLiveHeap()
	q.prefill(n)
	q.settle()
	after := benchLiveHeap()
	runtime.KeepAlive(q)
	return float64(after-before) / float64(n)
}

// benchLiveHeap returns the heap bytes in use after a full collection.
func benchLiveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// ---------------------------------------------------------------------------
// Firing.

// benchCounter counts runs and closes done at the target-th.
type benchCounter struct {
	n      atomic.Int64
	target int64
	done   chan struct{}
}

func benchNewCounter(target int) *benchCounter {
	return &benchCounter{target: int64(target), done: make(chan struct{})}
}

func (c *benchCounter) hit() {
	if c.n.Add(1) == c.target {
		close(c.done)
	}
}

// BenchmarkFire measures throughput: b.N zero-delay tasks submitted from
// one goroutine, timed until the last has run, on a pool of GOMAXPROCS
// workers (time.AfterFunc(0, f) starts a goroutine per task). It reports
// tasks/s; ns/op is its inverse.
func BenchmarkFire(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run("impl="+impl, func(b *testing.B) {
			b.ReportAllocs()
			c := benchNewCounter(b.N)
			hitFunc := c.hit
			switch impl {
			case "scheduler":
				s := benchNewScheduler(b)
				s.PrestartAllCoreWorkers()
				hit := func(context.Context) error { c.hit(); return nil }
				b.ResetTimer()
				for range b.N {
					if _, err := s.Submit(hit); err != nil {
						b.Fatal(err)
					}
				}
			case "afterfunc":
				b.ResetTimer()
				for range b.N {
					time.AfterFunc(0, hitFunc)
				}
			case "chanheap":
				ch := benchNewChanHeap(b, benchPool())
				b.ResetTimer()
				for range b.N {
					ch.schedule(0, hitFunc)
				}
			}
			<-c.done
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
