package otelcluster

import (
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-stpe/scheduler"
)

// DefaultMaxKinds is the number of distinct kinds reported as themselves
// when WithMaxKinds is not given; later kinds are reported as [OtherKind].
const DefaultMaxKinds = 100

// config is what the options set; New reads it once.
type config struct {
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	propagator     propagation.TextMapPropagator
	maxKinds       int
}

// Option configures New, in the style of the OpenTelemetry Go contrib
// instrumentations (otelhttp, otelgrpc) and of otelscheduler. A nil Option
// makes New fail with an error wrapping scheduler.ErrInvalidArgument.
type Option interface {
	apply(*config)
}

// optionFunc adapts a function to an Option.
type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithMeterProvider sets the MeterProvider the instruments come from. The
// default, and what nil means, is the global provider (otel.GetMeterProvider)
// as it is when New is called.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.meterProvider = mp
		}
	})
}

// WithTracerProvider sets the TracerProvider the run spans come from. The
// default, and what nil means, is the global provider (otel.GetTracerProvider)
// as it is when New is called. A no-op provider
// (go.opentelemetry.io/otel/trace/noop) turns tracing off: no trace context
// is stored with the tasks and no span is started.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if tp != nil {
			c.tracerProvider = tp
		}
	})
}

// WithPropagator sets how the trace context of a Schedule call is written
// into the task's metadata and read back at its runs. The default, and what
// nil means, is the W3C Trace Context propagator
// (propagation.TraceContext), not the global one: the global propagator is
// a no-op until the application sets one, and a task scheduled today may
// run after a restart that sets it differently. Pass
// propagation.NewCompositeTextMapPropagator(propagation.TraceContext{},
// propagation.Baggage{}) to carry baggage to the runs too; what it writes
// must fit in cluster.MaxMetadata, or Schedule fails.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) {
		if p != nil {
			c.propagator = p
		}
	})
}

// WithMaxKinds bounds the number of distinct kinds the metrics and span
// names carry (default [DefaultMaxKinds]): the first n distinct kinds seen
// are reported as themselves, every later one as [OtherKind], so that a
// producer scheduling kinds made from user input cannot blow up the number
// of time series. 0 reports every kind as "other". A negative n makes New
// fail with an error wrapping scheduler.ErrInvalidArgument.
func WithMaxKinds(n int) Option {
	return optionFunc(func(c *config) { c.maxKinds = n })
}

// newConfig applies opts over the defaults and checks the result.
func newConfig(opts []Option) (config, error) {
	c := config{maxKinds: DefaultMaxKinds}
	for i, o := range opts {
		if o == nil {
			return config{}, fmt.Errorf("otelcluster: option %d is nil: %w", i, scheduler.ErrInvalidArgument)
		}
		o.apply(&c)
	}
	if c.maxKinds < 0 {
		return config{}, fmt.Errorf("otelcluster: WithMaxKinds(%d): %w", c.maxKinds, scheduler.ErrInvalidArgument)
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.propagator == nil {
		c.propagator = propagation.TraceContext{}
	}
	return c, nil
}
