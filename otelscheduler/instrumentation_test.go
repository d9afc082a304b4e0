package otelscheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/otelscheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// TestBadInputIsInvalidArgument: a negative name bound, Register(nil), a
// second Register and a Register after Shutdown fail with
// ErrInvalidArgument, and so does a nil Option; Shutdown twice is fine.
func TestBadInputIsInvalidArgument(t *testing.T) {
	_, err := otelscheduler.New(otelscheduler.WithMaxTaskNames(-1))
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)

	_, err = otelscheduler.New(otelscheduler.WithSchedulerName("a"), nil)
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)

	inst, err := otelscheduler.New()
	require.NoError(t, err)
	require.ErrorIs(t, inst.Register(nil), scheduler.ErrInvalidArgument)

	e := newEnv(t, 1, nil) // registered already
	require.ErrorIs(t, e.inst.Register(e.s), scheduler.ErrInvalidArgument)
	require.NoError(t, inst.Shutdown())
	require.NoError(t, inst.Shutdown())
	require.ErrorIs(t, inst.Register(e.s), scheduler.ErrInvalidArgument)
}

// TestShutdownStopsReporting: after Shutdown the Stats instruments report
// nothing, and later runs add no metrics and no spans; the scheduler runs on.
func TestShutdownStopsReporting(t *testing.T) {
	e := newEnv(t, 1, nil)
	_, err := e.s.Schedule(ok, time.Millisecond, scheduler.WithName("before"))
	require.NoError(t, err)
	e.advance(t, time.Millisecond)
	require.NoError(t, e.inst.Shutdown())

	f, err := e.s.Schedule(ok, time.Millisecond, scheduler.WithName("after"))
	require.NoError(t, err)
	e.advance(t, time.Millisecond)
	require.NoError(t, f.Wait(context.Background()))

	m := e.collect(t)
	assert.Equal(t, map[string]int64{"scheduler.run.outcome=ok,scheduler.task.name=before": 1},
		sums(t, m["scheduler.task.runs"]))
	for _, name := range []string{"scheduler.queue.length", "scheduler.task.active",
		"scheduler.worker.count", "scheduler.task.rejected", "scheduler.task.canceled"} {
		if got, present := m[name]; present {
			assert.Empty(t, sums(t, got), name)
		}
	}
	require.Len(t, e.spans.Ended(), 1)
	assert.Equal(t, "run before", e.spans.Ended()[0].Name())
}

// TestNoopTracerProviderMeansMetricsOnly: with the no-op TracerProvider the
// instrumentation installs no decorator (only the Observe hook), and the
// runs are still counted.
func TestNoopTracerProviderMeansMetricsOnly(t *testing.T) {
	e := newEnv(t, 1, []otelscheduler.Option{otelscheduler.WithTracerProvider(tracenoop.NewTracerProvider())})
	assert.Len(t, e.inst.Options(), 1)
	_, err := e.s.Schedule(ok, time.Millisecond, scheduler.WithName("quiet"))
	require.NoError(t, err)
	e.advance(t, time.Millisecond)
	assert.Equal(t, map[string]int64{"scheduler.run.outcome=ok,scheduler.task.name=quiet": 1},
		sums(t, e.collect(t)["scheduler.task.runs"]))

	withSpans, err := otelscheduler.New()
	require.NoError(t, err)
	assert.Len(t, withSpans.Options(), 2, "the global provider may become a real one")
}

// TestNewSchedulerIsTheOneCall: NewScheduler's scheduler reports its runs
// (the instrumentation's decorator wraps the caller's) and its Stats; bad
// input on either side fails it with ErrInvalidArgument.
func TestNewSchedulerIsTheOneCall(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()

	_, _, err := otelscheduler.NewScheduler(0, nil, otelscheduler.WithMeterProvider(mp))
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	_, _, err = otelscheduler.NewScheduler(1, nil, otelscheduler.WithMaxTaskNames(-1))
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)

	clk := schedulertest.NewManualClock(epoch)
	var innerSawSpan bool // written by the task, read after AwaitIdle
	inner := scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
		return func(ctx context.Context) error {
			innerSawSpan = trace.SpanFromContext(ctx).IsRecording()
			return task(ctx)
		}
	})
	s, inst, err := otelscheduler.NewScheduler(1, []scheduler.Option{scheduler.WithClock(clk), inner},
		otelscheduler.WithMeterProvider(mp), otelscheduler.WithTracerProvider(tp))
	require.NoError(t, err)
	defer func() {
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
		require.NoError(t, inst.Shutdown())
	}()
	_, err = s.Schedule(ok, time.Millisecond, scheduler.WithName("one"))
	require.NoError(t, err)
	clk.Advance(time.Millisecond)
	require.NoError(t, s.AwaitIdle(context.Background()))

	assert.True(t, innerSawSpan, "the run's span wraps the caller's decorator")
	require.Len(t, spans.Ended(), 1)
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	names := map[string]bool{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		names[m.Name] = true
	}
	assert.True(t, names["scheduler.task.runs"])
	assert.True(t, names["scheduler.queue.length"], "registered")
}
