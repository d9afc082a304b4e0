package otelcluster

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
)

// ScopeName is the instrumentation scope of the meter and tracer, as the
// contrib instrumentations name theirs after their import path.
const ScopeName = "github.com/go-stpe/scheduler/otelcluster"

// Instrumentation reports what one cluster.Node does to OpenTelemetry:
// metrics and spans through the Observer it gives to cluster.New (the
// pending gauges from the samples the Observer hears), and the running and
// window gauges once Register is called. It is meant for one
// Node. An Instrumentation comes only from New; its methods are safe for
// concurrent use.
type Instrumentation struct {
	tracer     trace.Tracer
	meter      metric.Meter
	propagator propagation.TextMapPropagator
	kinds      *kindTable
	tracing    bool                               // false for a no-op TracerProvider: no metadata, no spans
	stopped    atomic.Bool                        // set by Shutdown: the hooks record nothing more
	nodeName   atomic.Pointer[attribute.KeyValue] // NodeKey of the registered node, for spans

	scheduled metric.Int64Counter
	claimed   metric.Int64Counter
	runs      metric.Int64Counter
	dead      metric.Int64Counter
	duration  metric.Float64Histogram
	lateness  metric.Float64Histogram
	active    metric.Int64ObservableUpDownCounter
	windowed  metric.Int64ObservableUpDownCounter
	redis     metric.Float64Histogram
	calls     sync.Map // command + " " + script → measurement of a successful call

	pendingTasks  metric.Int64ObservableUpDownCounter
	oldestOverdue metric.Float64ObservableGauge
	pending       pendingSamples
	pendingReg    metric.Registration // the pending gauges' callback, from New until Shutdown

	mu           sync.Mutex // guards registration and shutdown
	registration metric.Registration
	shutdown     bool
}

// New returns an Instrumentation built from opts. It fails with an error
// wrapping scheduler.ErrInvalidArgument for a bad option, or with the
// meter's error if an instrument cannot be made.
func New(opts ...Option) (*Instrumentation, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	i := &Instrumentation{
		tracer:     cfg.tracerProvider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		meter:      cfg.meterProvider.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL)),
		propagator: cfg.propagator,
		kinds:      newKindTable(cfg.maxKinds),
		tracing:    !isNoopTracerProvider(cfg.tracerProvider),
	}
	if err := i.newInstruments(); err != nil {
		return nil, fmt.Errorf("otelcluster: %w", err)
	}
	reg, err := i.meter.RegisterCallback(i.observePendingGauges, i.pendingTasks, i.oldestOverdue)
	if err != nil {
		return nil, fmt.Errorf("otelcluster: %w", err)
	}
	i.pendingReg = reg
	return i, nil
}

// Observer returns the hooks that report the node's tasks, runs, Redis
// calls, pending samples and the runs its reaper finds lost; give it to
// cluster.New with cluster.WithObserver:
//
//	n, err := cluster.New(rdb, cluster.WithObserver(inst.Observer()))
//
// The hooks are fixed when the node is made, which is why this is a
// separate step from Register. With a no-op TracerProvider
// (go.opentelemetry.io/otel/trace/noop) it sets neither Metadata nor Run:
// metrics only, and no trace context stored with the tasks.
func (i *Instrumentation) Observer() cluster.Observer {
	o := cluster.Observer{
		Scheduled: i.observeScheduled,
		Claimed:   i.observeClaimed,
		Ended:     i.observeEnded,
		RedisCall: i.observeRedisCall,

		PendingSampled: i.observePending,
		RunLost:        i.observeLost,
	}
	if i.tracing {
		o.Metadata = i.inject
		o.Run = i.startRun
	}
	return o
}

// isNoopTracerProvider reports whether tp is the trace API's no-op
// provider, whose spans record nothing. The global provider is not: an
// application may set the real one after New.
func isNoopTracerProvider(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case noop.TracerProvider, *noop.TracerProvider:
		return true
	}
	return false
}

// Register starts reporting n's running tasks and window (read from
// n.Stats at each collection), and names n on the spans of the runs that
// start after it (scheduler.cluster.node.name). It may be called once; a second call, a nil
// n, or a call after Shutdown fails with an error wrapping
// scheduler.ErrInvalidArgument.
func (i *Instrumentation) Register(n *cluster.Node) error {
	if n == nil {
		return fmt.Errorf("otelcluster: Register(nil): %w", scheduler.ErrInvalidArgument)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	switch {
	case i.shutdown:
		return fmt.Errorf("otelcluster: Register after Shutdown: %w", scheduler.ErrInvalidArgument)
	case i.registration != nil:
		return fmt.Errorf("otelcluster: Register called twice: %w", scheduler.ErrInvalidArgument)
	}
	reg, err := i.meter.RegisterCallback(i.observeStats(n), i.active, i.windowed)
	if err != nil {
		return fmt.Errorf("otelcluster: %w", err)
	}
	i.registration = reg
	name := NodeKey.String(n.Name())
	i.nodeName.Store(&name)
	return nil
}

// Shutdown stops all reporting: the gauges are unregistered, and the hooks
// record nothing more (they stay in the node, as cheap no-ops; a span
// started before Shutdown still ends with its run). Later calls do nothing
// and return nil. It does not shut down the providers, which belong to the
// application.
func (i *Instrumentation) Shutdown() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.shutdown {
		return nil
	}
	i.shutdown = true
	i.stopped.Store(true)
	err := i.pendingReg.Unregister()
	if i.registration != nil {
		err = errors.Join(err, i.registration.Unregister())
		i.registration = nil
	}
	if err != nil {
		return fmt.Errorf("otelcluster: %w", err)
	}
	return nil
}
