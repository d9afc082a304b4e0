package otelscheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/otelscheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// epoch is where every test's manual clock starts.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// env is one instrumented scheduler on a manual clock, with the real SDK
// behind it: a ManualReader for metrics, a SpanRecorder for spans.
type env struct {
	clk    *schedulertest.ManualClock
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	inst   *otelscheduler.Instrumentation
	s      *scheduler.Scheduler
	// request is the span of the scheduler's base context (newEnvWithBase).
	request trace.Span
}

// newEnv builds an env with a pool of poolSize; extra scheduler options go
// after the instrumentation's. Everything is shut down when the test ends.
func newEnv(t *testing.T, poolSize int, opts []otelscheduler.Option, schedOpts ...scheduler.Option) *env {
	t.Helper()
	return buildEnv(t, poolSize, opts, false, schedOpts)
}

// newEnvWithBase builds an env of one worker whose scheduler's base context
// carries the span e.request, started from the env's own TracerProvider.
func newEnvWithBase(t *testing.T) *env {
	t.Helper()
	return buildEnv(t, 1, nil, true, nil)
}

func buildEnv(t *testing.T, poolSize int, opts []otelscheduler.Option, withBase bool, schedOpts []scheduler.Option) *env {
	t.Helper()
	e := &env{
		clk:    schedulertest.NewManualClock(epoch),
		reader: sdkmetric.NewManualReader(),
		spans:  tracetest.NewSpanRecorder(),
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(e.reader))
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.spans))
	opts = append([]otelscheduler.Option{
		otelscheduler.WithMeterProvider(mp),
		otelscheduler.WithTracerProvider(e.tp),
	}, opts...)
	inst, err := otelscheduler.New(opts...)
	require.NoError(t, err)
	e.inst = inst
	if withBase {
		var base context.Context
		base, e.request = e.tp.Tracer("test").Start(context.Background(), "request")
		schedOpts = append(schedOpts, scheduler.WithBaseContext(base))
	}
	all := append(inst.Options(),
		scheduler.WithClock(e.clk),
		scheduler.WithLogger(slog.New(slog.DiscardHandler)))
	s, err := scheduler.New(poolSize, append(all, schedOpts...)...)
	require.NoError(t, err)
	e.s = s
	require.NoError(t, inst.Register(s))
	t.Cleanup(func() {
		ctx := context.Background()
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(ctx))
		require.NoError(t, inst.Shutdown())
		require.NoError(t, mp.Shutdown(ctx))
		require.NoError(t, e.tp.Shutdown(ctx))
	})
	return e
}

// advance moves the clock by d and waits until the runs it made due are over.
func (e *env) advance(t *testing.T, d time.Duration) {
	t.Helper()
	e.clk.Advance(d)
	require.NoError(t, e.s.AwaitIdle(context.Background()))
}

// collect reads every metric from the SDK, by name.
func (e *env) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, e.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, otelscheduler.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// attrKey renders an attribute set as "k=v,k=v", sorted, for map keys.
func attrKey(set attribute.Set) string {
	var parts []string
	for _, kv := range set.ToSlice() {
		parts = append(parts, fmt.Sprintf("%s=%s", kv.Key, kv.Value.String()))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// sums returns an int64 sum's data points by attribute set.
func sums(t *testing.T, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.Truef(t, ok, "%s is %T, not an int64 sum", m.Name, m.Data)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		out[attrKey(dp.Attributes)] = dp.Value
	}
	return out
}

// histograms returns a float64 histogram's data points by attribute set.
func histograms(t *testing.T, m metricdata.Metrics) map[string]metricdata.HistogramDataPoint[float64] {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.Truef(t, ok, "%s is %T, not a float64 histogram", m.Name, m.Data)
	out := map[string]metricdata.HistogramDataPoint[float64]{}
	for _, dp := range h.DataPoints {
		out[attrKey(dp.Attributes)] = dp
	}
	return out
}

// spanAttrs returns a span's attributes by key.
func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// spanNamed returns the ended span with the given name; it fails the test
// unless there is exactly one.
func (e *env) spanNamed(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range e.spans.Ended() {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	require.Lenf(t, found, 1, "spans named %q", name)
	return found[0]
}

// ok, fails and panics are task bodies.
func ok(context.Context) error    { return nil }
func fails(context.Context) error { return errDiskFull }
func panics(context.Context) error {
	panic("boom")
}

// errDiskFull is what failing tasks return.
var errDiskFull = fmt.Errorf("disk full")
