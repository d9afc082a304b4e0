package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/pprof"
)

// Option configures a Scheduler at [New]: the Go form of the JDK's
// constructor arguments and setters. Options are plain values; a nil Option
// is ignored.
type Option interface{ apply(*config) }

// TaskOption configures one submission; the JDK has no counterpart (its
// tasks carry no options). A nil TaskOption is ignored.
type TaskOption interface{ applyTask(*taskConfig) }

// config is what New builds a Scheduler from; defaults are set in one place,
// defaultConfig.
type config struct {
	clock            Clock
	logger           *slog.Logger
	hooks            Hooks
	decorator        func(Task) Task
	policy           RejectionPolicy
	removeOnCancel   bool
	continuePeriodic bool
	executeDelayed   bool
	maxQueueSize     int
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

// WithHooks sets the hooks run around every task run and at termination
// (JDK beforeExecute, afterExecute, terminated). Nil fields are skipped.
func WithHooks(h Hooks) Option {
	return optionFunc(func(c *config) { c.hooks = h })
}

// WithDecorator sets a function that wraps the body of every submission
// once, callables included (JDK decorateTask). It is called in the
// submitting goroutine. A decorator that panics or returns nil fails the
// submission with an error; nothing is queued.
func WithDecorator(d func(Task) Task) Option {
	return optionFunc(func(c *config) { c.decorator = d })
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
}

// taskConfig is what TaskOptions set.
type taskConfig struct {
	name            string
	continueOnError bool
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

// newTaskExt builds the optional part of a task, or nil when none is needed.
func newTaskExt(opts []TaskOption, face ScheduledFuture) *taskExt {
	if len(opts) == 0 {
		// The common case, kept free of allocation: tc below escapes
		// through the interface call, so it is on the heap.
		if face == nil {
			return nil
		}
		return &taskExt{face: face}
	}
	var tc taskConfig
	for _, o := range opts {
		if o != nil {
			o.applyTask(&tc)
		}
	}
	if tc.name == "" && !tc.continueOnError && face == nil {
		return nil
	}
	ext := &taskExt{name: tc.name, continueOnError: tc.continueOnError, face: face}
	if tc.name != "" {
		ext.labels = pprof.WithLabels(context.Background(), pprof.Labels("scheduler.task", tc.name))
	}
	return ext
}

// RejectionPolicy decides what happens to a submission the scheduler cannot
// accept: after Shutdown, or beyond WithMaxQueueSize (JDK
// RejectedExecutionHandler). Rejected is called once per rejected
// submission, in the submitting goroutine, with the future the call returns.
// A non-nil error is returned by the scheduling call. Unlike the JDK, a
// future the policy leaves neither done nor queued is then canceled, so no
// future is left pending forever.
type RejectionPolicy interface {
	Rejected(s *Scheduler, f ScheduledFuture) error
}

var (
	// AbortPolicy, the default, returns an error wrapping ErrRejected (JDK
	// AbortPolicy); the task's future is canceled.
	AbortPolicy RejectionPolicy = abortPolicy{}
	// CallerRunsPolicy runs the task's first run at once in the submitting
	// goroutine, hooks included; a periodic task is then queued for its
	// next run. After Shutdown it discards, as the JDK's does.
	CallerRunsPolicy RejectionPolicy = callerRunsPolicy{}
	// DiscardPolicy drops the task silently; its future is canceled.
	DiscardPolicy RejectionPolicy = discardPolicy{}
	// DiscardOldestPolicy cancels the earliest-due queued task and queues
	// the new one in its place. After Shutdown it discards, as the JDK's
	// does.
	DiscardOldestPolicy RejectionPolicy = discardOldestPolicy{}
)

type abortPolicy struct{}

func (abortPolicy) Rejected(s *Scheduler, f ScheduledFuture) error {
	reason := "the scheduler is shut down"
	if !s.IsShutdown() {
		reason = fmt.Sprintf("the queue is full (max %d)", s.maxQueueSize)
	}
	return fmt.Errorf("%w: %v: %s", ErrRejected, f, reason)
}

type callerRunsPolicy struct{}

func (callerRunsPolicy) Rejected(s *Scheduler, f ScheduledFuture) error {
	if s.IsShutdown() {
		return nil
	}
	s.runInCaller(f)
	return nil
}

type discardPolicy struct{}

func (discardPolicy) Rejected(*Scheduler, ScheduledFuture) error { return nil }

type discardOldestPolicy struct{}

func (discardOldestPolicy) Rejected(s *Scheduler, f ScheduledFuture) error {
	if s.IsShutdown() {
		return nil
	}
	s.replaceOldest(f)
	return nil
}
