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
// scheduler's clock measured when the worker took the task.
func (i *Instrumentation) runInSpan(ctx context.Context, task scheduler.Task, label *taskLabel, run scheduler.RunInfo, haveRun bool) (err error) {
	ctx, span := i.tracer.Start(ctx, label.spanName, label.spanStart...)
	if label == i.names.other && haveRun && span.IsRecording() {
		span.SetAttributes(TaskNameKey.String(run.Future.Name())) // its own name, not "other"
	}
	if haveRun && span.IsRecording() {
		span.SetAttributes(
			DueKey.String(run.Due.Format(time.RFC3339Nano)),
			LatenessKey.Float64(lateness(run).Seconds()),
			PeriodicKey.Bool(run.Future.IsPeriodic()),
		)
		if run.Jitter != 0 {
			span.SetAttributes(JitterKey.Float64(run.Jitter.Seconds()))
		}
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
			span.End()
			return
		}
		recordPanic(span, r)
		span.End()
		panic(r)
	}()
	err = task(ctx)
	returned = true
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(OutcomeKey.String(OutcomeError), semconv.ErrorType(err))
	} else {
		span.SetAttributes(outcomeOKAttr...)
	}
	span.End()
	return err
}

// outcomeOKAttr is the outcome attribute of a run that succeeded, made
// once: a run that succeeds allocates no attribute.
var outcomeOKAttr = []attribute.KeyValue{OutcomeKey.String(OutcomeOK)}

// recordPanic records a panic on span as an exception event with the
// semantic conventions' attributes, and fails the span.
func recordPanic(span trace.Span, r any) {
	msg := fmt.Sprint(r)
	span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
		semconv.ExceptionType(fmt.Sprintf("%T", r)),
		semconv.ExceptionMessage(msg),
		semconv.ExceptionStacktrace(string(debug.Stack())),
	))
	span.SetStatus(codes.Error, "panic: "+msg)
	span.SetAttributes(OutcomeKey.String(OutcomePanic), semconv.ErrorTypeKey.String("panic"))
}
