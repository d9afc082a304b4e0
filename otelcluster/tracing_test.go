package otelcluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/otelcluster"
)

// TestRunSpanIsANewTraceLinkedToTheSchedulingSpan: a task scheduled inside
// a request's span runs in a span of its own trace, linked to the request's
// span, with the task's ID, kind, attempt and due time; a span the handler
// starts from its ctx is the run's child.
func TestRunSpanIsANewTraceLinkedToTheSchedulingSpan(t *testing.T) {
	var e *env
	e = newEnv(t, map[string]cluster.Handler{"mail": func(ctx context.Context, _ cluster.Task) error {
		_, inner := e.tp.Tracer("test").Start(ctx, "inner")
		inner.End()
		return nil
	}}, nil)
	e.start(t)
	ctx, request := e.tp.Tracer("test").Start(context.Background(), "request")
	due := time.Now()
	id, err := e.n.Schedule(ctx, "mail", nil, due)
	require.NoError(t, err)
	request.End()
	e.waitEnded(t, 1)

	req := e.spanNamed(t, "request")
	run := e.spanNamed(t, "run mail")
	inner := e.spanNamed(t, "inner")
	assert.NotEqual(t, req.SpanContext().TraceID(), run.SpanContext().TraceID(), "a trace of its own")
	assert.False(t, run.Parent().IsValid(), "a root span")
	require.Len(t, run.Links(), 1)
	link := run.Links()[0].SpanContext
	assert.Equal(t, req.SpanContext().TraceID(), link.TraceID(), "linked to the request's span")
	assert.Equal(t, req.SpanContext().SpanID(), link.SpanID(), "linked to the request's span")
	assert.True(t, link.IsSampled())
	assert.Equal(t, run.SpanContext().SpanID(), inner.Parent().SpanID(), "the handler's ctx carries the run's span")
	assert.Equal(t, trace.SpanKindConsumer, run.SpanKind())
	a := spanAttrs(run)
	assert.Equal(t, "mail", a[otelcluster.KindKey].AsString())
	assert.Equal(t, id, a[otelcluster.TaskIDKey].AsString())
	assert.Equal(t, int64(0), a[otelcluster.AttemptKey].AsInt64())
	assert.Equal(t, int64(0), a[otelcluster.LostKey].AsInt64())
	assert.Equal(t, time.UnixMicro(due.UnixMicro()).Format(time.RFC3339Nano), a[otelcluster.DueKey].AsString())
	assert.Equal(t, "succeeded", a[otelcluster.OutcomeKey].AsString())
	assert.Equal(t, e.n.Name(), a[otelcluster.NodeKey].AsString())
	assert.Equal(t, codes.Unset, run.Status().Code)
}

// TestRunSpanWithoutASchedulingSpanHasNoLink: a task scheduled outside any
// span, or a periodic occurrence, runs in a span without links.
func TestRunSpanWithoutASchedulingSpanHasNoLink(t *testing.T) {
	e := newEnv(t, map[string]cluster.Handler{"mail": ok}, nil)
	e.start(t)
	e.schedule(t, context.Background(), "mail")
	e.waitEnded(t, 1)
	assert.Empty(t, e.spanNamed(t, "run mail").Links())
}

// TestFailedRunSpanRecordsTheErrorAndTheDeath: each failed run's span has
// the error (an exception event, error.type, status Error); the last one's
// says the task is dead.
func TestFailedRunSpanRecordsTheErrorAndTheDeath(t *testing.T) {
	e := newEnv(t, map[string]cluster.Handler{"report": func(context.Context, cluster.Task) error {
		return errors.New("upstream unavailable")
	}}, nil)
	e.start(t)
	e.schedule(t, context.Background(), "report", cluster.WithTaskMaxRetries(1))
	e.waitEnded(t, 2)

	spans := e.spans.Ended()
	require.Len(t, spans, 2)
	for attempt, s := range spans {
		a := spanAttrs(s)
		assert.Equal(t, int64(attempt), a[otelcluster.AttemptKey].AsInt64())
		assert.Equal(t, "failed", a[otelcluster.OutcomeKey].AsString())
		assert.Equal(t, "*errors.errorString", a["error.type"].AsString())
		assert.Equal(t, sdktrace.Status{Code: codes.Error, Description: "upstream unavailable"}, s.Status())
		assert.Equal(t, "upstream unavailable", exceptionEvent(t, s)["exception.message"].AsString())
		_, dead := a[otelcluster.DeadKey]
		assert.Equal(t, attempt == 1, dead, "attempt %d", attempt)
	}
}

// TestPanickingRunSpanHasThePanicsStack: a panic is an exception event
// with the panic's value type and the stack through the handler.
func TestPanickingRunSpanHasThePanicsStack(t *testing.T) {
	e := newEnv(t, map[string]cluster.Handler{"p": func(context.Context, cluster.Task) error {
		panic(errors.New("kaput"))
	}}, nil)
	e.start(t)
	e.schedule(t, context.Background(), "p", cluster.WithTaskMaxRetries(0))
	e.waitEnded(t, 1)

	run := e.spanNamed(t, "run p")
	assert.Equal(t, codes.Error, run.Status().Code)
	ev := exceptionEvent(t, run)
	assert.Equal(t, "*errors.errorString", ev["exception.type"].AsString())
	assert.Contains(t, ev["exception.message"].AsString(), "kaput")
	assert.Contains(t, ev["exception.stacktrace"].AsString(), "TestPanickingRunSpanHasThePanicsStack")
	assert.True(t, spanAttrs(run)[otelcluster.DeadKey].AsBool())
}

// TestTimedOutRunSpanHasTheTimeoutStatus: a run past its time limit ends
// in status Error with the limit's cause.
func TestTimedOutRunSpanHasTheTimeoutStatus(t *testing.T) {
	e := newEnv(t, nil, nil)
	require.NoError(t, e.n.Handle("slow", func(ctx context.Context, _ cluster.Task) error {
		<-ctx.Done()
		return ctx.Err()
	}, cluster.WithTaskTimeout(20*time.Millisecond)))
	e.start(t)
	e.schedule(t, context.Background(), "slow", cluster.WithTaskMaxRetries(0))
	e.waitEnded(t, 1)
	run := e.spanNamed(t, "run slow")
	assert.Equal(t, "timed_out", spanAttrs(run)[otelcluster.OutcomeKey].AsString())
	assert.Equal(t, codes.Error, run.Status().Code)
	// "cluster: run ID: handler time limit passed after 20ms": the
	// sentinel's words, under the package's prefix once.
	assert.Contains(t, run.Status().Description, strings.TrimPrefix(cluster.ErrTaskTimeout.Error(), "cluster: ")+" after 20ms")
}

// TestBaggageReachesTheHandlerWithACompositePropagator: with the W3C
// baggage propagator added, the request's baggage is in the handler's
// ctx.
func TestBaggageReachesTheHandlerWithACompositePropagator(t *testing.T) {
	got := make(chan string, 1)
	e := newEnv(t, map[string]cluster.Handler{"mail": func(ctx context.Context, _ cluster.Task) error {
		got <- baggage.FromContext(ctx).Member("tenant").Value()
		return nil
	}}, []otelcluster.Option{otelcluster.WithPropagator(
		propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))})
	e.start(t)
	m, err := baggage.NewMember("tenant", "acme")
	require.NoError(t, err)
	b, err := baggage.New(m)
	require.NoError(t, err)
	ctx, request := e.tp.Tracer("test").Start(baggage.ContextWithBaggage(context.Background(), b), "request")
	e.schedule(t, ctx, "mail")
	request.End()
	e.waitEnded(t, 1)
	assert.Equal(t, "acme", <-got)
	assert.Len(t, e.spanNamed(t, "run mail").Links(), 1)
}

// TestSpanStartedBeforeShutdownStillEnds: Shutdown while a run is in
// flight does not leave its span open.
func TestSpanStartedBeforeShutdownStillEnds(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	e := newEnv(t, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error {
		started <- struct{}{}
		<-release
		return nil
	}}, nil)
	e.start(t)
	e.schedule(t, context.Background(), "k")
	<-started
	require.NoError(t, e.inst.Shutdown())
	close(release)
	e.waitEnded(t, 1)
	assert.Equal(t, "succeeded", spanAttrs(e.spanNamed(t, "run k"))[otelcluster.OutcomeKey].AsString())
}

// TestNoopTracerProviderTurnsTracingOff: with a no-op TracerProvider the
// observer stores no metadata and wraps no handler ctx.
func TestNoopTracerProviderTurnsTracingOff(t *testing.T) {
	inst, err := otelcluster.New(otelcluster.WithTracerProvider(tracenoop.NewTracerProvider()))
	require.NoError(t, err)
	defer inst.Shutdown()
	obs := inst.Observer()
	assert.Nil(t, obs.Metadata)
	assert.Nil(t, obs.Run)
	assert.NotNil(t, obs.Ended)
}

// exceptionEvent returns the attributes of a span's one exception event.
func exceptionEvent(t *testing.T, s sdktrace.ReadOnlySpan) map[string]attribute.Value {
	t.Helper()
	var found []map[string]attribute.Value
	for _, ev := range s.Events() {
		if ev.Name != "exception" {
			continue
		}
		attrs := map[string]attribute.Value{}
		for _, kv := range ev.Attributes {
			attrs[string(kv.Key)] = kv.Value
		}
		found = append(found, attrs)
	}
	require.Len(t, found, 1, "exception events")
	return found[0]
}
