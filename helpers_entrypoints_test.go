package scheduler_test

// The ways to submit a task, for the tests that must hold for every entry
// point or every kind of future.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// asCallable turns a task into a callable that returns 1; a nil task gives
// a nil callable, for the tests of nil arguments.
func asCallable(task scheduler.Task) scheduler.Callable[int] {
	if task == nil {
		return nil
	}
	return func(ctx context.Context) (int, error) { return 1, task(ctx) }
}

// asScheduledFuture returns f as a ScheduledFuture, nil for a nil *Future.
func asScheduledFuture[T any](f *scheduler.Future[T], err error) (scheduler.ScheduledFuture, error) {
	if f == nil {
		return nil, err
	}
	return f, err
}

// entryPoint is one way to submit a task: it returns the future (nil when
// the entry point returns none) and the error.
type entryPoint struct {
	name   string
	submit func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
}

// entryPoints lists every entry point that submits a task, with a
// one-minute delay and period.
var entryPoints = entryPointsAt(time.Minute, time.Minute)

// entryPointsAt lists every entry point that submits a task: the delayed
// ones with the given initial delay (and period, for the periodic ones);
// Invoke* submit one callable due now and wait for it, at most waitLimit.
// A nil task is passed on as nil. InvokeAll returns its first future.
func entryPointsAt(delay, period time.Duration) []entryPoint {
	return []entryPoint{
		{"Schedule", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.Schedule(task, delay)
		}},
		{"ScheduleAtFixedRate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, delay, period)
		}},
		{"ScheduleWithFixedDelay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, delay, period)
		}},
		{"Execute", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return nil, s.Execute(task)
		}},
		{"Submit", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.Submit(task)
		}},
		{"ScheduleCallable", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return asScheduledFuture(scheduler.ScheduleCallable(s, asCallable(task), delay))
		}},
		{"SubmitCallable", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return asScheduledFuture(scheduler.SubmitCallable(s, asCallable(task)))
		}},
		{"InvokeAll", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			fs, err := scheduler.InvokeAll(ctx, s, []scheduler.Callable[int]{asCallable(task)})
			if len(fs) == 0 {
				return nil, err
			}
			return fs[0], err
		}},
		{"InvokeAny", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			_, err := scheduler.InvokeAny(ctx, s, []scheduler.Callable[int]{asCallable(task)})
			return nil, err
		}},
	}
}

// scheduleKinds schedules a task one hour from now in each of the ways
// the scheduler knows, for tests that must hold for every kind of future.
var scheduleKinds = []struct {
	name     string
	schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
}{
	{"one-shot", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return s.Schedule(task, time.Hour)
	}},
	{"callable", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return scheduler.ScheduleCallable(s, func(ctx context.Context) (int, error) { return 1, task(ctx) }, time.Hour)
	}},
	{"fixed rate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return s.ScheduleAtFixedRate(task, time.Hour, time.Minute)
	}},
	{"fixed delay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
		return s.ScheduleWithFixedDelay(task, time.Hour, time.Minute)
	}},
}

// schedulePeriodic schedules task at a fixed rate when kind is "fixed
// rate", else with a fixed delay: first due after period, then every
// period.
func schedulePeriodic(t *testing.T, s *scheduler.Scheduler, kind string, task scheduler.Task, period time.Duration, opts ...scheduler.TaskOption) scheduler.ScheduledFuture {
	t.Helper()
	var f scheduler.ScheduledFuture
	var err error
	if kind == "fixed rate" {
		f, err = s.ScheduleAtFixedRate(task, period, period, opts...)
	} else {
		f, err = s.ScheduleWithFixedDelay(task, period, period, opts...)
	}
	require.NoError(t, err)
	return f
}
