// Package otelcluster reports what a [cluster.Node] does to OpenTelemetry:
// metrics for the tasks it schedules, claims and runs, its Redis scripts'
// latency and what it holds in memory, and a span for every run, linked to
// the span that scheduled the task. It is built on the OpenTelemetry metric,
// trace and propagation APIs only; the application picks the SDK and the
// exporters. It is a module of its own, so that neither the cluster module
// nor otelscheduler brings OpenTelemetry or Redis to the other; it is to
// the cluster what otelscheduler is to the in-process Scheduler, and plays
// the part of asynq's and River's OpenTelemetry middleware.
//
// # Use
//
// One call makes an instrumented node:
//
//	n, inst, err := otelcluster.NewNode(rdb, []cluster.Option{cluster.WithConcurrency(8)},
//		otelcluster.WithMeterProvider(mp), otelcluster.WithTracerProvider(tp))
//	defer inst.Shutdown() // after the node's Stop
//
// It is the short form of three steps, for when the node is made elsewhere:
//
//	inst, err := otelcluster.New(otelcluster.WithMeterProvider(mp), otelcluster.WithTracerProvider(tp))
//	n, err := cluster.New(rdb, cluster.WithObserver(inst.Observer())) // counters, histograms, spans
//	err = inst.Register(n)                                            // the running and window gauges
//
// A node's observer is fixed at cluster.New, so the instrumentation must
// exist before the node; the gauges read [cluster.Node.Stats], so they need
// the node itself. ExampleNewNode shows the one call with a manual metric
// reader; examples/prom serves the metrics to Prometheus.
//
// Following the contrib instrumentations, the providers default to the
// global ones; the propagator does not (see [WithPropagator]). The
// instruments are made once, in New, and the attribute sets once per kind,
// so recording a metric allocates nothing; a span allocates what the tracer
// needs. A no-op TracerProvider (go.opentelemetry.io/otel/trace/noop) turns
// tracing off: no trace context is stored with the tasks, and no span is
// started.
//
// # Metrics
//
// The OpenTelemetry semantic conventions define no metrics for durable task
// queues, so the names live in a "scheduler.cluster.*" namespace beside
// otelscheduler's "scheduler.*", and follow the conventions' naming rules
// (durations in seconds named "*.duration", annotation units, events
// counted by name). The Redis latency is the conventions' own database
// client metric, with their attributes for Redis: db.system.name "redis",
// db.operation.name the command ("EVALSHA", or "EVAL" when Redis had not
// cached the script), db.stored_procedure.name the script's name ("claim",
// "complete", "schedule"...), and for a failed call error.type (Redis's
// error prefix, such as "NOSCRIPT", also given as db.response.status_code,
// or the Go error's type).
//
//	name                                  instrument               unit    attributes
//	scheduler.cluster.task.scheduled      Counter                  {task}  scheduler.cluster.task.kind
//	scheduler.cluster.task.claimed        Counter                  {task}  scheduler.cluster.task.kind
//	scheduler.cluster.task.runs           Counter                  {run}   scheduler.cluster.task.kind, scheduler.cluster.run.outcome
//	scheduler.cluster.task.dead           Counter                  {task}  scheduler.cluster.task.kind
//	scheduler.cluster.task.run.duration   Histogram                s       scheduler.cluster.task.kind, scheduler.cluster.run.outcome
//	scheduler.cluster.task.run.lateness   Histogram                s       scheduler.cluster.task.kind
//	scheduler.cluster.task.active         ObservableUpDownCounter  {task}  -
//	scheduler.cluster.window.length       ObservableUpDownCounter  {task}  -
//	scheduler.cluster.task.pending        ObservableUpDownCounter  {task}  scheduler.cluster.task.kind
//	scheduler.cluster.task.oldest_overdue ObservableGauge          s       scheduler.cluster.task.kind
//	db.client.operation.duration          Histogram                s       db.system.name, db.operation.name, db.stored_procedure.name, error.type
//
// Every count is this node's: a cluster's totals are the sum over its
// nodes. scheduled counts the tasks this node stored (Schedule, and the
// periodic occurrences its sweeps stored first); a Schedule that found the
// same task stored already is not counted. claimed counts the claims this
// node won, and run.lateness their start lateness: the node's clock,
// corrected by its measured offset from Redis's, when the claim's answer
// came, minus the time the task was pending for (its due time, or its
// retry time after a failure). runs counts the runs that ended here, by
// outcome (cluster.Outcome): succeeded, failed (an error or a panic),
// timed_out, canceled (Node.Cancel removed the task while it ran) and
// handed_back (Node.Stop's deadline passed while it ran); run.duration is
// how long the handler ran. A lost run (its lease expired: its node died,
// stalled, lost Redis or was stopped with StopNow) is counted with outcome
// lost by the node whose reaper returned the task to pending, or made it
// dead past its limit of lost runs (cluster.Observer.RunLost): once in the
// cluster, even when the node that ran it died. That node, if it lived,
// records the run's duration with outcome lost, but does not count it.
// dead counts the tasks whose failed run here made them dead (their last
// retry, or cluster.ErrSkipRetry), and those this node's reaper made dead.
// task.active and window.length are read from Node.Stats at each
// collection, once Register is called: the tasks this node holds a claim
// on, and those waiting in its window.
//
// task.pending and task.oldest_overdue are the last sample of the pending
// tasks (cluster.Observer.PendingSampled), taken at the node's start and
// once a minute after: by kind, how many tasks are pending and how long
// ago the most overdue of them was due (0 if none is). Every partition is
// sampled by its two reapers, its owner and its backup, but reported only
// by its owner, so each node reports its owned partitions' share: the sum
// of task.pending over the live nodes counts each partition once, and
// the maximum of task.oldest_overdue is the cluster's. For a minute after
// a node joins or leaves, the shares of the nodes' last samples may
// overlap or miss a partition. Before its first sample a node reports
// none.
//
// The kind is bounded ([WithMaxKinds]): beyond the bound kinds are
// reported as "other". The
// histograms' bucket boundaries run from 10 µs to 5 min.
//
// # Spans
//
// Each run is one span named "run <kind>" (the bounded kind), of kind
// Consumer, with the attributes scheduler.cluster.task.kind,
// scheduler.cluster.node.name (the node that ran it, once Register is
// called), scheduler.cluster.task.id, scheduler.cluster.task.attempt (the failed
// runs before this one), scheduler.cluster.task.lost (the runs lost
// before), scheduler.cluster.task.due (RFC 3339) and, at the end,
// scheduler.cluster.run.outcome, and scheduler.cluster.task.dead when the
// run made the task dead. The handler's ctx carries it, so spans the
// handler starts are its children. A failed or timed-out run records its
// error (an exception event, with the stack for a panic; error.type; status
// Error); a lost run has status Error too, as its work will be done again;
// a canceled or handed-back run is no error. The span starts before the
// handler is called and ends once the run's outcome is written to Redis.
//
// The linking rule: when a task is scheduled, the span active in
// Schedule's ctx is written with the propagator (W3C Trace Context by
// default) into the task's metadata, stored in Redis with the task
// (cluster.Observer.Metadata). Each run of the task starts a new trace
// whose root span links to that span; it is not its child. A durable task
// may run hours after the request that scheduled it ended, after restarts,
// and more than once (retries, runs lost with a node); as children, its
// runs would stretch the request's trace over hours and appear as orphans
// in back ends that assemble a trace within a time window. A link keeps
// each run its own trace, with its own sampling decision, one click from
// the request, as the OpenTelemetry messaging conventions link a
// consumer's processing span to the producer's. A task scheduled with no
// span in its ctx, and a periodic occurrence (stored by a sweep), run in
// spans without links. Baggage travels too when the propagator carries it
// (WithPropagator): the handler's ctx then holds the request's baggage.
package otelcluster
