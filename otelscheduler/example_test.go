package otelscheduler_test

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/otelscheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// One call makes an instrumented scheduler: metrics of every run, a span per
// run, and the queue and pool instruments. A program passes its
// MeterProvider and TracerProvider (without them, the global ones) and
// shuts both the scheduler and the instrumentation down; a manual reader
// here shows what was recorded.
func ExampleNewScheduler() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	s, inst, err := otelscheduler.NewScheduler(4, nil,
		otelscheduler.WithMeterProvider(mp), // default: the global providers
		otelscheduler.WithSchedulerName("billing"))
	if err != nil {
		panic(err)
	}
	defer inst.Shutdown()
	f, _ := s.Submit(func(ctx context.Context) error { return nil }, scheduler.WithName("invoice"))
	_ = f.Wait(context.Background())
	_ = s.Stop(context.Background())

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if runs, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "scheduler.task.runs" {
			fmt.Println(m.Name, runs.DataPoints[0].Attributes.Encoded(attribute.DefaultEncoder()), runs.DataPoints[0].Value)
		}
	}
	// Output: scheduler.task.runs scheduler.name=billing,scheduler.run.outcome=ok,scheduler.task.name=invoice 1
}

// Instrument a scheduler: New, then its Options to scheduler.New, then
// Register for the queue and pool instruments. A manual reader and a manual
// clock make the output exact; a program would pass its own MeterProvider
// and TracerProvider (or set the global ones) and keep the system clock.
func ExampleNew() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	inst, err := otelscheduler.New(otelscheduler.WithMeterProvider(mp))
	if err != nil {
		panic(err)
	}
	defer inst.Shutdown()
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	s, err := scheduler.New(1, append(inst.Options(), scheduler.WithClock(clk))...)
	if err != nil {
		panic(err)
	}
	defer func() {
		s.ShutdownNow()
		_ = s.AwaitTermination(context.Background())
	}()
	if err := inst.Register(s); err != nil {
		panic(err)
	}

	_, _ = s.ScheduleAtFixedRate(func(context.Context) error { return nil },
		time.Second, time.Second, scheduler.WithName("heartbeat"))
	clk.Advance(3 * time.Second)
	_ = s.AwaitIdle(context.Background())

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch data := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, dp := range data.DataPoints {
				fmt.Printf("%s %s %d\n", m.Name, dp.Attributes.Encoded(attribute.DefaultEncoder()), dp.Value)
			}
		case metricdata.Histogram[float64]:
			for _, dp := range data.DataPoints {
				fmt.Printf("%s %s count=%d\n", m.Name, dp.Attributes.Encoded(attribute.DefaultEncoder()), dp.Count)
			}
		}
	}
	// Unordered output:
	// scheduler.task.runs scheduler.run.outcome=ok,scheduler.task.name=heartbeat 3
	// scheduler.task.run.duration scheduler.run.outcome=ok,scheduler.task.name=heartbeat count=3
	// scheduler.task.run.lateness scheduler.task.name=heartbeat count=3
	// scheduler.queue.length  1
	// scheduler.task.active  0
	// scheduler.worker.count  1
	// scheduler.task.rejected  0
	// scheduler.task.canceled  0
}
