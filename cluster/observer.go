package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/go-stpe/scheduler/cluster/driver"
	"time"
)

// Observing a node: the hooks that metrics and tracing build on
// (the otelcluster module), with no dependency here. An Observer is a set of
// functions, each optional, in the style of scheduler.Hooks; a node given
// none (the default) pays nothing for them: no allocation and no Redis call
// (BenchmarkObserver measures it).

// MaxMetadata is the largest task metadata an Observer may attach, in bytes
// of its stored form (a JSON object of strings). A W3C traceparent takes
// 55 bytes, a tracestate at most 512.
const MaxMetadata = 8 << 10

// Observer is told what a node does: tasks scheduled and claimed, how each
// run ended, how long each Redis script took, and, as a reaper, the
// pending depth of its partitions and the runs lost with their lease.
// WithObserver installs it.
// Every field may be nil; a nil field is never called.
//
// The functions are called on the node's goroutines (a Schedule caller's,
// a worker's, a loop's), concurrently, and never with a node lock held;
// they must be safe for concurrent use and quick, as a worker waits for
// them, and must not panic. Micrometer's TaskExecutionObservation, asynq's
// and River's middleware play this part in the peers.
type Observer struct {
	// Metadata returns metadata to store with the task Schedule is about
	// to store, from Schedule's ctx: a trace context, for example. The
	// metadata is stored in the task's hash with the task, in the same
	// script, and given back to Run whenever the task runs, on whichever
	// node. Periodic occurrences, stored by a node's sweep, get it too,
	// with the sweep's ctx. Empty or nil stores nothing. Metadata larger
	// than MaxMetadata fails the Schedule call with an error wrapping
	// scheduler.ErrInvalidArgument, and nothing is stored. It is not part
	// of the task's identity: scheduling a task again under its WithID
	// with other metadata is still the same task, which keeps the metadata
	// it was first stored with.
	Metadata func(ctx context.Context, kind string) map[string]string

	// Scheduled is called once per task stored, on the node that stored
	// it, after Redis has it, with Schedule's ctx (the sweep's for a
	// periodic occurrence). A Schedule that finds the same task stored
	// already (WithID) is not a new task and is not reported.
	Scheduled func(ctx context.Context, kind string)

	// Claimed is called when this node wins the claim of a task, before
	// its run. lateness is how late the claim is: the node's clock,
	// corrected by its measured offset from Redis's, when the claim's
	// answer came, minus the time the task was pending for (its due time,
	// or its retry time after a failed run), at least 0. It counts the
	// in-memory scheduler's lateness, the backup delay of a node that is
	// not the task's preferred claimer, and the claim's round trip. A
	// claim that a stopping node hands back at once has no run, so
	// neither Run nor Ended follows it.
	Claimed func(kind string, lateness time.Duration)

	// Run is called before the handler with the handler's ctx, the task,
	// and the metadata stored with it (nil if none); the ctx it returns
	// is the handler's (a span's, for example). It must return a context
	// derived from ctx, so that the handler still sees its cancelation;
	// nil means ctx.
	// Every Run is followed by exactly one Ended.
	Run func(ctx context.Context, t Task, metadata map[string]string) context.Context

	// Ended is called once per run, with the ctx Run returned (the
	// handler's ctx without Run), after the run's outcome was written to
	// Redis, or found impossible to write (see RunEnd). For a handler
	// past its time limit and grace (WithTaskTimeout) it is called when
	// the node records the failed attempt, while the handler may still be
	// running.
	Ended func(ctx context.Context, e RunEnd)

	// RedisCall is called after each call of one of the node's Lua
	// scripts (every change of state, the sweep's load, the renewals,
	// the reaper, the membership, the listing's pages), with the script's
	// name and how long the call took. Other commands (the pipeline that
	// reads a listed page's tasks, PausedKinds, Health's PING, the
	// subscription) are not reported.
	// go-redis's own instrumentation (redisotel) reports every command,
	// by command name. It is called on a node made by New only: a node
	// made by NewWithDriver never calls it, whatever its driver.
	RedisCall func(c RedisCall)

	// PendingSampled is called after each sample of the pending tasks
	// (once a minute, and once at Start), with one PendingSample per kind
	// of the partitions this node reaps as their owner, summed over them:
	// a partition is reaped by two nodes, its owner and its backup
	// (ownership.go), and only its owner reports it, so that the sum over
	// the live nodes counts each partition once. A node that owns no
	// partition reports an empty sample. It is called on the sampling
	// loop's goroutine.
	PendingSampled func(samples []PendingSample)

	// RunLost is called when this node's reaper finds a task's lease
	// expired and returns it to pending, or makes it dead past the limit
	// of lost runs (WithMaxLostRuns): one call per lost run, counted once in
	// the cluster (the reap is atomic), on whichever node reaped it; the
	// node that lost the run may be dead. It is called on the reaper's
	// goroutine.
	RunLost func(l LostRun)
}

// WithObserver installs o on the node (see Observer); the last one given
// counts. The default is the zero Observer, which observes nothing.
func WithObserver(o Observer) Option {
	return optionFunc(func(c *config) { c.observer = o })
}

// Outcome is how a run ended, as Observer.Ended reports it.
type Outcome = driver.Outcome

const (
	// OutcomeSucceeded: the handler returned nil and the task was
	// completed.
	OutcomeSucceeded = driver.OutcomeSucceeded
	// OutcomeFailed: the handler returned an error or panicked, and the
	// failed attempt was recorded: the task waits for its retry, or is
	// dead (RunEnd.Dead).
	OutcomeFailed = driver.OutcomeFailed
	// OutcomeTimedOut: the handler passed its time limit
	// (WithTaskTimeout), and the failed attempt was recorded: the task
	// waits for its retry, or is dead (RunEnd.Dead).
	OutcomeTimedOut = driver.OutcomeTimedOut
	// OutcomeLost: the run's outcome was not recorded and the task's
	// lease returns it to pending (or already did), to run again: the
	// lease expired or was taken while the handler ran, the outcome could
	// not be written, or StopNow left the task to its lease. A node that
	// dies reports nothing; Task.Lost counts its runs, and the reaper
	// that returns the task reports each (Observer.RunLost).
	OutcomeLost = driver.OutcomeLost
	// OutcomeCanceled: Node.Cancel removed the task while it ran; the
	// run's outcome was dropped.
	OutcomeCanceled = driver.OutcomeCanceled
	// OutcomeHandedBack: Node.Stop's ctx ended while the handler ran; the
	// task went back to pending, no attempt counted.
	OutcomeHandedBack = driver.OutcomeHandedBack
)

// RunEnd is one run as Observer.Ended reports it.
type RunEnd struct {
	// Task is the task as its handler saw it.
	Task Task
	// Outcome is how the run ended.
	Outcome Outcome
	// Dead is true if this run's failure made the task dead: its last
	// retry (or ErrSkipRetry).
	Dead bool
	// Duration is how long the handler ran, by the node's monotonic
	// clock: from its call to its return, or, for a handler abandoned past
	// its time limit and grace, to when the node gave up on it.
	Duration time.Duration
	// Err is the handler's error (a panic's wraps a
	// *scheduler.PanicError), the time limit's cause wrapping
	// ErrTaskTimeout, or nil.
	Err error
}

// RedisCall is one call of a Lua script, as Observer.RedisCall reports it.
type RedisCall struct {
	// Command is the Redis command: "EVALSHA", or "EVAL" when Redis did
	// not have the script cached (after a restart or SCRIPT FLUSH).
	Command string
	// Script names the script: "claim", "complete", "schedule"...
	Script string
	// Duration is the call's round trip, by the node's monotonic clock.
	Duration time.Duration
	// Err is the call's error, or nil (a nil reply is no error). An
	// EVALSHA that found no cached script fails with a NOSCRIPT error and
	// is followed by an EVAL of the same script.
	Err error
}

// Stats is what a node holds in memory now, for gauges read on demand.
type Stats struct {
	// Running counts the tasks this node holds a claim on: running, or
	// claimed and about to start.
	Running int
	// Windowed counts the tasks in this node's window: loaded from
	// Redis, waiting in memory for their due time to be claimed.
	Windowed int
	// Owned counts the partitions this node owns for at least one of
	// its kinds: it loads their tasks and hears their notices.
	Owned int
	// BackedUp counts the partitions this node backs up for at least one
	// of its kinds: it claims their overdue tasks (see the package doc).
	BackedUp int
}

// Stats returns what the node holds in memory now. Unlike Counts it asks
// Redis nothing.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return Stats{Running: len(n.running), Windowed: len(n.loaded),
		Owned: n.shares.ownedPartitions(), BackedUp: n.shares.backedPartitions()}
}

// metadataOf asks the observer for the metadata of a task being stored
// and returns its stored form, "" for none.
func (n *Node) metadataOf(ctx context.Context, what, kind string) (string, error) {
	if n.cfg.observer.Metadata == nil {
		return "", nil
	}
	m := n.cfg.observer.Metadata(ctx, kind)
	if len(m) == 0 {
		return "", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", failed(what+": encode the observer's metadata", err)
	}
	if len(b) > MaxMetadata {
		return "", invalid(what, "observer metadata of %d bytes exceeds the limit of %d", len(b), MaxMetadata)
	}
	return string(b), nil
}

// observeScheduled reports a task stored.
func (n *Node) observeScheduled(ctx context.Context, kind string) {
	if n.cfg.observer.Scheduled != nil {
		n.cfg.observer.Scheduled(ctx, kind)
	}
}

// observeClaim reports a claim won of a task pending for due (µs).
func (n *Node) observeClaim(kind string, due int64) {
	if n.cfg.observer.Claimed == nil {
		return
	}
	n.mu.Lock()
	now := n.nowLocked()
	n.mu.Unlock()
	n.cfg.observer.Claimed(kind, max(now.Sub(time.UnixMicro(due)), 0))
}

// runObservation is one run under observation: the handler's ctx (Run's),
// the task, and when the handler was called. It is a value, so that a
// node without an observer allocates nothing for it.
type runObservation struct {
	ctx     context.Context
	task    Task
	started time.Time // zero without an Ended hook
}

// observeRun tells the observer a run starts and returns the observation,
// whose ctx is the handler's. meta is the task's stored metadata.
func (n *Node) observeRun(ctx context.Context, t Task, meta string) runObservation {
	o := runObservation{ctx: ctx, task: t}
	if n.cfg.observer.Run != nil {
		if c := n.cfg.observer.Run(ctx, t, n.decodeMetadata(t.ID, meta)); c != nil {
			o.ctx = c
		}
	}
	if n.cfg.observer.Ended != nil {
		o.started = time.Now()
	}
	return o
}

// decodeMetadata reads the stored form of a task's metadata; a form that
// does not decode (the hash was edited by hand) is logged and read as none.
func (n *Node) decodeMetadata(id, meta string) map[string]string {
	if meta == "" {
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(meta), &m); err != nil {
		n.cfg.logger.Warn("cluster: run: the task's observer metadata does not decode; the run goes on without it",
			"id", id, "err", err)
		return nil
	}
	return m
}

// ended reports a run whose outcome needed no write, or whose outcome
// could not be recorded.
func (o runObservation) ended(n *Node, out Outcome, err error) {
	if n.cfg.observer.Ended == nil {
		return
	}
	n.cfg.observer.Ended(o.ctx, RunEnd{Task: o.task, Outcome: out, Duration: time.Since(o.started), Err: err})
}

// recorded reports a run whose outcome out was written with the script's
// answer res: "dead" makes the task dead, "lost" (the node no longer held
// the task) or "" (nothing could be written) loses the run.
func (o runObservation) recorded(n *Node, out Outcome, res string, err error) {
	if n.cfg.observer.Ended == nil {
		return
	}
	e := RunEnd{Task: o.task, Outcome: out, Duration: time.Since(o.started), Err: err}
	switch res {
	case "dead":
		e.Dead = true
	case "lost", "":
		e.Outcome = OutcomeLost
	}
	n.cfg.observer.Ended(o.ctx, e)
}

// lostOutcome tells a run canceled by Node.Cancel from one whose lease was
// lost otherwise.
func lostOutcome(cause error) Outcome {
	if errors.Is(cause, errTaskCanceled) {
		return OutcomeCanceled
	}
	return OutcomeLost
}

// observeRedis returns the hook the Redis driver reports its script calls
// to, nil when the observer does not want them, so that a node without an
// observer calls Redis directly.
func observeRedis(report func(RedisCall)) func(command, script string, took time.Duration, err error) {
	if report == nil {
		return nil
	}
	return func(command, script string, took time.Duration, err error) {
		report(RedisCall{Command: command, Script: script, Duration: took, Err: err})
	}
}
