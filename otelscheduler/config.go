package otelscheduler

import (
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-stpe/scheduler"
)

// DefaultMaxTaskNames is the number of distinct task names reported as
// themselves when WithMaxTaskNames is not given; later names are reported as
// [OtherTaskName].
const DefaultMaxTaskNames = 50

// config is what the options set; New reads it once.
type config struct {
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	maxTaskNames   int
	schedulerName  string
}

// Option configures New, in the style of the OpenTelemetry Go contrib
// instrumentations (otelhttp, otelgrpc). A nil Option makes New fail with an
// error wrapping scheduler.ErrInvalidArgument.
type Option interface {
	apply(*config)
}

// optionFunc adapts a function to an Option.
type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithMeterProvider sets the MeterProvider the instruments come from. The
// default, and what nil means, is the global provider (otel.GetMeterProvider)
// as it is when New is called. otelhttp.WithMeterProvider is the counterpart.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.meterProvider = mp
		}
	})
}

// WithTracerProvider sets the TracerProvider the run spans come from. The
// default, and what nil means, is the global provider (otel.GetTracerProvider)
// as it is when New is called. otelhttp.WithTracerProvider is the counterpart.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if tp != nil {
			c.tracerProvider = tp
		}
	})
}

// WithMaxTaskNames bounds the number of distinct task names the metrics and
// span names carry (default [DefaultMaxTaskNames]): the first n distinct names
// seen are reported as themselves, every later one as [OtherTaskName], so a
// program that names tasks after user IDs cannot blow up the number of time
// series. 0 reports every named task as "other". Unnamed tasks
// ([UnnamedTaskName]) do not count against the bound. A negative n makes New
// fail with an error wrapping scheduler.ErrInvalidArgument.
func WithMaxTaskNames(n int) Option {
	return optionFunc(func(c *config) { c.maxTaskNames = n })
}

// WithSchedulerName adds the attribute scheduler.name=name to every metric
// and span, to tell apart several instrumented schedulers in one process.
// The default, "", adds none.
func WithSchedulerName(name string) Option {
	return optionFunc(func(c *config) { c.schedulerName = name })
}

// newConfig applies opts over the defaults and checks the result.
func newConfig(opts []Option) (config, error) {
	c := config{maxTaskNames: DefaultMaxTaskNames}
	for i, o := range opts {
		if o == nil {
			return config{}, fmt.Errorf("otelscheduler: option %d is nil: %w", i, scheduler.ErrInvalidArgument)
		}
		o.apply(&c)
	}
	if c.maxTaskNames < 0 {
		return config{}, fmt.Errorf("otelscheduler: WithMaxTaskNames(%d): %w", c.maxTaskNames, scheduler.ErrInvalidArgument)
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	return c, nil
}
