package pgdriver_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// The rates of storing tasks, each on a fresh database: Schedule from one
// goroutine (each call alone), from 16 (calls combined while one is in
// flight), and ScheduleMany of 1000. Compare two trees with benchstat,
// runs interleaved:
//
//	SCHEDULER_REQUIRE_POSTGRES=1 go test -run '^$' -bench 'Schedule' -count 6 .

// benchTask is the i-th task of a benchmark: due now, its ID fresh.
func benchTask(i int64) pgdriver.Task {
	return pgdriver.Task{ID: "bench-" + strconv.FormatInt(i, 10), Kind: "bench", Payload: []byte(`{"seq":0}`),
		Due: time.Now(), MaxRetries: 25}
}

func BenchmarkScheduleAlone(b *testing.B) {
	s, _ := newStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	var i int64
	for b.Loop() {
		i++
		if _, err := s.Schedule(ctx, benchTask(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

func BenchmarkScheduleConcurrent(b *testing.B) {
	s, _ := newStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	var seq atomic.Int64
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0))) // 16 goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Schedule(ctx, benchTask(seq.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

func BenchmarkScheduleMany(b *testing.B) {
	s, _ := newStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	tasks := make([]pgdriver.Task, 1000)
	var i int64
	for b.Loop() {
		for j := range tasks {
			i++
			tasks[j] = benchTask(i)
		}
		if _, err := s.ScheduleMany(ctx, tasks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(tasks))/b.Elapsed().Seconds(), "tasks/s")
}
