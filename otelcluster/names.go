package otelcluster

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-stpe/scheduler/cluster"
)

// kindLabel is what one reported kind needs on the hot path, built once per
// kind so that recording allocates no attributes: the attribute sets as
// ready-made measurement options, and the span's name and start options.
type kindLabel struct {
	name     string // the reported kind: the task's, or "other"
	spanName string // "run " + name
	kind     measurement
	// byOutcome holds the sets of kind and outcome, by outcomeIndex.
	byOutcome [numOutcomes]measurement
	// spanStart starts a run's span: kind Consumer and the kind (but for
	// "other", whose spans carry each task's own kind).
	spanStart []trace.SpanStartOption
}

// measurement is one attribute set as ready-made options of a counter, of
// a histogram and of an observable instrument: made once, as a slice each,
// so that passing them on allocates nothing.
type measurement struct {
	add     []metric.AddOption
	record  []metric.RecordOption
	observe []metric.ObserveOption
}

// newMeasurement returns the options of the set of kvs.
func newMeasurement(kvs ...attribute.KeyValue) measurement {
	o := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return measurement{add: []metric.AddOption{o}, record: []metric.RecordOption{o}, observe: []metric.ObserveOption{o}}
}

// newKindLabel builds the label of a reported kind.
func newKindLabel(kind string) *kindLabel {
	l := &kindLabel{name: kind, spanName: "run " + kind, kind: newMeasurement(KindKey.String(kind))}
	for i, o := range outcomes {
		l.byOutcome[i] = newMeasurement(KindKey.String(kind), OutcomeKey.String(string(o)))
	}
	l.spanStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
	if kind != OtherKind {
		l.spanStart = append(l.spanStart, trace.WithAttributes(KindKey.String(kind)))
	}
	return l
}

// outcome returns the measurement of kind and outcome o.
func (l *kindLabel) outcome(o cluster.Outcome) measurement {
	if i := outcomeIndex(o); i >= 0 {
		return l.byOutcome[i]
	}
	return newMeasurement(KindKey.String(l.name), OutcomeKey.String(string(o)))
}

// kindTable maps kinds to their labels, admitting at most limit distinct
// kinds; the rest share the "other" label. A node runs only the kinds it
// handles, but may schedule any kind, so the bound matters for the
// scheduled counter.
type kindTable struct {
	limit  int
	other  *kindLabel
	labels sync.Map // kind → *kindLabel, at most limit entries

	mu       sync.Mutex // guards admitted, and serializes admissions into labels
	admitted int
}

// newKindTable returns a table admitting limit kinds.
func newKindTable(limit int) *kindTable {
	return &kindTable{limit: limit, other: newKindLabel(OtherKind)}
}

// label returns the label of kind. A kind seen before costs one sync.Map
// read; a kind beyond the bound also takes mu, as it is never stored.
func (t *kindTable) label(kind string) *kindLabel {
	if l, ok := t.labels.Load(kind); ok {
		return l.(*kindLabel)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.labels.Load(kind); ok {
		return l.(*kindLabel)
	}
	if t.admitted >= t.limit {
		return t.other
	}
	l := newKindLabel(kind)
	t.labels.Store(kind, l)
	t.admitted++
	return l
}
