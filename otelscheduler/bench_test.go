package otelscheduler_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/otelscheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// BenchmarkRunOverhead measures the cost of one run of a fixed-rate task,
// with and without the instrumentation: on a manual clock, one Advance makes
// b.N runs due and the worker runs them back to back (the JDK's catch-up),
// so ns/op and allocs/op are per run, scheduling included. cpu-ns/op is the
// process's CPU time (user + system, GC included) per run: on a loaded
// machine it moves less than the wall time.
//
//   - bare: no instrumentation.
//   - plumbing: an empty Observe hook and a decorator that only calls
//     CurrentRun: what the scheduler's side of any such instrumentation costs.
//   - noop: instrumented, with the no-op providers: the Observe hook
//     alone, as a no-op TracerProvider installs no decorator.
//   - metrics: the SDK's MeterProvider with a ManualReader, no-op tracing.
//   - metrics+spans: the same plus the SDK's TracerProvider, every span
//     sampled and handed to a no-op exporter.
//
// Run with: go test -run '^$' -bench RunOverhead -benchmem -count 6 .
func BenchmarkRunOverhead(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchRuns(b, nil) })
	b.Run("plumbing", func(b *testing.B) {
		benchRunsWith(b, scheduler.WithHooks(scheduler.Hooks{Observe: func(scheduler.RunInfo) {}}),
			scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
				return func(ctx context.Context) error {
					scheduler.CurrentRun(ctx)
					return task(ctx)
				}
			}))
	})
	b.Run("noop", func(b *testing.B) {
		benchRuns(b, []otelscheduler.Option{
			otelscheduler.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelscheduler.WithTracerProvider(tracenoop.NewTracerProvider()),
		})
	})
	b.Run("metrics", func(b *testing.B) {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer func() { _ = mp.Shutdown(context.Background()) }()
		benchRuns(b, []otelscheduler.Option{
			otelscheduler.WithMeterProvider(mp),
			otelscheduler.WithTracerProvider(tracenoop.NewTracerProvider()),
		})
	})
	b.Run("metrics+spans", func(b *testing.B) {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer func() { _ = mp.Shutdown(context.Background()) }()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		benchRuns(b, []otelscheduler.Option{
			otelscheduler.WithMeterProvider(mp),
			otelscheduler.WithTracerProvider(tp),
		})
	})
}

// benchRuns runs b.N runs of a named fixed-rate task on one worker,
// instrumented with opts unless opts is nil.
func benchRuns(b *testing.B, opts []otelscheduler.Option) {
	if opts == nil {
		benchRunsWith(b)
		return
	}
	inst, err := otelscheduler.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = inst.Shutdown() }()
	benchRunsWith(b, inst.Options()...)
}

// benchRunsWith runs b.N runs of a named fixed-rate task on one worker of a
// scheduler made with extra, on a manual clock.
func benchRunsWith(b *testing.B, extra ...scheduler.Option) {
	clk := schedulertest.NewManualClock(epoch)
	s, err := scheduler.New(1, append(extra, scheduler.WithClock(clk))...)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		s.ShutdownNow()
		_ = s.AwaitTermination(context.Background())
	}()
	var runs atomic.Int64
	const period = time.Millisecond
	_, err = s.ScheduleAtFixedRate(func(context.Context) error {
		runs.Add(1)
		return nil
	}, period, period, scheduler.WithName("bench"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	cpu0, haveCPU := processCPU()
	b.ResetTimer()
	clk.Advance(time.Duration(b.N) * period)
	if err := s.AwaitIdle(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if cpu1, ok := processCPU(); haveCPU && ok {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
	if got := runs.Load(); got != int64(b.N) {
		b.Fatalf("%d runs, want %d", got, b.N)
	}
}
