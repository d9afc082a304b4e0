package otelscheduler

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// outcome indexes the precomputed measurement options of a task name.
type outcome int

const (
	outcomeOK outcome = iota
	outcomeError
	outcomePanic
	numOutcomes
)

// outcomeValues are the OutcomeKey values by outcome.
var outcomeValues = [numOutcomes]string{OutcomeOK, OutcomeError, OutcomePanic}

// taskLabel is what one reported task name needs on the hot path, built once
// per name so that a run allocates no attributes: the attribute sets, as
// ready-made measurement options, and the span name.
type taskLabel struct {
	spanName string // "run " + the reported name: the task's, "unnamed" or "other"
	add      [numOutcomes][]metric.AddOption
	record   [numOutcomes][]metric.RecordOption
	lateness []metric.RecordOption // no outcome: lateness is known at the start
	// spanStart starts a run's span: kind Internal, the task name (but for
	// "other", whose spans carry each task's own name) and scheduler.name.
	spanStart []trace.SpanStartOption
}

// newTaskLabel builds the label of a reported name; base holds the
// attributes every measurement carries (scheduler.name).
func newTaskLabel(name string, base []attribute.KeyValue) *taskLabel {
	l := &taskLabel{spanName: "run " + name}
	with := func(kv ...attribute.KeyValue) attribute.Set {
		all := append(append([]attribute.KeyValue{TaskNameKey.String(name)}, base...), kv...)
		return attribute.NewSet(all...)
	}
	for o := range numOutcomes {
		set := with(OutcomeKey.String(outcomeValues[o]))
		l.add[o] = []metric.AddOption{metric.WithAttributeSet(set)}
		l.record[o] = []metric.RecordOption{metric.WithAttributeSet(set)}
	}
	l.lateness = []metric.RecordOption{metric.WithAttributeSet(with())}
	spanAttrs := base
	if name != OtherTaskName {
		spanAttrs = append([]attribute.KeyValue{TaskNameKey.String(name)}, base...)
	}
	l.spanStart = []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(spanAttrs...),
	}
	return l
}

// nameTable maps task names to their labels, admitting at most limit
// distinct names; the rest share the "other" label.
type nameTable struct {
	limit   int
	base    []attribute.KeyValue
	unnamed *taskLabel
	other   *taskLabel
	labels  sync.Map // task name → *taskLabel, at most limit entries

	mu       sync.Mutex // guards admitted, and serializes admissions into labels
	admitted int
}

// newNameTable returns a table admitting limit names, whose labels carry base.
func newNameTable(limit int, base []attribute.KeyValue) *nameTable {
	return &nameTable{
		limit:   limit,
		base:    base,
		unnamed: newTaskLabel(UnnamedTaskName, base),
		other:   newTaskLabel(OtherTaskName, base),
	}
}

// label returns the label of a task name. A name seen before costs one
// sync.Map read; a name beyond the bound also takes mu, as it is never stored.
func (t *nameTable) label(name string) *taskLabel {
	if name == "" {
		return t.unnamed
	}
	if l, ok := t.labels.Load(name); ok {
		return l.(*taskLabel)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.labels.Load(name); ok {
		return l.(*taskLabel)
	}
	if t.admitted >= t.limit {
		return t.other
	}
	l := newTaskLabel(name, t.base)
	t.labels.Store(name, l)
	t.admitted++
	return l
}
