// Package otelscheduler reports what a [scheduler.Scheduler] does to
// OpenTelemetry: metrics for every run, the queue and the pool, and a span
// for every run. It is built on the OpenTelemetry metric and trace APIs only;
// the application picks the SDK and the exporters. Micrometer's
// ExecutorServiceMetrics and Spring's observation support play this part for
// the JDK's executors.
//
// # Use
//
// One call makes an instrumented scheduler:
//
//	s, inst, err := otelscheduler.NewScheduler(4, []scheduler.Option{scheduler.WithBaseContext(ctx)},
//		otelscheduler.WithMeterProvider(mp), otelscheduler.WithTracerProvider(tp))
//	defer inst.Shutdown()
//
// It is the short form of three steps, for when the scheduler is made
// elsewhere:
//
//	inst, err := otelscheduler.New(otelscheduler.WithMeterProvider(mp), otelscheduler.WithTracerProvider(tp))
//	s, err := scheduler.New(4, inst.Options()...) // run metrics and spans
//	err = inst.Register(s)                        // queue, pool, rejections, cancels
//
// ExampleNewScheduler and ExampleNew show both, with a manual metric reader
// that prints what was recorded.
//
// Why the steps: a Scheduler's hooks and decorators are fixed at
// scheduler.New, so the instrumentation must exist before the scheduler to
// hand them over ([Instrumentation.Options], the way otelgrpc.NewServerHandler
// is passed to grpc.NewServer as an option); the queue and pool instruments
// read [scheduler.Scheduler.Stats], so they need the scheduler itself
// ([Instrumentation.Register], as otelsql.RegisterDBStatsMetrics needs the
// *sql.DB). A scheduler built with Options alone has its run metrics and
// spans but no queue or pool instruments.
//
// Following the contrib instrumentations (otelhttp, otelgrpc), the providers
// default to the global ones. The instruments are made once, in New, and the
// attribute sets once per task name, so a run's metrics allocate nothing;
// its span allocates what the tracer needs (BenchmarkRunOverhead measures
// the cost per run).
// A no-op TracerProvider (go.opentelemetry.io/otel/trace/noop) turns the
// spans off: Options then installs no decorator. There is no
// WithPropagators: a run never crosses a process boundary; the trace context
// reaches runs through scheduler.WithBaseContext.
//
// # Metrics
//
// The OpenTelemetry semantic conventions define no metrics for schedulers,
// executors or their tasks, so the names live in a "scheduler.*" namespace
// of this package's choosing, and follow the conventions' naming rules:
// durations are histograms in seconds (unit "s") named "*.duration", like
// http.server.request.duration; things counted carry an annotation unit
// ("{run}", "{task}", "{worker}"); the queue length and worker count follow
// the .NET runtime's dotnet.thread_pool.queue.length and
// dotnet.thread_pool.thread.count; counters of events are named by the event,
// like jvm.class.loaded. Every instrument also carries scheduler.name when
// [WithSchedulerName] is given.
//
//	name                         instrument               unit      attributes
//	scheduler.task.runs          Counter                  {run}     scheduler.task.name, scheduler.run.outcome
//	scheduler.task.run.duration  Histogram                s         scheduler.task.name, scheduler.run.outcome
//	scheduler.task.run.lateness  Histogram                s         scheduler.task.name
//	scheduler.queue.length       ObservableUpDownCounter  {task}    -
//	scheduler.task.active        ObservableUpDownCounter  {task}    -
//	scheduler.worker.count       ObservableUpDownCounter  {worker}  -
//	scheduler.task.rejected      ObservableCounter        {task}    -
//	scheduler.task.canceled      ObservableCounter        {task}    -
//
// The run metrics are recorded by the Observe hook, once per run, also for a
// run that failed or panicked and for one whose BeforeExecute hook panicked.
// The outcome is "ok" (nil error), "panic" (a *scheduler.PanicError found
// with errors.As) or "error". The duration is Ended - Started, the lateness
// Started - Due - Jitter (scheduler.RunInfo), so jitter asked for with
// scheduler.WithJitter is not lateness; both are read from the scheduler's
// clock. The histograms' bucket boundaries run from 10 µs to 5 min. The
// task name is bounded ([WithMaxTaskNames]): beyond the bound names are
// reported as "other", and unnamed tasks as "unnamed". The last five come
// from Stats at each collection, once Register is called.
//
// # Spans
//
// Each run is one span named "run <task name>" (the bounded name, as span
// names should have low cardinality), of kind Internal, started by a
// decorator from the run's ctx: its parent is the span in the scheduler's
// base context, and the ctx the task gets carries it, so spans the task
// starts are its children. It covers the body, by the wall clock; the
// scheduler's clock gives its attributes: scheduler.run.due (RFC 3339),
// scheduler.run.lateness (seconds), scheduler.run.jitter (seconds, when
// there is jitter), scheduler.task.periodic, scheduler.task.name (the name as
// given) and scheduler.run.outcome. An error is recorded (span.RecordError,
// error.type, status Error); a panic becomes an "exception" event with the
// stack and status Error, and goes on to the scheduler unchanged. Give
// Options first among decorators, so that the span wraps the others.
package otelscheduler
