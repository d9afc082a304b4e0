package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
)

// scheduleJobs queues one in-process job of each kind, and a thousand
// one-shot tasks so the queue page has something to show.
func scheduleJobs(s *scheduler.Scheduler) error {
	work := func(d time.Duration) scheduler.Task {
		return func(ctx context.Context) error {
			select {
			case <-time.After(time.Duration(rand.Int64N(int64(d)))):
			case <-ctx.Done():
			}
			return nil
		}
	}
	flaky := func(context.Context) error {
		if rand.IntN(10) == 0 {
			return errors.New("upstream answered 503")
		}
		return nil
	}
	nightly, err := cron.Parse("0 3 * * *")
	if err != nil {
		return err
	}
	steps := []error{}
	add := func(_ scheduler.ScheduledFuture, err error) { steps = append(steps, err) }
	add(s.ScheduleAtFixedRate(work(20*time.Millisecond), 0, 50*time.Millisecond, scheduler.WithName("heartbeat")))
	add(s.ScheduleAtFixedRate(flaky, 0, 200*time.Millisecond, scheduler.WithName("poll upstream"), scheduler.ContinueOnError()))
	add(s.ScheduleWithFixedDelay(work(300*time.Millisecond), 0, time.Second, scheduler.WithName("sync cache")))
	add(s.ScheduleWithTrigger(work(time.Second), nightly, scheduler.WithName("nightly report")))
	for i := range 1000 {
		add(s.Schedule(work(10*time.Millisecond), time.Minute+time.Duration(i)*time.Second, scheduler.WithName(fmt.Sprintf("send reminder %d", i))))
	}
	return errors.Join(steps...)
}
