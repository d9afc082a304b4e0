package main

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler"
)

// inMemoryLateness runs the stream on one in-memory scheduler.Scheduler,
// with nothing stored: the noise floor of this machine, and the first term
// of the target's "in-memory scheduler plus one Redis round trip".
func inMemoryLateness(w workload) ([]time.Duration, time.Duration, error) {
	rec := newRecorder(w.rate * w.seconds)
	s, err := scheduler.New(16)
	if err != nil {
		return nil, 0, err
	}
	defer func() {
		s.Shutdown()
		_ = s.AwaitTermination(context.Background())
	}()
	lag, err := produce(w, func(due time.Time) error {
		_, err := s.Schedule(func(context.Context) error {
			rec.add(time.Since(due))
			return nil
		}, time.Until(due))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	late, err := rec.wait(w.delay + 30*time.Second)
	return late, lag, err
}
