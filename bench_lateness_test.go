//go:build unix

// BenchmarkLateness: how late one-shot tasks run (see bench_test.go).

package scheduler_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// BenchmarkLateness measures how late tasks run: each op schedules 20,000
// one-shot tasks at random delays spread over 2 s and records, for each,
// the time from its due instant to the start of its run. It reports the
// percentiles over all ops in µs (p50-µs, p99-µs, p999-µs, max-µs).
func BenchmarkLateness(b *testing.B) {
	const (
		tasks  = 20_000
		spread = 2 * time.Second
	)
	for _, impl := range benchImpls {
		b.Run("impl="+impl, func(b *testing.B) {
			b.ReportAllocs()
			var all []time.Duration
			for range b.N {
				all = append(all, benchLatenessRound(b, impl, tasks, spread)...)
			}
			slices.Sort(all)
			for _, p := range []struct {
				unit string
				q    float64
			}{{"p50-µs", 0.50}, {"p99-µs", 0.99}, {"p999-µs", 0.999}, {"max-µs", 1}} {
				i := min(int(p.q*float64(len(all))), len(all)-1)
				b.ReportMetric(float64(all[i])/float64(time.Microsecond), p.unit)
			}
		})
	}
}

// benchSpreadRound schedules tasks at uniformly random delays in
// [0, spread) through sched, waits for all of them, and returns how late
// each started (the same seeded delays every round).
func benchSpreadRound(tasks int, spread time.Duration, sched func(d time.Duration, fn func())) []time.Duration {
	r := rand.New(rand.NewPCG(7, 7))
	late := make([]time.Duration, tasks)
	var wg sync.WaitGroup
	wg.Add(tasks)
	for i := range tasks {
		d := time.Duration(r.Int64N(int64(spread)))
		due := time.Now().Add(d)
		sched(d, func() {
			late[i] = time.Since(due)
			wg.Done()
		})
	}
	wg.Wait()
	return late
}

// benchLatenessRound runs one round of BenchmarkLateness and returns the
// lateness of each task.
func benchLatenessRound(b *testing.B, impl string, tasks int, spread time.Duration) []time.Duration {
	var sched func(d time.Duration, fn func())
	switch impl {
	case "scheduler":
		s, err := scheduler.New(benchPool())
		require.NoError(b, err)
		defer benchStopScheduler(b, s)
		sched = func(d time.Duration, fn func()) {
			_, err := s.Schedule(func(context.Context) error { fn(); return nil }, d)
			if err != nil {
				b.Fatal(err)
			}
		}
	case "afterfunc":
		sched = func(d time.Duration, fn func()) { time.AfterFunc(d, fn) }
	case "chanheap":
		ch := benchNewChanHeapUnmanaged(benchPool())
		defer ch.stop()
		sched = func(d time.Duration, fn func()) { ch.schedule(d, fn) }
	}
	return benchSpreadRound(tasks, spread, sched)
}
