package otelcluster

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/cluster"
)

// durationBuckets are the explicit bucket boundaries, in seconds, of the
// duration and lateness histograms: 10 µs to 5 min in 1-2.5-5 steps (as
// otelscheduler's), so that a Redis round trip of a hundred microseconds,
// a claim's lateness of a few milliseconds and a batch job's minutes all
// resolve. A View in the application may replace them.
var durationBuckets = []float64{
	0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
}

// newInstruments makes the instruments (see the package doc's table).
func (i *Instrumentation) newInstruments() error {
	var e [11]error
	m := i.meter
	i.scheduled, e[0] = m.Int64Counter("scheduler.cluster.task.scheduled",
		metric.WithUnit("{task}"),
		metric.WithDescription("Tasks stored by this node's Schedule calls and sweeps, by kind; a task stored already is not counted again."))
	i.claimed, e[1] = m.Int64Counter("scheduler.cluster.task.claimed",
		metric.WithUnit("{task}"),
		metric.WithDescription("Claims this node won, by kind."))
	i.runs, e[2] = m.Int64Counter("scheduler.cluster.task.runs",
		metric.WithUnit("{run}"),
		metric.WithDescription("Runs on this node that ended, by kind and outcome."))
	i.dead, e[3] = m.Int64Counter("scheduler.cluster.task.dead",
		metric.WithUnit("{task}"),
		metric.WithDescription("Tasks whose failed run on this node made them dead, by kind."))
	i.duration, e[4] = m.Float64Histogram("scheduler.cluster.task.run.duration",
		metric.WithUnit("s"),
		metric.WithDescription("How long handlers ran on this node, by kind and outcome."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	i.lateness, e[5] = m.Float64Histogram("scheduler.cluster.task.run.lateness",
		metric.WithUnit("s"),
		metric.WithDescription("Start lateness of the claims this node won: claim time - the time the task was pending for, by kind."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	i.active, e[6] = m.Int64ObservableUpDownCounter("scheduler.cluster.task.active",
		metric.WithUnit("{task}"),
		metric.WithDescription("Tasks this node holds a claim on: running, or claimed and about to start."))
	i.windowed, e[7] = m.Int64ObservableUpDownCounter("scheduler.cluster.window.length",
		metric.WithUnit("{task}"),
		metric.WithDescription("Tasks in this node's window, waiting in memory for their due time."))
	i.redis, e[8] = m.Float64Histogram("db.client.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of this node's Redis script calls, by script."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	i.pendingTasks, e[9] = m.Int64ObservableUpDownCounter("scheduler.cluster.task.pending",
		metric.WithUnit("{task}"),
		metric.WithDescription("Pending tasks of the partitions this node reaps as their owner, as last sampled (once a minute), by kind; the sum over the nodes counts each partition once."))
	i.oldestOverdue, e[10] = m.Float64ObservableGauge("scheduler.cluster.task.oldest_overdue",
		metric.WithUnit("s"),
		metric.WithDescription("How overdue the oldest pending task of the partitions this node reaps as their owner was, as last sampled (once a minute), by kind; the maximum over the nodes is the cluster's."))
	return errors.Join(e[:]...)
}

// observeScheduled is the Scheduled hook.
func (i *Instrumentation) observeScheduled(ctx context.Context, kind string) {
	if i.stopped.Load() {
		return
	}
	i.scheduled.Add(ctx, 1, i.kinds.label(kind).kind.add...)
}

// observeClaimed is the Claimed hook.
func (i *Instrumentation) observeClaimed(kind string, lateness time.Duration) {
	if i.stopped.Load() {
		return
	}
	ctx := context.Background()
	l := i.kinds.label(kind)
	i.claimed.Add(ctx, 1, l.kind.add...)
	i.lateness.Record(ctx, lateness.Seconds(), l.kind.record...)
}

// observeEnded is the Ended hook: the run's metrics, and the end of its
// span, which is ended even after Shutdown. A lost run is timed here but
// counted by the reaper that returns its task (observeLost), so that it
// counts once, whether its node lived to tell or not.
func (i *Instrumentation) observeEnded(ctx context.Context, e cluster.RunEnd) {
	if i.tracing {
		i.endRun(ctx, e)
	}
	if i.stopped.Load() {
		return
	}
	l := i.kinds.label(e.Task.Kind)
	m := l.outcome(e.Outcome)
	if e.Outcome != cluster.OutcomeLost {
		i.runs.Add(ctx, 1, m.add...)
	}
	i.duration.Record(ctx, e.Duration.Seconds(), m.record...)
	if e.Dead {
		i.dead.Add(ctx, 1, l.kind.add...)
	}
}

// observeRedisCall is the RedisCall hook. A successful call's attribute
// set is made once per command and script; a failed call's carries the
// error's class and is made per call.
func (i *Instrumentation) observeRedisCall(c cluster.RedisCall) {
	if i.stopped.Load() {
		return
	}
	ctx := context.Background()
	if c.Err != nil {
		kvs := append(redisAttributes(c), errorAttributes(c.Err)...)
		i.redis.Record(ctx, c.Duration.Seconds(), metric.WithAttributeSet(attribute.NewSet(kvs...)))
		return
	}
	key := c.Command + " " + c.Script
	m, ok := i.calls.Load(key)
	if !ok {
		m, _ = i.calls.LoadOrStore(key, newMeasurement(redisAttributes(c)...))
	}
	i.redis.Record(ctx, c.Duration.Seconds(), m.(measurement).record...)
}

// redisAttributes are the semantic conventions' attributes of a Redis
// call: the system, the command (db.operation.name) and the script's name
// (db.stored_procedure.name).
func redisAttributes(c cluster.RedisCall) []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.DBSystemNameRedis,
		semconv.DBOperationName(c.Command),
		semconv.DBStoredProcedureName(c.Script),
	}
}

// errorAttributes classify a failed Redis call: for an error Redis
// returned, its prefix ("NOSCRIPT", "ERR", "BUSY") as both
// db.response.status_code and error.type, as the conventions ask for
// Redis; otherwise the error's Go type as error.type.
func errorAttributes(err error) []attribute.KeyValue {
	var re redis.Error
	if errors.As(err, &re) {
		prefix, _, _ := strings.Cut(re.Error(), " ")
		return []attribute.KeyValue{semconv.DBResponseStatusCode(prefix), semconv.ErrorTypeKey.String(prefix)}
	}
	return []attribute.KeyValue{semconv.ErrorType(err)}
}

// observeStats returns the callback that reports n.Stats.
func (i *Instrumentation) observeStats(n *cluster.Node) metric.Callback {
	return func(_ context.Context, o metric.Observer) error {
		st := n.Stats()
		o.ObserveInt64(i.active, int64(st.Running))
		o.ObserveInt64(i.windowed, int64(st.Windowed))
		return nil
	}
}
