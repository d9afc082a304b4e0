package otelscheduler

import (
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/go-stpe/scheduler"
)

// ScopeName is the instrumentation scope of the meter and tracer, as the
// contrib instrumentations name theirs after their import path.
const ScopeName = "github.com/go-stpe/scheduler/otelscheduler"

// Instrumentation reports what one Scheduler does to OpenTelemetry: the
// run metrics and spans through the options it gives to scheduler.New, and
// the pool and queue instruments once Register is called. It is meant for
// one Scheduler: for several, make one each, told apart by WithSchedulerName.
// An Instrumentation comes only from New; its methods are safe for
// concurrent use.
type Instrumentation struct {
	tracer  trace.Tracer
	meter   metric.Meter
	names   *nameTable
	tracing bool        // false for a no-op TracerProvider: no decorator
	stopped atomic.Bool // set by Shutdown: hooks and decorator report nothing more

	runs     metric.Int64Counter
	duration metric.Float64Histogram
	lateness metric.Float64Histogram
	queued   metric.Int64ObservableUpDownCounter
	active   metric.Int64ObservableUpDownCounter
	workers  metric.Int64ObservableUpDownCounter
	rejected metric.Int64ObservableCounter
	canceled metric.Int64ObservableCounter
	observed metric.ObserveOption // scheduler.name, if set

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
	var base []attribute.KeyValue
	if cfg.schedulerName != "" {
		base = []attribute.KeyValue{SchedulerNameKey.String(cfg.schedulerName)}
	}
	i := &Instrumentation{
		tracer:   cfg.tracerProvider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		meter:    cfg.meterProvider.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL)),
		names:    newNameTable(cfg.maxTaskNames, base),
		tracing:  !isNoopTracerProvider(cfg.tracerProvider),
		observed: metric.WithAttributeSet(attribute.NewSet(base...)),
	}
	if err := i.newInstruments(); err != nil {
		return nil, fmt.Errorf("otelscheduler: %w", err)
	}
	return i, nil
}

// Options returns the scheduler options that report every run: a Hooks
// whose Observe records the run metrics, and a decorator that wraps each run
// in a span. Pass them to scheduler.New, first if other decorators are given,
// so that the run's span is the parent of what those create:
//
//	s, err := scheduler.New(4, append(inst.Options(), myOpts...)...)
//
// Hooks and decorators are fixed when the scheduler is made, which is why
// this is a separate step from Register. With a no-op TracerProvider
// (go.opentelemetry.io/otel/trace/noop) there is no decorator: metrics only,
// at no cost for spans.
func (i *Instrumentation) Options() []scheduler.Option {
	opts := []scheduler.Option{scheduler.WithHooks(scheduler.Hooks{Observe: i.observe})}
	if i.tracing {
		opts = append(opts, scheduler.WithDecorator(i.decorate))
	}
	return opts
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

// Register starts reporting s's queue length, active tasks, worker count,
// rejections and cancels (read from s.Stats at each collection). It may be
// called once; a second call, a nil s, or a call after Shutdown fails with
// an error wrapping scheduler.ErrInvalidArgument.
func (i *Instrumentation) Register(s *scheduler.Scheduler) error {
	if s == nil {
		return fmt.Errorf("otelscheduler: Register(nil): %w", scheduler.ErrInvalidArgument)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	switch {
	case i.shutdown:
		return fmt.Errorf("otelscheduler: Register after Shutdown: %w", scheduler.ErrInvalidArgument)
	case i.registration != nil:
		return fmt.Errorf("otelscheduler: Register called twice: %w", scheduler.ErrInvalidArgument)
	}
	reg, err := i.meter.RegisterCallback(i.observeStats(s),
		i.queued, i.active, i.workers, i.rejected, i.canceled)
	if err != nil {
		return fmt.Errorf("otelscheduler: %w", err)
	}
	i.registration = reg
	return nil
}

// Shutdown stops all reporting: the Stats instruments are unregistered, and
// the hooks and decorator installed by Options record nothing more (they
// stay in the scheduler, as cheap no-ops). Later calls do nothing and return
// nil. It does not shut down the providers, which belong to the application.
func (i *Instrumentation) Shutdown() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.shutdown {
		return nil
	}
	i.shutdown = true
	i.stopped.Store(true)
	if i.registration == nil {
		return nil
	}
	err := i.registration.Unregister()
	i.registration = nil
	if err != nil {
		return fmt.Errorf("otelscheduler: %w", err)
	}
	return nil
}
