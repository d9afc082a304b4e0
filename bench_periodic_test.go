//go:build unix

// BenchmarkPeriodicRun: the CPU cost of periodic runs (see bench_test.go).

package scheduler_test

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// benchPeriodicTasks and benchPeriod are BenchmarkPeriodicRun's workload:
// 1000 fixed-rate tasks every 10 ms, 100,000 runs a second.
const (
	benchPeriodicTasks = 1000
	benchPeriod        = 10 * time.Millisecond
	benchFirstRun      = 20 * time.Millisecond // after the last task is scheduled
)

// BenchmarkPeriodicRun measures the cost of a periodic run: 1000 fixed-rate
// tasks every 10 ms (first runs staggered over one period), until b.N runs
// have happened. ns/op is the pace (10 µs a run), not the cost; the cost is
// cpu-ns/run, the process's CPU time (getrusage) per run. runs-% is the
// share of the runs due by the end that had run by then (100 means none
// was behind). time.AfterFunc re-arms each timer from its callback at its
// next fixed-rate due time; chanheap re-queues the task from its worker.
func BenchmarkPeriodicRun(b *testing.B) {
	for _, impl := range benchImpls {
		b.Run("impl="+impl, func(b *testing.B) {
			b.ReportAllocs()
			c := benchNewCounter(b.N)
			start := time.Now()
			// due[i] is the first run of task i, relative to start.
			first := make([]time.Duration, benchPeriodicTasks)
			for i := range first {
				first[i] = benchFirstRun + time.Duration(i)*benchPeriod/benchPeriodicTasks
			}
			var stop func()
			switch impl {
			case "scheduler":
				s := benchNewScheduler(b)
				hit := func(context.Context) error { c.hit(); return nil }
				for i := range first {
					_, err := s.ScheduleAtFixedRate(hit, first[i]-time.Since(start), benchPeriod)
					require.NoError(b, err)
				}
				stop = func() { benchStopScheduler(b, s) }
			case "afterfunc":
				stop = benchStartRearming(start, first, c)
			case "chanheap":
				ch := benchNewChanHeap(b, benchPool())
				for i := range first {
					ch.schedulePeriodic(start.Add(first[i]), benchPeriod, c.hit)
				}
				stop = func() {}
			}
			cpu0 := benchCPUTime()
			b.ResetTimer()
			<-c.done
			b.StopTimer()
			cpu := benchCPUTime() - cpu0
			elapsed := time.Since(start)
			stop()
			due := 0
			for _, f := range first {
				if elapsed >= f {
					due += int((elapsed-f)/benchPeriod) + 1
				}
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/run")
			b.ReportMetric(100*float64(b.N)/float64(max(due, b.N)), "runs-%")
		})
	}
}

// benchStartRearming starts one self-re-arming time.AfterFunc timer per
// first run: the fixed-rate idiom without a scheduler. It returns a func
// that stops them all.
func benchStartRearming(start time.Time, first []time.Duration, c *benchCounter) func() {
	var stopped atomic.Bool
	timers := make([]*benchRearm, len(first))
	for i, f := range first {
		r := &benchRearm{next: start.Add(f), c: c, stopped: &stopped}
		// Make the timer stopped, publish it, then arm it: the first run
		// may then Reset r.t without a lock.
		r.t = time.AfterFunc(time.Hour, r.run)
		r.t.Stop()
		r.t.Reset(time.Until(r.next))
		timers[i] = r
	}
	return func() {
		stopped.Store(true)
		for _, r := range timers {
			r.t.Stop()
		}
	}
}

// benchRearm is one fixed-rate task on a time.AfterFunc timer. A run that
// was in flight when the timers were stopped may re-arm its timer once
// more; the next run sees stopped and does not.
type benchRearm struct {
	t       *time.Timer
	next    time.Time // the due time of the next run; only runs touch it
	c       *benchCounter
	stopped *atomic.Bool
}

func (r *benchRearm) run() {
	r.c.hit()
	if !r.stopped.Load() {
		r.next = r.next.Add(benchPeriod)
		r.t.Reset(time.Until(r.next))
	}
}

// benchCPUTime returns the user and system CPU time the process has used.
func benchCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
