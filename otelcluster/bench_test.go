package otelcluster_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/otelcluster"
	"github.com/go-stpe/scheduler/otelcluster/internal/redisserver"
)

// BenchmarkTaskOverhead runs tasks one at a time on one node, from
// Schedule (inside a span) to the handler's return, on its own
// redis-server, so that ns/op and allocs/op are per task: a Schedule, a
// claim, a run and its completion, each a Redis round trip. cpu-ns/op is
// the process's CPU time (user + system, GC included; redis-server's not)
// per task: on a loaded machine it moves less than the wall time.
//
//   - bare: no instrumentation.
//   - noop: instrumented with the no-op providers (no metadata, no span).
//   - metrics: the SDK's MeterProvider with a ManualReader, no-op tracing.
//   - metrics+spans: the same plus the SDK's TracerProvider, every span
//     sampled and dropped: the trace context stored with each task, and
//     a span per run linked to it.
//
// Run with: go test -run '^$' -bench TaskOverhead -benchmem -count 6 .
func BenchmarkTaskOverhead(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchTasks(b, nil) })
	b.Run("noop", func(b *testing.B) {
		benchTasks(b, []otelcluster.Option{
			otelcluster.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelcluster.WithTracerProvider(tracenoop.NewTracerProvider()),
		})
	})
	b.Run("metrics", func(b *testing.B) {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer func() { _ = mp.Shutdown(context.Background()) }()
		benchTasks(b, []otelcluster.Option{
			otelcluster.WithMeterProvider(mp),
			otelcluster.WithTracerProvider(tracenoop.NewTracerProvider()),
		})
	})
	b.Run("metrics+spans", func(b *testing.B) {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer func() { _ = mp.Shutdown(context.Background()) }()
		tp := sdktrace.NewTracerProvider()
		defer func() { _ = tp.Shutdown(context.Background()) }()
		benchTasks(b, []otelcluster.Option{otelcluster.WithMeterProvider(mp), otelcluster.WithTracerProvider(tp)})
	})
}

// benchTasks runs b.N tasks on a node instrumented with opts (none: bare).
func benchTasks(b *testing.B, opts []otelcluster.Option) {
	addr := redisserver.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32})
	defer rdb.Close()
	nodeOpts := []cluster.Option{cluster.WithLogger(slog.New(slog.DiscardHandler))}
	var n *cluster.Node
	var err error
	if opts == nil {
		n, err = cluster.New(rdb, nodeOpts...)
	} else {
		var inst *otelcluster.Instrumentation
		n, inst, err = otelcluster.NewNode(rdb, nodeOpts, opts...)
		if err == nil {
			defer inst.Shutdown()
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	defer n.StopNow()
	done := make(chan struct{}, 1)
	if err := n.Handle("k", func(context.Context, cluster.Task) error {
		done <- struct{}{}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := n.Start(ctx); err != nil {
		b.Fatal(err)
	}
	tracer := sdktrace.NewTracerProvider().Tracer("bench") // the caller's span, always sampled
	b.ReportAllocs()
	cpu0, haveCPU := processCPU()
	b.ResetTimer()
	for range b.N {
		reqCtx, span := tracer.Start(ctx, "request")
		if _, err := n.Schedule(reqCtx, "k", nil, time.Now()); err != nil {
			b.Fatal(err)
		}
		span.End()
		<-done
	}
	b.StopTimer()
	if cpu1, ok := processCPU(); ok && haveCPU {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
