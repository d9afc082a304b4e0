package main

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler/benchmarks/internal/cputime"
)

// The workloads, the same as the root package's bench_test.go runs (there
// against time.AfterFunc and a naive channel-fed heap, with benchstat):
//
//   - queue: pending one-shot tasks at random delays of 1h..2h are queued
//     (the live heap is measured before and after: bytes per pending task),
//     then ops more are scheduled (ns per schedule), then those are
//     canceled (ns per cancel);
//   - fire: fire zero-delay tasks submitted from one goroutine, timed until
//     the last has run (tasks/s);
//   - periodic: 1000 fixed-rate tasks every 10 ms, first runs staggered
//     over a period, for 3 s: the runs done by the end against the runs
//     due by then, and the process's CPU time per run;
//   - lateness: tasks at random delays spread over 2 s, each recording how
//     late it started.

const (
	periodicTasks  = 1000
	periodicPeriod = 10 * time.Millisecond
	periodicFor    = 3 * time.Second
	periodicFirst  = 50 * time.Millisecond // after scheduling starts
	latenessSpread = 2 * time.Second
)

// result is what the workloads measured for one peer.
type result struct {
	peer

	scheduleNs, cancelNs float64 // per op, at peer.pending queued
	bytesPerPending      float64
	allocsPerSchedule    float64

	fireRate float64 // tasks/s

	periodicRuns, periodicDue int
	periodicCPUNs             float64 // CPU ns per periodic run

	late []time.Duration // lateness of each task, sorted
}

// delays returns n delays drawn uniformly from [lo, lo+span), always the
// same ones for the same arguments.
func delays(n int, lo, span time.Duration) []time.Duration {
	r := rand.New(rand.NewPCG(4, 2))
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = lo + time.Duration(r.Int64N(int64(span)))
	}
	return d
}

// liveHeap returns the heap bytes in use after a full collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// mallocs returns the number of heap allocations so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// runQueue runs the queue workload.
func runQueue(p peer, r *result) error {
	im, err := p.new()
	if err != nil {
		return err
	}
	defer im.close()
	nop := im.prepare(func() {})
	ds := delays(p.pending+p.ops, time.Hour, time.Hour)
	pending := make([]any, p.pending)
	timed := make([]any, p.ops)

	before := liveHeap()
	for i := range pending {
		if pending[i], err = im.schedule(nop, ds[i]); err != nil {
			return fmt.Errorf("prefill: %w", err)
		}
	}
	r.bytesPerPending = float64(liveHeap()-before) / float64(p.pending)

	m0 := mallocs()
	t0 := time.Now()
	for i := range timed {
		if timed[i], err = im.schedule(nop, ds[p.pending+i]); err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
	}
	r.scheduleNs = float64(time.Since(t0).Nanoseconds()) / float64(p.ops)
	r.allocsPerSchedule = float64(mallocs()-m0) / float64(p.ops)

	t0 = time.Now()
	for _, h := range timed {
		if err := im.cancel(h); err != nil {
			return fmt.Errorf("cancel: %w", err)
		}
	}
	r.cancelNs = float64(time.Since(t0).Nanoseconds()) / float64(p.ops)
	runtime.KeepAlive(pending)
	return nil
}

// runFire runs the fire workload.
func runFire(p peer, r *result) error {
	im, err := p.new()
	if err != nil {
		return err
	}
	defer im.close()
	var left atomic.Int64
	left.Store(int64(p.fire))
	done := make(chan struct{})
	hit := im.prepare(func() {
		if left.Add(-1) == 0 {
			close(done)
		}
	})
	t0 := time.Now()
	for range p.fire {
		if _, err := im.schedule(hit, 0); err != nil {
			return err
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("only %d of %d tasks ran in 5 minutes", int64(p.fire)-left.Load(), p.fire)
	}
	r.fireRate = float64(p.fire) / time.Since(t0).Seconds()
	return nil
}

// runPeriodic runs the periodic workload.
func runPeriodic(p peer, r *result) error {
	im, err := p.new()
	if err != nil {
		return err
	}
	var runs atomic.Int64
	hit := im.prepare(func() { runs.Add(1) })
	start := time.Now()
	first := make([]time.Duration, periodicTasks)
	for i := range first {
		first[i] = periodicFirst + time.Duration(i)*periodicPeriod/periodicTasks
		if err := im.fixedRate(hit, start, first[i], periodicPeriod); err != nil {
			im.close()
			return err
		}
	}
	cpu0 := cputime.Process()
	end := start.Add(periodicFirst + periodicFor)
	time.Sleep(time.Until(end))
	n := runs.Load()
	elapsed := time.Since(start)
	cpu := cputime.Process() - cpu0
	im.close()
	due := 0
	for _, f := range first {
		if elapsed >= f {
			due += int((elapsed-f)/periodicPeriod) + 1
		}
	}
	r.periodicRuns, r.periodicDue = int(n), due
	if n > 0 && cpu0 >= 0 {
		r.periodicCPUNs = float64(cpu.Nanoseconds()) / float64(n)
	}
	return nil
}

// runLateness runs the lateness workload.
func runLateness(p peer, r *result) error {
	im, err := p.new()
	if err != nil {
		return err
	}
	defer im.close()
	ds := delays(p.lateness, 0, latenessSpread)
	late := make([]time.Duration, p.lateness)
	var wg sync.WaitGroup
	wg.Add(p.lateness)
	for i, d := range ds {
		due := time.Now().Add(d)
		job := im.prepare(func() {
			late[i] = time.Since(due)
			wg.Done()
		})
		if _, err := im.schedule(job, d); err != nil {
			return err
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("not every task ran in 5 minutes")
	}
	slices.Sort(late)
	r.late = late
	return nil
}

// percentile returns the q-quantile of sorted.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)]
}

// median merges the results of several runs of one peer: each number is
// the median of the runs; the periodic counts and the lateness
// distribution are those of the run with the median share of runs done and
// the median p99.
func median(rs []*result) *result {
	m := *rs[0]
	mid := func(f func(r *result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	pick := func(f func(r *result) float64) *result {
		s := slices.Clone(rs)
		slices.SortFunc(s, func(a, b *result) int { return cmp.Compare(f(a), f(b)) })
		return s[len(s)/2]
	}
	m.scheduleNs = mid(func(r *result) float64 { return r.scheduleNs })
	m.cancelNs = mid(func(r *result) float64 { return r.cancelNs })
	m.bytesPerPending = mid(func(r *result) float64 { return r.bytesPerPending })
	m.allocsPerSchedule = mid(func(r *result) float64 { return r.allocsPerSchedule })
	m.fireRate = mid(func(r *result) float64 { return r.fireRate })
	m.periodicCPUNs = mid(func(r *result) float64 { return r.periodicCPUNs })
	p := pick(func(r *result) float64 { return float64(r.periodicRuns) / float64(max(r.periodicDue, 1)) })
	m.periodicRuns, m.periodicDue = p.periodicRuns, p.periodicDue
	m.late = pick(func(r *result) float64 { return float64(percentile(r.late, 0.99)) }).late
	return &m
}
