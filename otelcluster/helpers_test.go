package otelcluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/otelcluster"
	"github.com/go-stpe/scheduler/otelcluster/internal/redisserver"
)

// env is one instrumented node on its own redis-server, with the real SDK
// behind it: a ManualReader for metrics, a SpanRecorder for spans.
type env struct {
	rdb    *redis.Client
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	inst   *otelcluster.Instrumentation
	n      *cluster.Node
	// ended receives each run's end once the instrumentation's Ended
	// hook has recorded it (metrics and span).
	ended chan cluster.RunEnd
	// sampled receives a signal once the PendingSampled hook has stored
	// a sample; lost receives each run the RunLost hook has counted.
	sampled chan struct{}
	lost    chan cluster.LostRun
}

// nodeOptions are short times for tests: a lease of 2 s, a window of 5 s,
// retries after 5 ms, and no logging.
func nodeOptions() []cluster.Option {
	return []cluster.Option{
		cluster.WithLease(2 * time.Second),
		cluster.WithWindow(5 * time.Second),
		cluster.WithSweepInterval(time.Second),
		cluster.WithBackoff(func(int) time.Duration { return 5 * time.Millisecond }),
		cluster.WithLogger(slog.New(slog.DiscardHandler)),
	}
}

// newEnv builds an env whose node handles handlers (each kind with its
// HandleOptions, if any, in opts), instrumented with opts, and starts it.
// Everything is stopped when the test ends.
func newEnv(t *testing.T, handlers map[string]cluster.Handler, opts []otelcluster.Option, nodeOpts ...cluster.Option) *env {
	t.Helper()
	return newEnvOn(t, redisserver.Start(t), handlers, opts, nodeOpts...)
}

// newEnvOn is newEnv on the redis-server at addr, which other envs may
// share.
func newEnvOn(t *testing.T, addr string, handlers map[string]cluster.Handler, opts []otelcluster.Option, nodeOpts ...cluster.Option) *env {
	t.Helper()
	e := &env{
		rdb:     redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32}),
		reader:  sdkmetric.NewManualReader(),
		spans:   tracetest.NewSpanRecorder(),
		ended:   make(chan cluster.RunEnd, 64),
		sampled: make(chan struct{}, 1),
		lost:    make(chan cluster.LostRun, 64),
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(e.reader))
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.spans))
	inst, err := otelcluster.New(append([]otelcluster.Option{
		otelcluster.WithMeterProvider(mp),
		otelcluster.WithTracerProvider(e.tp),
	}, opts...)...)
	require.NoError(t, err)
	e.inst = inst
	obs := inst.Observer()
	recordEnd := obs.Ended
	obs.Ended = func(ctx context.Context, r cluster.RunEnd) {
		recordEnd(ctx, r)
		e.ended <- r
	}
	recordSample := obs.PendingSampled
	obs.PendingSampled = func(samples []cluster.PendingSample) {
		recordSample(samples)
		select {
		case e.sampled <- struct{}{}:
		default:
		}
	}
	recordLost := obs.RunLost
	obs.RunLost = func(l cluster.LostRun) {
		recordLost(l)
		e.lost <- l
	}
	n, err := cluster.New(e.rdb, append(append(nodeOptions(), nodeOpts...), cluster.WithObserver(obs))...)
	require.NoError(t, err)
	e.n = n
	require.NoError(t, inst.Register(n))
	t.Cleanup(func() {
		ctx := context.Background()
		n.StopNow()
		require.NoError(t, inst.Shutdown())
		require.NoError(t, mp.Shutdown(ctx))
		require.NoError(t, e.tp.Shutdown(ctx))
		require.NoError(t, e.rdb.Close())
	})
	for kind, h := range handlers {
		require.NoError(t, n.Handle(kind, h))
	}
	return e
}

// start starts the env's node.
func (e *env) start(t *testing.T) {
	t.Helper()
	require.NoError(t, e.n.Start(context.Background()))
}

// schedule stores a task of kind due now, with opts.
func (e *env) schedule(t *testing.T, ctx context.Context, kind string, opts ...cluster.ScheduleOption) string {
	t.Helper()
	id, err := e.n.Schedule(ctx, kind, nil, time.Now(), opts...)
	require.NoError(t, err)
	return id
}

// waitEnded waits for k runs to end and returns them.
func (e *env) waitEnded(t *testing.T, k int) []cluster.RunEnd {
	t.Helper()
	var out []cluster.RunEnd
	for range k {
		select {
		case r := <-e.ended:
			out = append(out, r)
		case <-time.After(20 * time.Second):
			t.Fatalf("timed out waiting for run %d of %d to end", len(out)+1, k)
		}
	}
	return out
}

// collect reads every metric from the SDK, by name.
func (e *env) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, e.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, otelcluster.ScopeName, sm.Scope.Name)
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
		parts = append(parts, fmt.Sprintf("%s=%s", kv.Key, kv.Value.Emit()))
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

// counts returns a float64 histogram's counts by attribute set.
func counts(t *testing.T, m metricdata.Metrics) map[string]uint64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.Truef(t, ok, "%s is %T, not a float64 histogram", m.Name, m.Data)
	out := map[string]uint64{}
	for _, dp := range h.DataPoints {
		out[attrKey(dp.Attributes)] = dp.Count
	}
	return out
}

// gauges returns a float64 gauge's data points by attribute set.
func gauges(t *testing.T, m metricdata.Metrics) map[string]float64 {
	t.Helper()
	g, ok := m.Data.(metricdata.Gauge[float64])
	require.Truef(t, ok, "%s is %T, not a float64 gauge", m.Name, m.Data)
	out := map[string]float64{}
	for _, dp := range g.DataPoints {
		out[attrKey(dp.Attributes)] = dp.Value
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

// spanAttrs returns a span's attributes by key.
func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// ok is a handler that succeeds.
func ok(context.Context, cluster.Task) error { return nil }
