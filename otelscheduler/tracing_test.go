package otelscheduler_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/otelscheduler"
)

// TestSpanParentedUnderBaseContext: a run's span is a child of the span in
// the scheduler's base context, and a span the task starts from its ctx is a
// child of the run's span; the run's span carries its due time and
// lateness, and CurrentRun still works on the task's ctx.
func TestSpanParentedUnderBaseContext(t *testing.T) {
	e := newEnvWithBase(t)
	var sawRun bool // written by the task, read after AwaitIdle

	_, err := e.s.Schedule(func(ctx context.Context) error {
		_, sawRun = scheduler.CurrentRun(ctx)
		_, inner := e.tp.Tracer("test").Start(ctx, "inner")
		inner.End()
		return nil
	}, 10*time.Millisecond, scheduler.WithName("job"))
	require.NoError(t, err)
	e.advance(t, 25*time.Millisecond)
	e.request.End()

	assert.True(t, sawRun, "CurrentRun on the task's ctx")
	parent := e.spanNamed(t, "request")
	run := e.spanNamed(t, "run job")
	inner := e.spanNamed(t, "inner")
	assert.Equal(t, parent.SpanContext().TraceID(), run.SpanContext().TraceID())
	assert.Equal(t, parent.SpanContext().SpanID(), run.Parent().SpanID())
	assert.Equal(t, run.SpanContext().SpanID(), inner.Parent().SpanID())
	assert.Equal(t, trace.SpanKindInternal, run.SpanKind())

	a := spanAttrs(run)
	assert.Equal(t, epoch.Add(10*time.Millisecond).Format(time.RFC3339Nano), a[otelscheduler.DueKey].AsString())
	assert.InDelta(t, 0.015, a[otelscheduler.LatenessKey].AsFloat64(), 1e-12)
	assert.Equal(t, "job", a[otelscheduler.TaskNameKey].AsString())
	assert.Equal(t, otelscheduler.OutcomeOK, a[otelscheduler.OutcomeKey].AsString())
	assert.False(t, a[otelscheduler.PeriodicKey].AsBool())
	_, hasJitter := a[otelscheduler.JitterKey]
	assert.False(t, hasJitter)
	assert.Equal(t, codes.Unset, run.Status().Code)
}

// TestSpanRecordsError: a run that returns an error has it recorded (an
// exception event, error.type, status Error).
func TestSpanRecordsError(t *testing.T) {
	e := newEnv(t, 1, nil)
	_, err := e.s.Schedule(fails, 0, scheduler.WithName("failing"))
	require.NoError(t, err)
	e.advance(t, 0)

	run := e.spanNamed(t, "run failing")
	assert.Equal(t, sdktrace.Status{Code: codes.Error, Description: "disk full"}, run.Status())
	a := spanAttrs(run)
	assert.Equal(t, otelscheduler.OutcomeError, a[otelscheduler.OutcomeKey].AsString())
	assert.Equal(t, "*errors.errorString", a["error.type"].AsString())
	ev := exceptionEvent(t, run)
	assert.Equal(t, "disk full", ev["exception.message"].AsString())
}

// TestSpanRecordsPanic: a run that panics has an exception event with the
// stack and status Error, and the panic reaches the scheduler unchanged: the
// future's *PanicError has the value and a stack through the task.
func TestSpanRecordsPanic(t *testing.T) {
	e := newEnv(t, 1, nil)
	f, err := e.s.Schedule(panics, 0, scheduler.WithName("panicking"))
	require.NoError(t, err)
	e.advance(t, 0)

	var pe *scheduler.PanicError
	require.ErrorAs(t, f.Wait(context.Background()), &pe)
	assert.Equal(t, "boom", pe.Value)
	assert.Contains(t, string(pe.Stack), "otelscheduler_test.panics")

	run := e.spanNamed(t, "run panicking")
	assert.Equal(t, sdktrace.Status{Code: codes.Error, Description: "panic: boom"}, run.Status())
	assert.Equal(t, otelscheduler.OutcomePanic, spanAttrs(run)[otelscheduler.OutcomeKey].AsString())
	ev := exceptionEvent(t, run)
	assert.Equal(t, "boom", ev["exception.message"].AsString())
	assert.Equal(t, "string", ev["exception.type"].AsString())
	assert.True(t, strings.Contains(ev["exception.stacktrace"].AsString(), "otelscheduler_test.panics"))
}

// TestPeriodicRunsOneSpanEach: every run of a periodic task is its own span.
func TestPeriodicRunsOneSpanEach(t *testing.T) {
	e := newEnv(t, 1, nil)
	_, err := e.s.ScheduleWithFixedDelay(ok, time.Millisecond, time.Millisecond, scheduler.WithName("beat"))
	require.NoError(t, err)
	for range 4 {
		e.advance(t, time.Millisecond)
	}
	spans := e.spans.Ended()
	require.Len(t, spans, 4)
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		assert.Equal(t, "run beat", s.Name())
		assert.True(t, spanAttrs(s)[otelscheduler.PeriodicKey].AsBool())
		assert.False(t, s.Parent().IsValid(), "no base span: a root span")
		ids[s.SpanContext().SpanID()] = true
	}
	assert.Len(t, ids, 4)
}

// exceptionEvent returns the attributes of span's one "exception" event.
func exceptionEvent(t *testing.T, span sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	t.Helper()
	var found []map[attribute.Key]attribute.Value
	for _, ev := range span.Events() {
		if ev.Name == "exception" {
			a := map[attribute.Key]attribute.Value{}
			for _, kv := range ev.Attributes {
				a[kv.Key] = kv.Value
			}
			found = append(found, a)
		}
	}
	require.Len(t, found, 1)
	return found[0]
}

// TestTriggerRunDueIsTheTriggersTime: a trigger task's span carries the time
// its Trigger returned as the due time.
func TestTriggerRunDueIsTheTriggersTime(t *testing.T) {
	e := newEnv(t, 1, nil)
	at := epoch.Add(90 * time.Second)
	_, err := e.s.ScheduleWithTrigger(ok, scheduler.TriggerFunc(func(last time.Time) time.Time {
		if last.Before(at) {
			return at
		}
		return time.Time{}
	}), scheduler.WithName("calendar"))
	require.NoError(t, err)
	e.advance(t, 100*time.Second)

	a := spanAttrs(e.spanNamed(t, "run calendar"))
	assert.Equal(t, at.Format(time.RFC3339Nano), a[otelscheduler.DueKey].AsString())
	assert.InDelta(t, 10.0, a[otelscheduler.LatenessKey].AsFloat64(), 1e-9)
	assert.True(t, a[otelscheduler.PeriodicKey].AsBool())
}

// TestSpanEndsOnGoexit: a task that calls runtime.Goexit still ends its
// span, failed; the scheduler replaces the worker and goes on. (The run is
// not in the metrics: the scheduler calls no Observe hook for it.)
func TestSpanEndsOnGoexit(t *testing.T) {
	e := newEnv(t, 1, nil)
	_, err := e.s.Schedule(func(context.Context) error {
		runtime.Goexit()
		return nil
	}, 0, scheduler.WithName("exits"))
	require.NoError(t, err)
	e.advance(t, 0)
	_, err = e.s.Schedule(ok, 0, scheduler.WithName("after"))
	require.NoError(t, err)
	e.advance(t, 0)

	assert.Equal(t, sdktrace.Status{Code: codes.Error, Description: "runtime.Goexit"},
		e.spanNamed(t, "run exits").Status())
	assert.Equal(t, codes.Unset, e.spanNamed(t, "run after").Status().Code)
}
