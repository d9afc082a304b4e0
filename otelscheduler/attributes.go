package otelscheduler

import "go.opentelemetry.io/otel/attribute"

// The attributes of the metrics and spans. The OpenTelemetry semantic
// conventions define none for schedulers or task runs, so they live in a
// "scheduler.*" namespace of their own; error.type and the exception.*
// attributes of spans are the semantic conventions' own.
const (
	// TaskNameKey is the task's name (scheduler.WithName), bounded by
	// WithMaxTaskNames on metrics; spans carry the name as given.
	TaskNameKey = attribute.Key("scheduler.task.name")
	// OutcomeKey is a run's outcome: [OutcomeOK], [OutcomeError] or
	// [OutcomePanic].
	OutcomeKey = attribute.Key("scheduler.run.outcome")
	// SchedulerNameKey is the name given by WithSchedulerName.
	SchedulerNameKey = attribute.Key("scheduler.name")
	// DueKey is a span attribute: the run's nominal due time
	// (scheduler.RunInfo.Due), RFC 3339 with nanoseconds.
	DueKey = attribute.Key("scheduler.run.due")
	// LatenessKey is a span attribute: the run's start lateness in seconds,
	// Started - Due - Jitter (scheduler.RunInfo).
	LatenessKey = attribute.Key("scheduler.run.lateness")
	// JitterKey is a span attribute, present when the run had jitter
	// (scheduler.WithJitter): its offset in seconds.
	JitterKey = attribute.Key("scheduler.run.jitter")
	// PeriodicKey is a span attribute: whether the task is periodic.
	PeriodicKey = attribute.Key("scheduler.task.periodic")
)

// The values of the attributes above.
const (
	// OutcomeOK is the outcome of a run that returned nil.
	OutcomeOK = "ok"
	// OutcomeError is the outcome of a run that returned an error (a run
	// canceled by ShutdownNow that returned ctx.Err() included).
	OutcomeError = "error"
	// OutcomePanic is the outcome of a run that panicked, or whose
	// BeforeExecute hook did: its error is a *scheduler.PanicError
	// (found with errors.As).
	OutcomePanic = "panic"
	// UnnamedTaskName is the task name reported for tasks without one.
	UnnamedTaskName = "unnamed"
	// OtherTaskName is the task name reported for names beyond
	// WithMaxTaskNames.
	OtherTaskName = "other"
)
