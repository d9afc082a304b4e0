package otelcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
)

// inject is the Metadata hook: it writes the trace context of Schedule's
// ctx (the span active when the task is scheduled) with the propagator.
// A ctx without a span writes nothing, and the task stores no metadata.
func (i *Instrumentation) inject(ctx context.Context, _ string) map[string]string {
	if i.stopped.Load() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	i.propagator.Inject(ctx, carrier)
	return carrier
}

// startRun is the Run hook: it starts the run's span, a new trace linked
// to the span active when the task was scheduled (read from the task's
// metadata with the propagator), and returns the handler's ctx carrying it,
// and the baggage the propagator read, if any.
//
// The run's span is linked to the scheduling span, not its child: a
// durable task runs long after the request that scheduled it ended (hours
// later, after restarts), and perhaps several times (retries, runs lost to
// a dead node); as children those runs would stretch the request's trace
// over hours, and back ends that assemble a trace within a time window
// would show them as orphans. A link keeps each run its own trace, with
// its own sampling decision, one click from the request. The
// OpenTelemetry messaging conventions link a consumer's process span to
// the producer's the same way, for the same reasons.
func (i *Instrumentation) startRun(ctx context.Context, t cluster.Task, meta map[string]string) context.Context {
	if i.stopped.Load() {
		return ctx
	}
	l := i.kinds.label(t.Kind)
	opts := make([]trace.SpanStartOption, 0, len(l.spanStart)+3)
	opts = append(opts, l.spanStart...)
	opts = append(opts, trace.WithNewRoot(), trace.WithAttributes(i.runAttributes(l, t)...))
	if len(meta) > 0 {
		scheduling := i.propagator.Extract(context.Background(), propagation.MapCarrier(meta))
		if sc := trace.SpanContextFromContext(scheduling); sc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
		}
		if b := baggage.FromContext(scheduling); b.Len() > 0 {
			ctx = baggage.ContextWithBaggage(ctx, b)
		}
	}
	ctx, _ = i.tracer.Start(ctx, l.spanName, opts...)
	return ctx
}

// runAttributes are the attributes of a run's span known at its start:
// the task's own kind if its label is "other", the node's name once
// registered, the task's ID, attempt, lost runs and due time.
func (i *Instrumentation) runAttributes(l *kindLabel, t cluster.Task) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 6)
	if l.name == OtherKind {
		attrs = append(attrs, KindKey.String(t.Kind))
	}
	if name := i.nodeName.Load(); name != nil {
		attrs = append(attrs, *name)
	}
	return append(attrs,
		TaskIDKey.String(t.ID),
		AttemptKey.Int(t.Attempt),
		LostKey.Int(t.Lost),
		DueKey.String(t.Due.Format(time.RFC3339Nano)),
	)
}

// endRun ends the run's span, started by startRun in ctx, with the
// outcome: an error is recorded (an exception event, with the stack for a
// panic; error.type; status Error), and a run that was lost has status
// Error too, as its work will be done again. A canceled or handed-back run
// is no error.
func (i *Instrumentation) endRun(ctx context.Context, e cluster.RunEnd) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		span.End()
		return
	}
	attrs := []attribute.KeyValue{OutcomeKey.String(string(e.Outcome))}
	if e.Dead {
		attrs = append(attrs, DeadKey.Bool(true))
	}
	if e.Err != nil && (e.Outcome == cluster.OutcomeFailed || e.Outcome == cluster.OutcomeTimedOut) {
		recordError(span, e.Err)
		attrs = append(attrs, semconv.ErrorType(e.Err))
	}
	switch e.Outcome {
	case cluster.OutcomeFailed, cluster.OutcomeTimedOut:
		desc := string(e.Outcome)
		if e.Err != nil {
			desc = e.Err.Error()
		}
		span.SetStatus(codes.Error, desc)
	case cluster.OutcomeLost:
		span.SetStatus(codes.Error, "run lost: its outcome was not recorded and the task runs again")
	}
	span.SetAttributes(attrs...)
	span.End()
}

// recordError records err on span as an exception event; for a panic (a
// *scheduler.PanicError) the event carries the panic's value and stack.
func recordError(span trace.Span, err error) {
	var pe *scheduler.PanicError
	if !errors.As(err, &pe) {
		span.RecordError(err)
		return
	}
	span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
		semconv.ExceptionType(fmt.Sprintf("%T", pe.Value)),
		semconv.ExceptionMessage(err.Error()),
		semconv.ExceptionStacktrace(string(pe.Stack)),
	))
}
