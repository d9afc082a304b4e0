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
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// benchPreciseImpls are the implementations the precise benchmarks compare,
// the reference first.
var benchPreciseImpls = []string{"afterfunc", "scheduler", "scheduler-precise"}

// benchPreciseScheduler returns a Scheduler of pool workers, with precise
// timing if impl is "scheduler-precise". The caller stops it with
// benchStopScheduler.
func benchPreciseScheduler(b *testing.B, impl string, pool int) *scheduler.Scheduler {
	s, err := scheduler.New(pool, scheduler.WithPreciseTiming(impl == "scheduler-precise"))
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
// due instant to the start of its body, on two loads, each op a fresh
// scheduler:
//
//   - load=spread: 20,000 one-shot tasks at random delays spread over 2 s,
//     on a pool of 2;
//   - load=fixedrate: 1,000 fixed-rate tasks every 10 ms for 3 s (first
//     runs staggered over one period), on a pool of 2; time.AfterFunc
//     re-arms each timer from its callback for the next fixed-rate time.
//
// It reports p50/p99/p999/max lateness in µs over all ops, and cpu-ns/task,
// the process's CPU time (getrusage) over the op per run.
func BenchmarkPreciseLateness(b *testing.B) {
	for _, load := range []struct {
		name string
		run  func(b *testing.B, impl string) []time.Duration
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
					cpu0 := benchCPUTime()
					all = append(all, load.run(b, impl)...)
					cpu += benchCPUTime() - cpu0
				}
				benchReportLateness(b, all, cpu)
			})
		}
	}
}

// benchPreciseSpread is one op of load=spread.
func benchPreciseSpread(b *testing.B, impl string) []time.Duration {
	const (
		tasks  = 20_000
		spread = 2 * time.Second
	)
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
	return benchSpreadRound(tasks, spread, sched)
}

// benchPreciseFixedRate is one op of load=fixedrate.
func benchPreciseFixedRate(b *testing.B, impl string) []time.Duration {
	const (
		tasks  = 1000
		period = 10 * time.Millisecond
		runFor = 3 * time.Second
		first  = 20 * time.Millisecond // after the last task is scheduled
		runs   = int(runFor / period)  // runs per task that are measured
	)
	// late[i] holds task i's lateness per run; only task i's runs append
	// to it, one after the other.
	late := make([][]time.Duration, tasks)
	for i := range late {
		late[i] = make([]time.Duration, 0, runs+2)
	}
	var left atomic.Int64
	left.Store(tasks)
	done := make(chan struct{})
	// record notes a run of task i due at due; it reports whether the task
	// is to stop.
	record := func(i int, due time.Time) bool {
		late[i] = append(late[i], time.Since(due))
		if len(late[i]) == runs {
			if left.Add(-1) == 0 {
				close(done)
			}
		}
		return len(late[i]) >= runs
	}
	start := time.Now()
	firstDue := func(i int) time.Time { return start.Add(first + time.Duration(i)*period/tasks) }
	if impl == "afterfunc" {
		for i := range tasks {
			r := &benchPreciseRearm{next: firstDue(i)}
			r.fn = func() {
				if !record(i, r.next) {
					r.next = r.next.Add(period)
					r.t.Reset(time.Until(r.next))
				}
			}
			r.t = time.AfterFunc(time.Hour, r.fn)
			r.t.Stop()
			r.t.Reset(time.Until(r.next))
		}
	} else {
		s := benchPreciseScheduler(b, impl, 2)
		defer benchStopScheduler(b, s)
		for i := range tasks {
			due0 := firstDue(i)
			k := 0
			var f scheduler.ScheduledFuture
			var fmu sync.Mutex // f is set after the first run may have begun
			fmu.Lock()
			f, err := s.ScheduleAtFixedRate(func(context.Context) error {
				if record(i, due0.Add(time.Duration(k)*period)) {
					fmu.Lock()
					f.Cancel(false)
					fmu.Unlock()
				}
				k++
				return nil
			}, time.Until(due0), period)
			fmu.Unlock()
			require.NoError(b, err)
		}
	}
	<-done
	var all []time.Duration
	for _, l := range late {
		all = append(all, l[:runs]...)
	}
	return all
}

// benchPreciseRearm is one fixed-rate task on a time.AfterFunc timer.
type benchPreciseRearm struct {
	t    *time.Timer
	next time.Time // the due time of the next run; only runs touch it
	fn   func()
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
