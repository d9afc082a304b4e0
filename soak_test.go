package scheduler_test

// The soak test: many periodic tasks for a long time, with the heap and the
// goroutine count sampled along the way. Both must stay flat once warmed
// up: a periodic task is one object for its whole life, runs
// allocate nothing that outlives them, canceled tasks leave, and the pool
// never grows past its size.
//
// By default (CI) it runs 100 periodic tasks for 2s of virtual time in a
// testing/synctest bubble, which takes well under a second. With
// SCHEDULER_SOAK_DURATION=3m it runs 100k periodic tasks on the real clock
// for that long and logs the samples:
//
//	SCHEDULER_SOAK_DURATION=3m go test -run TestSoak -v -timeout 0 .

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// soakEnv names the variable that turns on the long mode.
const soakEnv = "SCHEDULER_SOAK_DURATION"

// soakConfig sizes one soak run.
type soakConfig struct {
	tasks                int           // periodic tasks kept alive
	minPeriod, maxPeriod time.Duration // each task's period is drawn from this range
	duration             time.Duration // how long to run
	sample               time.Duration // time between samples
	churn                int           // tasks canceled and replaced at each sample
	pool                 int
}

// soakSample is one reading.
type soakSample struct {
	at         time.Duration
	goroutines int
	heapAlloc  uint64 // live heap after a GC
	heapObjs   uint64
	runs       uint64 // body runs so far
	queued     int
}

func (s soakSample) String() string {
	return fmt.Sprintf("t=%-8v goroutines=%-4d heap=%7.2fMiB objects=%-8d runs=%-10d queued=%d",
		s.at.Round(time.Millisecond), s.goroutines, float64(s.heapAlloc)/(1<<20), s.heapObjs, s.runs, s.queued)
}

// soakRun keeps cfg.tasks periodic tasks running for cfg.duration, reading
// the goroutine count and the live heap every cfg.sample. wait blocks for
// one sample interval: a real ticker, or virtual time in a bubble.
func soakRun(t *testing.T, cfg soakConfig, wait func(time.Duration)) []soakSample {
	s, err := scheduler.New(cfg.pool,
		scheduler.WithLogger(slog.New(slog.DiscardHandler)),
		scheduler.WithRemoveOnCancel(true))
	require.NoError(t, err)
	defer func() {
		s.ShutdownNow()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, s.AwaitTermination(ctx))
	}()

	var runs atomic.Uint64
	body := func(context.Context) error {
		runs.Add(1)
		return nil
	}
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	schedule := func() scheduler.ScheduledFuture {
		period := cfg.minPeriod + time.Duration(rng.Int64N(int64(cfg.maxPeriod-cfg.minPeriod)+1))
		initial := time.Duration(rng.Int64N(int64(period)))
		var f scheduler.ScheduledFuture
		var err error
		if rng.IntN(2) == 0 {
			f, err = s.ScheduleAtFixedRate(body, initial, period)
		} else {
			f, err = s.ScheduleWithFixedDelay(body, initial, period)
		}
		require.NoError(t, err)
		return f
	}
	futures := make([]scheduler.ScheduledFuture, cfg.tasks)
	for i := range futures {
		futures[i] = schedule()
	}

	var samples []soakSample
	var ms runtime.MemStats
	for elapsed := time.Duration(0); elapsed < cfg.duration; elapsed = time.Since(start) {
		wait(cfg.sample)
		// Churn: some tasks end and new ones take their place.
		for range cfg.churn {
			i := rng.IntN(len(futures))
			require.True(t, futures[i].Cancel(rng.IntN(2) == 0))
			futures[i] = schedule()
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		st := s.Stats()
		samples = append(samples, soakSample{
			at:         time.Since(start),
			goroutines: runtime.NumGoroutine(),
			heapAlloc:  ms.HeapAlloc,
			heapObjs:   ms.HeapObjects,
			runs:       runs.Load(),
			queued:     st.Queued,
		})
		// Every live task is queued or running; a task just re-queued still
		// counts as active until its run is accounted, and a canceled
		// one may still be running.
		require.LessOrEqual(t, st.Queued, cfg.tasks)
		require.GreaterOrEqual(t, st.Queued+st.Active, cfg.tasks, "a live periodic task is neither queued nor running")
		require.LessOrEqual(t, st.PoolSize, cfg.pool)
	}
	return samples
}

// soakCheck logs the samples and fails if the goroutine count or the live
// heap grew after the warm-up (the first quarter of the samples), or if the
// tasks stopped running.
func soakCheck(t *testing.T, samples []soakSample, heapSlack uint64) {
	var b strings.Builder
	for _, s := range samples {
		fmt.Fprintf(&b, "\n  %v", s)
	}
	t.Logf("%d samples:%s", len(samples), b.String())
	require.GreaterOrEqual(t, len(samples), 4, "too few samples to judge flatness")

	warm := max(len(samples)/4, 1)
	var maxG int
	var maxHeap uint64
	for _, s := range samples[:warm] {
		maxG = max(maxG, s.goroutines)
		maxHeap = max(maxHeap, s.heapAlloc)
	}
	heapBound := maxHeap + maxHeap/4 + heapSlack
	peakG, peakHeap := 0, uint64(0)
	for i, s := range samples {
		peakG = max(peakG, s.goroutines)
		peakHeap = max(peakHeap, s.heapAlloc)
		if i > 0 {
			require.Greater(t, s.runs, samples[i-1].runs, "no run between samples %d and %d: wedged", i-1, i)
		}
		if i < warm {
			continue
		}
		require.LessOrEqual(t, s.goroutines, maxG, "goroutines grew after warm-up: sample %d: %v", i, s)
		require.LessOrEqual(t, s.heapAlloc, heapBound, "live heap grew after warm-up (bound %d): sample %d: %v", heapBound, i, s)
	}
	last := samples[len(samples)-1]
	t.Logf("peak goroutines %d, peak live heap %.2f MiB (bound %.2f MiB), %d runs in %v (%.0f runs/s)",
		peakG, float64(peakHeap)/(1<<20), float64(heapBound)/(1<<20), last.runs, last.at.Round(time.Millisecond),
		float64(last.runs)/last.at.Seconds())
}

// TestSoak: flat goroutines and live heap under many periodic tasks.
func TestSoak(t *testing.T) {
	v := os.Getenv(soakEnv)
	if v == "" {
		// CI: 100 tasks, 2s of virtual time, a sample every 100ms.
		cfg := soakConfig{
			tasks: 100, minPeriod: time.Millisecond, maxPeriod: 10 * time.Millisecond,
			duration: 2 * time.Second, sample: 100 * time.Millisecond, churn: 5, pool: 2,
		}
		var samples []soakSample
		synctest.Test(t, func(t *testing.T) {
			samples = soakRun(t, cfg, func(d time.Duration) {
				time.Sleep(d) // virtual time: the bubble's clock jumps
				synctest.Wait()
			})
		})
		soakCheck(t, samples, 1<<20)
		return
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "%s=%q", soakEnv, v)
	cfg := soakConfig{
		tasks: 100_000, minPeriod: 100 * time.Millisecond, maxPeriod: time.Second,
		duration: d, sample: min(max(d/30, time.Second), 10*time.Second), churn: 1000,
		pool: runtime.GOMAXPROCS(0),
	}
	t.Logf("%d periodic tasks, periods %v..%v, pool %d, %v, a sample every %v, %d replaced per sample",
		cfg.tasks, cfg.minPeriod, cfg.maxPeriod, cfg.pool, cfg.duration, cfg.sample, cfg.churn)
	tick := time.NewTicker(cfg.sample)
	defer tick.Stop()
	samples := soakRun(t, cfg, func(time.Duration) { <-tick.C }) // sampling cadence, not a wait for an event
	soakCheck(t, samples, 8<<20)
}
