package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"
)

// The Scheduler: its state, its construction, and the public calls that
// queue tasks or take them out of the queue (JDK
// ScheduledThreadPoolExecutor's schedule methods, delayedExecute, remove,
// purge and getQueue). Shutdown is in shutdown.go and stop.go, callables in
// callable.go, the pool in worker.go, running a task in run.go, when it runs
// next in nextrun.go, the queue in delayqueue.go, its heap in heap.go, the
// wait on it in leader.go.

// runState is the scheduler's life cycle (JDK ThreadPoolExecutor run
// states). It only moves forward, always under q.mu, and as the JDK's
// does:
//
//	Running -> Shutdown     on Shutdown
//	(Running or Shutdown) -> Stop   on ShutdownNow
//	Shutdown -> Tidying     when the queue and the pool are empty
//	Stop -> Tidying         when the pool is empty
//	Tidying -> Terminated   when the Terminated hook has returned
type runState int32

const (
	// stateRunning accepts tasks and runs them.
	stateRunning runState = iota
	// stateShutdown rejects new tasks and runs the queued ones its
	// policies keep.
	stateShutdown
	// stateStop rejects new tasks, runs none, and has drained the queue.
	stateStop
	// stateTidying: no workers and no tasks; the Terminated hook runs.
	stateTidying
	// stateTerminated: done; AwaitTermination returns.
	stateTerminated
)

func (s runState) String() string {
	switch s {
	case stateRunning:
		return "Running"
	case stateShutdown:
		return "Shutting down"
	case stateStop:
		return "Stopping"
	case stateTidying:
		return "Tidying"
	case stateTerminated:
		return "Terminated"
	}
	return fmt.Sprintf("runState(%d)", int32(s))
}

// Scheduler runs tasks after a delay or periodically on a fixed pool of
// worker goroutines: the Go counterpart of java.util.concurrent.
// ScheduledThreadPoolExecutor. A Scheduler comes only from [New]; the zero
// value is not usable. It is safe for use by many goroutines at once.
//
// Workers start lazily, one per submitted task until the pool is full. A
// Scheduler must be shut down ([Scheduler.Shutdown] or
// [Scheduler.ShutdownNow]) for its workers to exit.
type Scheduler struct {
	// Set by New, then read-only.
	logger     *slog.Logger
	hooks      []Hooks           // every WithHooks set, in order
	decorators []func(Task) Task // the first is the outermost
	baseCtx    context.Context   // the values every run's ctx carries; never canceled
	observing  bool              // some Hooks.Observe is set: runs read the clock at their end

	hasBeforeExecute bool // some Hooks.BeforeExecute is set
	maxQueueSize     int

	// Policies, read without a lock on the hot paths.
	policy           atomic.Pointer[RejectionPolicy]
	removeOnCancel   atomic.Bool
	continuePeriodic atomic.Bool
	executeDelayed   atomic.Bool

	// q is the delay queue; its mutex also guards the fields marked q.mu.
	q delayQueue

	// Pool state; q.mu.
	state           runState
	workers         map[*worker]struct{}
	corePoolSize    int
	largestPoolSize int
	active          int          // tasks taken and not yet finished
	completed       uint64       // finished runs
	canceledLocked  uint64       // cancels counted under q.mu; Stats adds s.canceled
	seq             uint64       // the next task's sequence number
	callerRuns      []*runRecord // runs in progress in callers' goroutines (CallerRunsPolicy)

	stateA atomic.Int32 // a copy of state for lock-free reads; written under q.mu

	// Counters without an invariant to keep with the queue.
	rejected, failed, panicked, canceled atomic.Uint64

	// history counts the runs of the last minutes once RunHistory has
	// been called (history.go); nil until then.
	history atomic.Pointer[runHistory]

	terminated chan struct{} // closed when the state becomes stateTerminated
}

// New returns a Scheduler with a pool of poolSize workers (JDK
// ScheduledThreadPoolExecutor(corePoolSize)). It returns an error wrapping
// ErrInvalidArgument if poolSize < 1 or an option is nil. No goroutine starts until a task is
// submitted (or [Scheduler.PrestartAllCoreWorkers] is called).
func New(poolSize int, opts ...Option) (*Scheduler, error) {
	if poolSize < 1 {
		return nil, invalid("New", "poolSize %d < 1", poolSize)
	}
	cfg := defaultConfig()
	for i, o := range opts {
		if o == nil {
			return nil, invalid("New", "option %d is nil", i)
		}
		o.apply(&cfg)
	}
	s := &Scheduler{
		logger:       cfg.logger,
		hooks:        cfg.hooks,
		decorators:   cfg.decorators,
		baseCtx:      context.Background(),
		maxQueueSize: cfg.maxQueueSize,
		workers:      make(map[*worker]struct{}),
		corePoolSize: poolSize,
		terminated:   make(chan struct{}),
	}
	s.policy.Store(&cfg.policy)
	s.removeOnCancel.Store(cfg.removeOnCancel)
	s.continuePeriodic.Store(cfg.continuePeriodic)
	s.executeDelayed.Store(cfg.executeDelayed)
	if cfg.baseContext != nil {
		s.baseCtx = context.WithoutCancel(cfg.baseContext)
	}
	for _, h := range cfg.hooks {
		s.observing = s.observing || h.Observe != nil
		s.hasBeforeExecute = s.hasBeforeExecute || h.BeforeExecute != nil
	}
	s.q.init(cfg.clock, cfg.timingWheel)
	s.q.precise = cfg.preciseTiming
	return s, nil
}

func (s *Scheduler) setStateLocked(st runState) {
	s.state = st
	s.stateA.Store(int32(st))
}

// initTask fills in a new task of kind kind: its period field (span is the
// period or delay of a periodic kind, see encodePeriod), options, decorated
// body. face is the *Future of a Callable, nil for a Task.
func (s *Scheduler) initTask(t *futureTask, fn Task, kind TaskKind, span time.Duration, opts []TaskOption, face ScheduledFuture) error {
	t.s = s
	t.heapIndex = notQueued
	ext, err := newTaskExt(opts, face, kind)
	if err != nil {
		return err
	}
	if period := encodePeriod(kind, span); period != 0 || ext != nil {
		t.aux.Store(&taskAux{period: period, ext: ext})
	}
	for i := len(s.decorators) - 1; i >= 0; i-- {
		if fn, err = s.decorate(s.decorators[i], fn); err != nil {
			return err
		}
	}
	t.fn = fn
	return nil
}

// decorate applies one decorator, turning a panic or a nil result into an
// error: the submission then fails and nothing is queued.
func (s *Scheduler) decorate(decorator func(Task) Task, fn Task) (Task, error) {
	var d Task
	if pe := s.guard("decorator", nil, func() { d = decorator(fn) }); pe != nil {
		s.rejected.Add(1)
		return nil, rejected("decorator", "panicked", pe)
	}
	if d == nil {
		return nil, invalid("decorator", "returned a nil Task")
	}
	return d, nil
}

// delayedExecute queues t to run delay from now, or rejects it (JDK
// delayedExecute). The run-state check and the queueing are one critical
// section, so a task is never queued after Shutdown.
func (s *Scheduler) delayedExecute(t *futureTask, delay time.Duration) (ScheduledFuture, error) {
	q := &s.q
	now := q.now()
	q.mu.Lock()
	// Sequence numbers are per scheduler and handed out under q.mu: no
	// atomic on the hot path, and their order is the order of queueing.
	t.seq = s.seq
	s.seq++
	t.setWhenLocked(q.triggerTimeLocked(now, t.withJitter(int64(delay))))
	if s.state == stateRunning && (s.maxQueueSize <= 0 || q.lenLocked() < s.maxQueueSize) {
		q.offerLocked(t)
		s.ensurePrestartLocked()
		q.mu.Unlock()
		return t.face(), nil
	}
	q.mu.Unlock()
	return s.reject(t)
}

// taskOf returns the task behind f if it belongs to s, else nil.
func (s *Scheduler) taskOf(f ScheduledFuture) *futureTask {
	h, ok := f.(taskHolder)
	if !ok {
		return nil
	}
	t := h.schedTask() // nil for a typed nil future
	if t == nil || t.s != s {
		return nil
	}
	return t
}

// Schedule runs task once, delay from now (JDK schedule(Runnable, delay)).
// A delay <= 0 means now; delays up to math.MaxInt64 are fine. It returns an
// error wrapping ErrInvalidArgument if task is nil, and the rejection
// policy's error if the scheduler is shut down or the queue is full.
func (s *Scheduler) Schedule(task Task, delay time.Duration, opts ...TaskOption) (ScheduledFuture, error) {
	if task == nil {
		return nil, invalid("Schedule", "nil task")
	}
	return s.schedule(task, KindOneShot, delay, 0, opts)
}

// schedule makes a task of kind kind (span as for initTask) and queues it
// to run first after delay.
func (s *Scheduler) schedule(fn Task, kind TaskKind, delay, span time.Duration, opts []TaskOption) (ScheduledFuture, error) {
	t := &futureTask{}
	if err := s.initTask(t, fn, kind, span, opts, nil); err != nil {
		return nil, err
	}
	return s.delayedExecute(t, delay)
}

// ScheduleAtFixedRate runs task first after initialDelay, then every period
// (JDK scheduleAtFixedRate): run k is due at initialDelay + k*period from
// now, whatever the runs' durations. If a run overruns, the next starts
// right after it and the task catches up with back-to-back runs; runs are
// never skipped and never overlap. A negative initialDelay means now.
//
// The runs go on until the future is canceled, a run fails (returns an error
// or panics; see [ContinueOnError]), or the scheduler shuts down. The future
// is done only then; Wait blocks until then. It returns an error wrapping
// ErrInvalidArgument if task is nil or period <= 0.
func (s *Scheduler) ScheduleAtFixedRate(task Task, initialDelay, period time.Duration, opts ...TaskOption) (ScheduledFuture, error) {
	if task == nil {
		return nil, invalid("ScheduleAtFixedRate", "nil task")
	}
	if period <= 0 {
		return nil, invalid("ScheduleAtFixedRate", "period %v <= 0", period)
	}
	return s.schedule(task, KindFixedRate, initialDelay, period, opts)
}

// ScheduleWithFixedDelay runs task first after initialDelay, then again
// delay after each run ends (JDK scheduleWithFixedDelay). Runs never
// overlap. It ends as [Scheduler.ScheduleAtFixedRate] does, and returns an
// error wrapping ErrInvalidArgument if task is nil or delay <= 0.
func (s *Scheduler) ScheduleWithFixedDelay(task Task, initialDelay, delay time.Duration, opts ...TaskOption) (ScheduledFuture, error) {
	if task == nil {
		return nil, invalid("ScheduleWithFixedDelay", "nil task")
	}
	if delay <= 0 {
		return nil, invalid("ScheduleWithFixedDelay", "delay %v <= 0", delay)
	}
	return s.schedule(task, KindFixedDelay, initialDelay, delay, opts)
}

// Execute runs task as soon as a worker is free (JDK execute): Schedule with
// a zero delay, without the future.
func (s *Scheduler) Execute(task Task) error {
	_, err := s.Schedule(task, 0)
	return err
}

// Submit runs task as soon as a worker is free and returns its future (JDK
// submit(Runnable)): Schedule with a zero delay.
func (s *Scheduler) Submit(task Task, opts ...TaskOption) (ScheduledFuture, error) {
	return s.Schedule(task, 0, opts...)
}

// Remove removes f from the queue without canceling it and reports whether
// it was queued (JDK remove). A running task is not in the queue. A future
// of another scheduler is never removed.
func (s *Scheduler) Remove(f ScheduledFuture) bool {
	t := s.taskOf(f)
	if t == nil {
		return false
	}
	s.q.mu.Lock()
	removed := s.q.removeLocked(t)
	s.unlockAndTryTerminate()
	return removed
}

// removeCanceled counts a cancel and removes t from the queue
// (remove-on-cancel). Counting under the lock saves Cancel an atomic add
// (BenchmarkScheduleCancel/pending=1M).
func (s *Scheduler) removeCanceled(t *futureTask) {
	s.q.mu.Lock()
	s.canceledLocked++
	s.q.removeLocked(t)
	s.unlockAndTryTerminate()
}

// Purge removes every canceled task still queued (JDK purge), in O(n).
func (s *Scheduler) Purge() {
	s.q.mu.Lock()
	s.q.filterLocked(func(t *futureTask) bool { return t.loadState() == stateCanceled })
	s.unlockAndTryTerminate()
}

// Queue returns a snapshot of the queued tasks, canceled ones not yet
// removed included, in the order they are due (JDK getQueue, which is in
// heap order and live).
func (s *Scheduler) Queue() []ScheduledFuture {
	s.q.mu.Lock()
	es := s.q.snapshotLocked()
	s.q.mu.Unlock()
	slices.SortFunc(es, func(x, y heapEntry) int {
		if x.less(&y) {
			return -1
		}
		return 1
	})
	out := make([]ScheduledFuture, len(es))
	for i, e := range es {
		out[i] = e.t.face()
	}
	return out
}
