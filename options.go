package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Options: how a Scheduler and each submission are configured (the Go form
// of the JDK's constructor arguments and setters), and the Hooks.

// Option configures a Scheduler at [New]: the Go form of the JDK's
// constructor arguments and setters. Options are plain values; a nil Option
// makes New fail with an error wrapping ErrInvalidArgument, as a nil option
// does everywhere in this module's packages.
type Option interface{ apply(*config) }

// TaskOption configures one submission; the JDK has no counterpart (its
// tasks carry no options). A nil TaskOption fails the submission with an
// error wrapping ErrInvalidArgument; nothing is queued.
type TaskOption interface{ applyTask(*taskConfig) }

// config is what New builds a Scheduler from; defaults are set in one place,
// defaultConfig.
type config struct {
	clock            Clock
	logger           *slog.Logger
	hooks            []Hooks           // in the order given
	decorators       []func(Task) Task // the first given is the outermost
	baseContext      context.Context
	policy           RejectionPolicy
	removeOnCancel   bool
	continuePeriodic bool
	executeDelayed   bool
	maxQueueSize     int
	preciseTiming    bool // WithPreciseTiming (precise.go)
	timingWheel      bool // WithTimingWheel (wheel.go)
}

// defaultConfig returns the JDK's defaults: remove-on-cancel false, continue
// existing periodic tasks after shutdown false, execute existing delayed
// tasks after shutdown true, AbortPolicy, an unbounded queue.
func defaultConfig() config {
	return config{
		clock:          systemClock{},
		logger:         slog.Default(),
		policy:         AbortPolicy,
		executeDelayed: true,
		timingWheel:    true,
	}
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithRejectionPolicy sets the policy for submissions the scheduler cannot
// accept (JDK setRejectedExecutionHandler). nil means AbortPolicy.
func WithRejectionPolicy(p RejectionPolicy) Option {
	return optionFunc(func(c *config) {
		if p == nil {
			p = AbortPolicy
		}
		c.policy = p
	})
}

// WithRemoveOnCancel sets the remove-on-cancel policy (JDK
// setRemoveOnCancelPolicy; default false): when true a canceled task leaves
// the queue at once; when false it stays until its trigger time or Purge.
func WithRemoveOnCancel(remove bool) Option {
	return optionFunc(func(c *config) { c.removeOnCancel = remove })
}

// WithContinueExistingPeriodicTasksAfterShutdown sets whether periodic tasks
// keep running after Shutdown (JDK
// setContinueExistingPeriodicTasksAfterShutdownPolicy; default false).
func WithContinueExistingPeriodicTasksAfterShutdown(keep bool) Option {
	return optionFunc(func(c *config) { c.continuePeriodic = keep })
}

// WithExecuteExistingDelayedTasksAfterShutdown sets whether queued one-shot
// tasks still run after Shutdown (JDK
// setExecuteExistingDelayedTasksAfterShutdownPolicy; default true). When
// false, Shutdown cancels the ones not yet due; due ones still run.
func WithExecuteExistingDelayedTasksAfterShutdown(keep bool) Option {
	return optionFunc(func(c *config) { c.executeDelayed = keep })
}

// WithMaxQueueSize bounds the queue to n tasks: a submission that would
// exceed it is rejected through the rejection policy. Running tasks do not
// count, and a periodic task's re-queue is never rejected. n <= 0 means
// unbounded, the default. The JDK has no counterpart: its queue is
// unbounded.
func WithMaxQueueSize(n int) Option {
	return optionFunc(func(c *config) { c.maxQueueSize = n })
}

// WithClock sets the clock all time comes from (default: the system clock;
// nil means the default), where the JDK reads System.nanoTime. Tests pass
// schedulertest.NewManualClock.
func WithClock(clk Clock) Option {
	return optionFunc(func(c *config) {
		if clk == nil {
			clk = systemClock{}
		}
		c.clock = clk
	})
}

// WithHooks adds hooks run around every task run and at termination (JDK
// beforeExecute, afterExecute, terminated). Nil fields are skipped. It may
// be given more than once: every set runs, in the order given (if a
// BeforeExecute panics, the later sets' BeforeExecute and every AfterExecute
// are skipped for that run, and every Observe still sees it).
func WithHooks(h Hooks) Option {
	return optionFunc(func(c *config) { c.hooks = append(c.hooks, h) })
}

// WithDecorator adds a function that wraps the body of every submission
// once, callables included (JDK decorateTask). It may be given more than
// once: the first given is the outermost, so it sees the run's ctx first;
// a nil decorator is ignored. It is called in the
// submitting goroutine. A decorator that panics or returns nil fails the
// submission with an error; nothing is queued.
func WithDecorator(d func(Task) Task) Option {
	return optionFunc(func(c *config) {
		if d != nil {
			c.decorators = append(c.decorators, d)
		}
	})
}

// WithBaseContext sets the context whose values every run's ctx carries:
// trace and request IDs, loggers. Its cancelation and deadline are not
// passed on: canceling it cancels no run (a run's ctx is canceled only by
// Cancel(true) and ShutdownNow). nil means context.Background(). The JDK
// has no counterpart; it is net/http.Server's BaseContext for tasks.
func WithBaseContext(ctx context.Context) Option {
	return optionFunc(func(c *config) { c.baseContext = ctx })
}

// WithLogger sets where the scheduler reports panics, periodic tasks stopped
// by failure and panicking hooks (default slog.Default(); nil means the
// default). The JDK logs nothing: a failed periodic task dies silently.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) {
		if l == nil {
			l = slog.Default()
		}
		c.logger = l
	})
}

// Hooks are called around task runs and at termination, like the JDK's
// ThreadPoolExecutor hooks. A panic inside a hook is recovered and logged
// and the worker survives.
type Hooks struct {
	// BeforeExecute runs on the worker before every run, each periodic run
	// included (JDK beforeExecute). If it panics the task does not run and
	// its future completes with that *PanicError.
	BeforeExecute func(f ScheduledFuture)
	// AfterExecute runs on the worker after every run with the run's error
	// or *PanicError (nil after success). Unlike the JDK, which passes
	// null for a task's own exception, err is the run's outcome. A
	// periodic task has already been re-queued for its next run.
	AfterExecute func(f ScheduledFuture, err error)
	// Terminated runs once, when the scheduler terminates, before
	// AwaitTermination returns (JDK terminated).
	Terminated func()
	// Observe runs on the worker after every run, after AfterExecute, with
	// what happened: the due time, the start and end by the scheduler's
	// clock, the jitter and the outcome (see [RunInfo]). It also sees a run
	// whose BeforeExecute panicked (Err is that *PanicError, Ended equals
	// Started). Metrics and tracing build on it (otelscheduler). The JDK
	// has no counterpart.
	Observe func(r RunInfo)
}

// taskConfig is what TaskOptions set.
type taskConfig struct {
	name            string
	continueOnError bool
	missed          MissedRunPolicy
	missedSet       bool // WithMissedRuns was given
	jitter          time.Duration
}

type taskOptionFunc func(*taskConfig)

func (f taskOptionFunc) applyTask(c *taskConfig) { f(c) }

// WithName names the task: Name returns it, logs show it, and its runs
// carry the pprof label "scheduler.task". The JDK's nearest counterpart is
// a ThreadFactory's thread names, which name workers, not tasks.
func WithName(name string) TaskOption {
	return taskOptionFunc(func(c *taskConfig) { c.name = name })
}

// ContinueOnError (no JDK counterpart) makes a periodic task keep its schedule after a run that
// returns an error or panics; each such run is logged at Warn (or at Error
// for a panic) and counted in Stats.Failed. Without it, the JDK rule holds:
// a failed run suppresses all later runs. Ignored for one-shot tasks.
func ContinueOnError() TaskOption {
	return taskOptionFunc(func(c *taskConfig) { c.continueOnError = true })
}

// MissedRunPolicy says what a fixed-rate or trigger task does when runs of
// it were missed: when the worker takes it, later runs are already due
// (after a long run, a busy pool, a machine that slept). It is Quartz's
// misfire instruction; the JDK has only CatchUpMissed.
type MissedRunPolicy int

const (
	// CatchUpMissed runs every missed run, back to back, until the task is
	// on time again (JDK fixed rate; Quartz's misfire "ignore"). The
	// default of ScheduleAtFixedRate.
	CatchUpMissed MissedRunPolicy = iota
	// CoalesceMissed runs once for all the runs that are due, as the
	// latest of them, then keeps the phase: the next run is the first one
	// after that (Quartz's "fire once now", Spring's CronTrigger). The
	// default of ScheduleWithTrigger.
	CoalesceMissed
)

// String names the policy.
func (p MissedRunPolicy) String() string {
	switch p {
	case CatchUpMissed:
		return "CatchUpMissed"
	case CoalesceMissed:
		return "CoalesceMissed"
	}
	return fmt.Sprintf("MissedRunPolicy(%d)", int(p))
}

// WithMissedRuns sets the missed-run policy of a fixed-rate or trigger
// task; it is ignored for one-shot and fixed-delay tasks. A value
// other than CatchUpMissed and CoalesceMissed fails the submission with an
// error wrapping ErrInvalidArgument, for every kind of task.
func WithMissedRuns(p MissedRunPolicy) TaskOption {
	return taskOptionFunc(func(c *taskConfig) { c.missed, c.missedSet = p, true })
}

// WithJitter makes each run of the task start at its due time plus a
// uniformly random offset in [0, max): for spreading the runs of many
// replicas or tasks that share a schedule. The phase does not drift: run k
// of a fixed-rate task is still due at initialDelay + k*period before its
// offset. It applies to every kind of task, and Delay includes it. A
// max < 0 fails the submission with an error wrapping ErrInvalidArgument; 0
// means none. Spring and the JDK have no counterpart; gocron has
// WithJitter-like random intervals that do drift.
func WithJitter(max time.Duration) TaskOption {
	return taskOptionFunc(func(c *taskConfig) { c.jitter = max })
}
