package otelscheduler

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/go-stpe/scheduler"
)

// durationBuckets are the explicit bucket boundaries, in seconds, of the
// duration and lateness histograms: 10 µs to 5 min in 1-2.5-5 steps, so
// that both a precise scheduler's tens of microseconds of lateness and a
// batch job's minutes resolve. (The SDK's default boundaries start at 5 ms
// when read as seconds.) A View in the application may replace them.
var durationBuckets = []float64{
	0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
}

// newInstruments makes the instruments (see the package doc's table).
func (i *Instrumentation) newInstruments() error {
	var e [8]error
	m := i.meter
	i.runs, e[0] = m.Int64Counter("scheduler.task.runs",
		metric.WithUnit("{run}"),
		metric.WithDescription("Task runs that ended, by task name and outcome."))
	i.duration, e[1] = m.Float64Histogram("scheduler.task.run.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of task runs, from the worker taking the task to the end of the run, by the scheduler's clock."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	i.lateness, e[2] = m.Float64Histogram("scheduler.task.run.lateness",
		metric.WithUnit("s"),
		metric.WithDescription("Start lateness of task runs: start - due time - jitter, by the scheduler's clock."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	i.queued, e[3] = m.Int64ObservableUpDownCounter("scheduler.queue.length",
		metric.WithUnit("{task}"),
		metric.WithDescription("Tasks in the scheduler's queue, canceled ones not yet removed included."))
	i.active, e[4] = m.Int64ObservableUpDownCounter("scheduler.task.active",
		metric.WithUnit("{task}"),
		metric.WithDescription("Tasks running now."))
	i.workers, e[5] = m.Int64ObservableUpDownCounter("scheduler.worker.count",
		metric.WithUnit("{worker}"),
		metric.WithDescription("Live worker goroutines of the scheduler's pool."))
	i.rejected, e[6] = m.Int64ObservableCounter("scheduler.task.rejected",
		metric.WithUnit("{task}"),
		metric.WithDescription("Submissions rejected by the scheduler."))
	i.canceled, e[7] = m.Int64ObservableCounter("scheduler.task.canceled",
		metric.WithUnit("{task}"),
		metric.WithDescription("Task futures canceled, by any path."))
	return errors.Join(e[:]...)
}

// observe is the Observe hook: it records one finished run.
func (i *Instrumentation) observe(r scheduler.RunInfo) {
	if i.stopped.Load() {
		return
	}
	name := ""
	if r.Future != nil {
		name = r.Future.Name()
	}
	l := i.names.label(name)
	o := outcomeOf(r.Err)
	ctx := context.Background()
	i.runs.Add(ctx, 1, l.add[o]...)
	i.duration.Record(ctx, r.Ended.Sub(r.Started).Seconds(), l.record[o]...)
	i.lateness.Record(ctx, lateness(r).Seconds(), l.lateness...)
}

// outcomeOf classifies a run's error.
func outcomeOf(err error) outcome {
	if err == nil {
		return outcomeOK
	}
	var pe *scheduler.PanicError
	if errors.As(err, &pe) {
		return outcomePanic
	}
	return outcomeError
}

// lateness is the scheduler's own start lateness of a run, Started - Due -
// Jitter, at least 0: a run that the wall clock started early (a
// trigger task after the clock was stepped) is on time, not negative late,
// and histograms take no negative values.
func lateness(r scheduler.RunInfo) time.Duration {
	return max(r.Started.Sub(r.Due)-r.Jitter, 0)
}

// observeStats returns the callback that reports s.Stats.
func (i *Instrumentation) observeStats(s *scheduler.Scheduler) metric.Callback {
	return func(_ context.Context, o metric.Observer) error {
		st := s.Stats()
		o.ObserveInt64(i.queued, int64(st.Queued), i.observed)
		o.ObserveInt64(i.active, int64(st.Active), i.observed)
		o.ObserveInt64(i.workers, int64(st.PoolSize), i.observed)
		o.ObserveInt64(i.rejected, int64(st.Rejected), i.observed)
		o.ObserveInt64(i.canceled, int64(st.Canceled), i.observed)
		return nil
	}
}
