package otelscheduler

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-stpe/scheduler"
)

// decorate is the scheduler decorator that wraps every run of task in a
// span. The span starts from the run's ctx, so its parent is the span of the
// scheduler's base context (scheduler.WithBaseContext), and the task gets a
// ctx carrying the run's span, so the spans it starts are the run's children.
func (i *Instrumentation) decorate(task scheduler.Task) scheduler.Task {
	// label is this task's, looked up at its first run and kept: a task's
	// name never changes, a name's label neither, and the runs of one task
	// never overlap, each happening before the next.
	var label *taskLabel
	return func(ctx context.Context) error {
		if i.stopped.Load() {
			return task(ctx)
		}
		run, haveRun := scheduler.CurrentRun(ctx)
		if label == nil {
			name := ""
			if haveRun && run.Future != nil {
				name = run.Future.Name()
			}
			label = i.names.label(name)
		}
		return i.runInSpan(ctx, task, label, run, haveRun)
	}
}

// runInSpan runs task once inside a span covering the body: from its call to
// its return, by the wall clock as every span's times are. The scheduler's
// own times are in the attributes: the due time, and the lateness the
// scheduler's clock measured when the worker took the task. The attributes
// are set in one call when the run ends, as the SDK copies them per call.
func (i *Instrumentation) runInSpan(ctx context.Context, task scheduler.Task, label *taskLabel, run scheduler.RunInfo, haveRun bool) (err error) {
	ctx, span := i.tracer.Start(ctx, label.spanName, label.spanStart...)
	recording := span.IsRecording()
	var attrs []attribute.KeyValue
	if recording {
		attrs = i.runAttributes(label, run, haveRun)
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		// The task panicked (or called runtime.Goexit). The panic goes on
		// to the scheduler, which makes it the run's *PanicError: re-raised
		// from here the stack still holds the task's frames.
		r := recover()
		if r == nil {
			span.SetStatus(codes.Error, "runtime.Goexit")
			span.SetAttributes(attrs...)
			span.End()
			return
		}
		if recording {
			recordPanic(span, r, attrs)
		}
		span.End()
		panic(r)
	}()
	err = task(ctx)
	returned = true
	if recording {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			attrs = append(attrs, OutcomeKey.String(OutcomeError), semconv.ErrorType(err))
		} else {
			attrs = append(attrs, OutcomeKey.String(OutcomeOK))
		}
		span.SetAttributes(attrs...)
	}
	span.End()
	return err
}

// runAttributes returns the attributes of a run's span known at its start,
// with room for the outcome and error.type: the task's own name if its label
// is "other", the due time, the lateness, whether the task is periodic, and
// the jitter if any.
func (i *Instrumentation) runAttributes(label *taskLabel, run scheduler.RunInfo, haveRun bool) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 7)
	if !haveRun {
		return attrs
	}
	if label == i.names.other {
		attrs = append(attrs, TaskNameKey.String(run.Future.Name()))
	}
	attrs = append(attrs,
		DueKey.String(run.Due.Format(time.RFC3339Nano)),
		LatenessKey.Float64(lateness(run).Seconds()),
		PeriodicKey.Bool(run.Future.IsPeriodic()),
	)
	if run.Jitter != 0 {
		attrs = append(attrs, JitterKey.Float64(run.Jitter.Seconds()))
	}
	return attrs
}

// recordPanic records a panic on span as an exception event with the
// semantic conventions' attributes, fails the span, and sets attrs with the
// outcome.
func recordPanic(span trace.Span, r any, attrs []attribute.KeyValue) {
	msg := fmt.Sprint(r)
	span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
		semconv.ExceptionType(fmt.Sprintf("%T", r)),
		semconv.ExceptionMessage(msg),
		semconv.ExceptionStacktrace(string(debug.Stack())),
	))
	span.SetStatus(codes.Error, "panic: "+msg)
	span.SetAttributes(append(attrs, OutcomeKey.String(OutcomePanic), semconv.ErrorTypeKey.String("panic"))...)
}
