package otelcluster_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/otelcluster"
)

// One call makes an instrumented node: metrics of every task it schedules,
// claims and runs, a span per run linked to the span that scheduled the
// task, the running and window gauges, and the latency of its Redis
// scripts. A program passes its MeterProvider and TracerProvider (without
// them, the global ones) and shuts down the node, then the
// instrumentation; a manual reader here shows what was recorded. (The
// Example is compiled, not run: it needs a Redis on localhost:6379.)
func ExampleNewNode() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)
	tp := sdktrace.NewTracerProvider() // a real program adds its exporter
	defer tp.Shutdown(ctx)

	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", PoolSize: 32})
	defer rdb.Close()
	n, inst, err := otelcluster.NewNode(rdb, []cluster.Option{cluster.WithPrefix("{example}")},
		otelcluster.WithMeterProvider(mp), otelcluster.WithTracerProvider(tp))
	if err != nil {
		panic(err)
	}
	defer inst.Shutdown() // after the node stopped: deferred calls run last first
	done := make(chan struct{})
	_ = n.Handle("invoice", func(ctx context.Context, t cluster.Task) error {
		// ctx carries the run's span: the spans started from it are its
		// children.
		close(done)
		return nil
	})
	if err := n.Start(ctx); err != nil {
		panic(err)
	}
	defer n.Stop(ctx)

	// The span active at Schedule (an HTTP request's, say) is stored with
	// the task; the run's span links to it.
	reqCtx, request := tp.Tracer("shop").Start(ctx, "POST /orders")
	_, _ = n.Schedule(reqCtx, "invoice", []byte(`{"order":42}`), time.Now())
	request.End()
	<-done

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "scheduler.cluster.task.scheduled" {
			fmt.Println(m.Name, sum.DataPoints[0].Attributes.Encoded(attribute.DefaultEncoder()), sum.DataPoints[0].Value)
		}
	}
}
