//go:build unix

// Precise timing: how late tasks start with and without
// WithPreciseTiming, against time.AfterFunc in the same run, what it costs
// in CPU, and what it does to the other goroutines of a GOMAXPROCS=1
// program. Run them interleaved, as the other benchmarks:
//
//	for i in 1 2 3 4 5 6; do go test -run XXX -bench 'Precise' -benchtime 1x . >> precise.txt; done
//	benchstat -col '/impl@(afterfunc scheduler scheduler-precise)' precise.txt

package scheduler_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// benchPreciseImpls are the implementations the precise benchmarks compare,
// the reference first.
var benchPreciseImpls = []string{"afterfunc", "scheduler", "scheduler-precise"}

// benchPreciseScheduler returns a Scheduler of pool workers with
// remove-on-cancel (as the compare harness makes it), with precise timing
// if impl is "scheduler-precise". The caller stops it with
// benchStopScheduler.
func benchPreciseScheduler(b *testing.B, impl string, pool int) *scheduler.Scheduler {
	s, err := scheduler.New(pool, scheduler.WithRemoveOnCancel(true),
		scheduler.WithPreciseTiming(impl == "scheduler-precise"))
	require.NoError(b, err)
	return s
}

// benchReportLateness reports the percentiles of late (sorted here) in µs,
// and the process's CPU time per task.
func benchReportLateness(b *testing.B, late []time.Duration, cpu time.Duration) {
	slices.Sort(late)
	for _, p := range []struct {
		unit string
		q    float64
	}{{"p50-µs", 0.50}, {"p99-µs", 0.99}, {"p999-µs", 0.999}, {"max-µs", 1}} {
		i := min(int(p.q*float64(len(late))), len(late)-1)
		b.ReportMetric(float64(late[i])/float64(time.Microsecond), p.unit)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(late)), "cpu-ns/task")
}

// BenchmarkPreciseLateness measures start lateness, the time from a run's
// due instant to the start of its body, on the two loads of the compare
// harness (../shared/bench/go, workloads "lateness" and "periodic"), each op
// a fresh scheduler on a pool of 2 with remove-on-cancel, as the harness
// makes it:
//
//   - load=spread: 20,000 one-shot tasks at random delays spread over 2 s;
//   - load=fixedrate: 1,000 fixed-rate tasks every 10 ms, task i first due
//     i×10 µs after its schedule call, for a window of 3 s from the first
//     call; time.AfterFunc re-arms each timer from its callback for the
//     next fixed-rate time.
//
// It reports p50/p99/p999/max lateness in µs over all ops, cpu-ns/task, the
// process's CPU time per run, and cpu-s/op, the process's CPU time per op:
// for load=fixedrate over the window only, the harness's "per CPU s".
func BenchmarkPreciseLateness(b *testing.B) {
	for _, load := range []struct {
		name string
		run  func(b *testing.B, impl string) ([]time.Duration, time.Duration)
	}{
		{"spread", benchPreciseSpread},
		{"fixedrate", benchPreciseFixedRate},
	} {
		for _, impl := range benchPreciseImpls {
			b.Run("load="+load.name+"/impl="+impl, func(b *testing.B) {
				var all []time.Duration
				var cpu time.Duration
				for range b.N {
					runtime.GC()
					late, c := load.run(b, impl)
					all = append(all, late...)
					cpu += c
				}
				benchReportLateness(b, all, cpu)
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}

// benchPreciseSpread is one op of load=spread; it returns the lateness of
// every task and the process's CPU time over the op.
func benchPreciseSpread(b *testing.B, impl string) ([]time.Duration, time.Duration) {
	const (
		tasks  = 20_000
		spread = 2 * time.Second
	)
	cpu0 := benchCPUTime()
	var sched func(d time.Duration, fn func())
	if impl == "afterfunc" {
		sched = func(d time.Duration, fn func()) { time.AfterFunc(d, fn) }
	} else {
		s := benchPreciseScheduler(b, impl, 2)
		defer benchStopScheduler(b, s)
		sched = func(d time.Duration, fn func()) {
			if _, err := s.Schedule(func(context.Context) error { fn(); return nil }, d); err != nil {
				b.Fatal(err)
			}
		}
	}
	late := benchSpreadRound(tasks, spread, sched)
	return late, benchCPUTime() - cpu0
}

// benchPreciseFixedRate is one op of load=fixedrate; it returns the
// lateness of every run due in the window that started within grace after
// it, and the process's CPU time from just before the first schedule call
// to the end of the window.
func benchPreciseFixedRate(b *testing.B, impl string) ([]time.Duration, time.Duration) {
	const (
		tasks  = 1000
		period = 10 * time.Millisecond
		window = 3 * time.Second
		grace  = 200 * time.Millisecond
	)
	runs := make([]benchPreciseRuns, tasks)
	var s *scheduler.Scheduler
	if impl != "afterfunc" {
		s = benchPreciseScheduler(b, impl, 2)
	}
	cpu0 := benchCPUTime()
	base := time.Now()
	for i := range runs {
		r := &runs[i]
		initial := period * time.Duration(i) / tasks
		r.first = time.Since(base) + initial
		r.late = make([]time.Duration, 0, int(window/period)+2)
		record := func() {
			now := time.Since(base)
			r.mu.Lock()
			defer r.mu.Unlock()
			due := r.first + time.Duration(r.n)*period
			r.n++
			if due <= window && now <= window+grace {
				r.late = append(r.late, now-due)
			}
		}
		if s == nil {
			r.rearm = &benchPreciseRearm{next: base.Add(r.first), period: period, fn: record}
			r.rearm.start(initial)
			continue
		}
		f, err := s.ScheduleAtFixedRate(func(context.Context) error { record(); return nil }, initial, period)
		require.NoError(b, err)
		r.future = f
	}
	time.Sleep(window - time.Since(base))
	cpu := benchCPUTime() - cpu0
	time.Sleep(window + grace - time.Since(base))
	for i := range runs {
		if runs[i].rearm != nil {
			runs[i].rearm.stop()
		} else {
			runs[i].future.Cancel(false)
		}
	}
	if s != nil {
		benchStopScheduler(b, s)
	}
	var all []time.Duration
	for i := range runs {
		runs[i].mu.Lock()
		all = append(all, runs[i].late...)
		runs[i].mu.Unlock()
	}
	return all, cpu
}

// benchPreciseRuns is one fixed-rate task of load=fixedrate: its first due
// time (since the op's base), its runs so far and their lateness.
type benchPreciseRuns struct {
	mu     sync.Mutex // guards n and late: a run and the final read
	first  time.Duration
	n      int
	late   []time.Duration
	future scheduler.ScheduledFuture // the task, on the scheduler
	rearm  *benchPreciseRearm        // the task, on time.AfterFunc
}

// benchPreciseRearm is one fixed-rate task on a time.AfterFunc timer that
// its callback re-arms for the next fixed-rate time, as the harness's
// afterfunc does.
type benchPreciseRearm struct {
	mu      sync.Mutex // guards t, next and stopped
	t       *time.Timer
	next    time.Time
	period  time.Duration
	stopped bool
	fn      func()
}

// start arms the timer for the first run, after initial.
func (r *benchPreciseRearm) start(initial time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.t = time.AfterFunc(initial, r.run)
}

// run is one firing: the task, then the timer re-armed for the next time.
func (r *benchPreciseRearm) run() {
	r.fn()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.next = r.next.Add(r.period)
		r.t.Reset(time.Until(r.next))
	}
}

// stop stops the timer for good.
func (r *benchPreciseRearm) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.t.Stop()
}

// BenchmarkPreciseNeighbour measures what a busy scheduler does to the
// other goroutines of a program at GOMAXPROCS=1 and 2: while the scheduler runs
// load=spread's 20,000 tasks over 2 s on a pool of 2, a neighbour
// schedules 4,000 time.AfterFunc callbacks over the same 2 s, each handing
// a timestamp over a channel to a waiting goroutine. It reports the
// neighbour's timer lateness (timer-p50-µs, timer-p99-µs, timer-max-µs)
// and the hand-off latency (handoff-p50-µs, handoff-p99-µs,
// handoff-max-µs). impl=afterfunc is the neighbour alone, for reference.
func BenchmarkPreciseNeighbour(b *testing.B) {
	for _, procs := range []int{1, 2} {
		for _, impl := range benchPreciseImpls {
			b.Run(fmt.Sprintf("procs=%d/impl=%s", procs, impl), func(b *testing.B) {
				benchPreciseNeighbour(b, procs, impl)
			})
		}
	}
}

// benchPreciseNeighbour is BenchmarkPreciseNeighbour at GOMAXPROCS procs.
func benchPreciseNeighbour(b *testing.B, procs int, impl string) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	var timer, handoff []time.Duration
	for range b.N {
		t, h := benchPreciseNeighbourRound(b, impl)
		timer, handoff = append(timer, t...), append(handoff, h...)
	}
	slices.Sort(timer)
	slices.Sort(handoff)
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"timer", timer}, {"handoff", handoff}} {
		for _, p := range []struct {
			unit string
			q    float64
		}{{"-p50-µs", 0.50}, {"-p99-µs", 0.99}, {"-max-µs", 1}} {
			i := min(int(p.q*float64(len(m.d))), len(m.d)-1)
			b.ReportMetric(float64(m.d[i])/float64(time.Microsecond), m.name+p.unit)
		}
	}
}

// benchPreciseNeighbourRound is one op of BenchmarkPreciseNeighbour.
func benchPreciseNeighbourRound(b *testing.B, impl string) (timer, handoff []time.Duration) {
	const (
		tasks      = 20_000
		neighbours = 4_000
		spread     = 2 * time.Second
	)
	var wg sync.WaitGroup
	if impl != "afterfunc" {
		s := benchPreciseScheduler(b, impl, 2)
		defer benchStopScheduler(b, s)
		r := rand.New(rand.NewPCG(7, 7))
		wg.Add(tasks)
		for range tasks {
			if _, err := s.Schedule(func(context.Context) error { wg.Done(); return nil },
				time.Duration(r.Int64N(int64(spread)))); err != nil {
				b.Fatal(err)
			}
		}
	}
	type stamp struct{ due, fired time.Time }
	ch := make(chan stamp)
	r := rand.New(rand.NewPCG(8, 8))
	for range neighbours {
		due := time.Now().Add(time.Duration(r.Int64N(int64(spread))))
		time.AfterFunc(time.Until(due), func() { ch <- stamp{due, time.Now()} })
	}
	for range neighbours {
		st := <-ch
		now := time.Now()
		timer = append(timer, st.fired.Sub(st.due))
		handoff = append(handoff, now.Sub(st.fired))
	}
	wg.Wait()
	return timer, handoff
}

// BenchmarkPreciseFire is BenchmarkFire with and without precise timing:
// b.N zero-delay tasks submitted from one goroutine, timed until the last
// has run, on a pool of GOMAXPROCS workers. Precise timing must leave the
// throughput unchanged: a due head is taken without any wait.
func BenchmarkPreciseFire(b *testing.B) {
	for _, impl := range benchPreciseImpls {
		b.Run("impl="+impl, func(b *testing.B) {
			b.ReportAllocs()
			c := benchNewCounter(b.N)
			if impl == "afterfunc" {
				hit := c.hit
				b.ResetTimer()
				for range b.N {
					time.AfterFunc(0, hit)
				}
			} else {
				s := benchPreciseScheduler(b, impl, benchPool())
				defer benchStopScheduler(b, s)
				s.PrestartAllCoreWorkers()
				hit := func(context.Context) error { c.hit(); return nil }
				b.ResetTimer()
				for range b.N {
					if _, err := s.Submit(hit); err != nil {
						b.Fatal(err)
					}
				}
			}
			<-c.done
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
