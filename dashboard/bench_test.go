package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/dashboard"
)

// latenessLog collects the start lateness of a heartbeat task's runs.
type latenessLog struct {
	mu   sync.Mutex // guards late
	late []time.Duration
	ran  chan struct{} // gets a value after a run, if none is waiting
}

func (l *latenessLog) task(ctx context.Context) error {
	if r, ok := scheduler.CurrentRun(ctx); ok {
		l.mu.Lock()
		l.late = append(l.late, r.Started.Sub(r.Due)-r.Jitter)
		l.mu.Unlock()
	}
	select {
	case l.ran <- struct{}{}:
	default:
	}
	return nil
}

// take returns the lateness recorded since the last call, sorted, and
// starts afresh.
func (l *latenessLog) take() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	late := l.late
	l.late = nil
	slices.Sort(late)
	return late
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1))]
}

// BenchmarkQueuePageWithAMillionQueued renders the queue page (its first
// 100 tasks) over a queue of 1,000,000 tasks while a heartbeat runs every
// millisecond, and reports the heartbeat's start lateness meanwhile; the
// "idle" sub-benchmark reports the same lateness with no page loaded, one
// heartbeat run per op, and "page-every-10-heartbeats" with a page every
// ten heartbeat runs. The page sub-benchmarks report the mean render time
// (page-µs) and, when idle ran first in the same run, their lateness as a
// ratio of idle's (p50-vs-idle, p99-vs-idle: 1 is unchanged; with -count,
// of the last idle run's). It runs with the scheduler's timing wheel on
// (the default) and off, as PeekQueue reads both the heap and the wheel.
func BenchmarkQueuePageWithAMillionQueued(b *testing.B) {
	for _, wheel := range []bool{true, false} {
		b.Run(fmt.Sprintf("wheel=%v", wheel), func(b *testing.B) {
			benchmarkQueuePage(b, scheduler.WithTimingWheel(wheel))
		})
	}
}

func benchmarkQueuePage(b *testing.B, opts ...scheduler.Option) {
	s, err := scheduler.New(2, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer s.ShutdownNow()
	for i := range 1_000_000 {
		if _, err := s.Schedule(idle, time.Hour+time.Duration(i)*time.Millisecond, scheduler.WithName("queued")); err != nil {
			b.Fatal(err)
		}
	}
	heartbeat := latenessLog{ran: make(chan struct{}, 1)}
	if _, err := s.ScheduleAtFixedRate(heartbeat.task, 0, time.Millisecond, scheduler.WithName("heartbeat")); err != nil {
		b.Fatal(err)
	}
	h, err := dashboard.New(s)
	if err != nil {
		b.Fatal(err)
	}
	// idleP50 and idleP99 are the idle sub-benchmark's lateness, the
	// baseline of the ratios; zero until it ran.
	var idleP50, idleP99 time.Duration
	report := func(b *testing.B) (p50, p99 time.Duration) {
		late := heartbeat.take()
		if strings.HasSuffix(b.Name(), "/idle") {
			idleP50, idleP99 = 0, 0 // the baseline is not compared with itself
		}
		p50, p99 = quantile(late, 0.5), quantile(late, 0.99)
		b.ReportMetric(float64(p50.Microseconds()), "heartbeat-p50-µs")
		b.ReportMetric(float64(p99.Microseconds()), "heartbeat-p99-µs")
		b.ReportMetric(float64(len(late)), "heartbeat-runs")
		if idleP50 > 0 && idleP99 > 0 {
			b.ReportMetric(float64(p50)/float64(idleP50), "p50-vs-idle")
			b.ReportMetric(float64(p99)/float64(idleP99), "p99-vs-idle")
		}
		return p50, p99
	}

	b.Run("idle", func(b *testing.B) {
		heartbeat.take()
		for b.Loop() {
			// One op is one heartbeat period: wait for its next run.
			<-heartbeat.ran
		}
		idleP50, idleP99 = report(b)
	})
	// pages counts the pages rendered in a sub-benchmark and the time
	// spent rendering them.
	var pages int
	var rendering time.Duration
	// loadPage renders the queued-tasks page once.
	loadPage := func(b *testing.B) {
		start := time.Now()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/queue", nil))
		rendering += time.Since(start)
		pages++
		if w.Code != http.StatusOK {
			b.Fatalf("GET /queue: %d", w.Code)
		}
	}
	reportPages := func(b *testing.B) {
		if pages > 0 {
			b.ReportMetric(float64(rendering.Microseconds())/float64(pages), "page-µs")
		}
		pages, rendering = 0, 0
	}
	b.Run("page-every-10-heartbeats", func(b *testing.B) {
		// A page every ten heartbeat periods: a hundred pages a second,
		// more than people refreshing a browser will ever ask for.
		heartbeat.take()
		for b.Loop() {
			loadPage(b)
			for range 10 {
				<-heartbeat.ran
			}
		}
		report(b)
		reportPages(b)
	})
	b.Run("page", func(b *testing.B) {
		heartbeat.take()
		for b.Loop() {
			loadPage(b)
		}
		report(b)
		reportPages(b)
	})
}
