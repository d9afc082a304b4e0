package otelscheduler

import (
	"errors"

	"github.com/go-stpe/scheduler"
)

// NewScheduler is the one call: it makes an Instrumentation from opts, a
// Scheduler with scheduler.New(poolSize, schedOpts...) and the
// instrumentation's options (given first, so its span wraps any other
// decorator), and registers the scheduler. Shut down the scheduler as usual,
// and the Instrumentation with Shutdown. It fails as New, scheduler.New and
// Register do, leaving nothing running. otelsql.Open, which opens a
// database with its instrumentation, is the contrib counterpart.
func NewScheduler(poolSize int, schedOpts []scheduler.Option, opts ...Option) (*scheduler.Scheduler, *Instrumentation, error) {
	inst, err := New(opts...)
	if err != nil {
		return nil, nil, err
	}
	s, err := scheduler.New(poolSize, append(inst.Options(), schedOpts...)...)
	if err != nil {
		return nil, nil, errors.Join(err, inst.Shutdown())
	}
	if err := inst.Register(s); err != nil {
		s.ShutdownNow()
		return nil, nil, errors.Join(err, inst.Shutdown())
	}
	return s, inst, nil
}
