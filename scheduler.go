// Package scheduler runs delayed and periodic tasks on a fixed pool of
// worker goroutines: the Go counterpart of Java's
// ScheduledThreadPoolExecutor.
//
// A [Scheduler] is related to [time.AfterFunc], but instead of a goroutine
// per firing it keeps one queue, a binary min-heap ordered by trigger time,
// and a pool of workers that take tasks from it as they come due. It adds
// what the JDK has: one-shot delays, fixed-rate runs that catch up when late
// ([Scheduler.ScheduleAtFixedRate]), fixed-delay runs
// ([Scheduler.ScheduleWithFixedDelay]), futures with typed results
// ([Future]), O(log n) cancel, orderly and abrupt shutdown with their
// policies, rejection policies, hooks and statistics. In Go idiom: a task
// gets a [context.Context] that Cancel(true) and ShutdownNow cancel, errors
// work with errors.Is, panics are recovered into [*PanicError] and logged
// through log/slog, and a stopped scheduler leaves no goroutine behind.
//
// All time comes from a [Clock]; tests use schedulertest.NewManualClock with
// [Scheduler.AwaitIdle], or run the scheduler inside a testing/synctest
// bubble. Where this package differs from the JDK, the doc comment says so.
package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"sync/atomic"
	"time"
)

// runState is the scheduler's life cycle (JDK ThreadPoolExecutor run
// states). It only moves forward.
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
	clock        Clock
	systemClock  bool
	origin       time.Time // clock reading that trigger times count from
	logger       *slog.Logger
	hooks        Hooks
	decorator    func(Task) Task
	maxQueueSize int

	// Policies, read without a lock on the hot paths.
	policy           atomic.Pointer[RejectionPolicy]
	removeOnCancel   atomic.Bool
	continuePeriodic atomic.Bool
	executeDelayed   atomic.Bool

	q delayQueue

	// Pool state; q.mu.
	state           runState
	workers         map[*worker]struct{}
	corePoolSize    int
	largestPoolSize int
	active          int    // tasks taken and not yet finished
	completed       uint64 // finished runs
	canceledLocked  uint64 // cancels counted under q.mu; Stats adds s.canceled
	seq             uint64 // the next task's sequence number

	stateA atomic.Int32 // a copy of state for lock-free reads; written under q.mu

	// Counters without an invariant to keep with the queue.
	rejected, failed, panicked, canceled atomic.Uint64

	terminated chan struct{} // closed when the state becomes stateTerminated
}

// New returns a Scheduler with a pool of poolSize workers (JDK
// ScheduledThreadPoolExecutor(corePoolSize)). It returns an error wrapping
// ErrInvalidArgument if poolSize < 1. No goroutine starts until a task is
// submitted (or [Scheduler.PrestartAllCoreWorkers] is called).
func New(poolSize int, opts ...Option) (*Scheduler, error) {
	if poolSize < 1 {
		return nil, fmt.Errorf("%w: New: poolSize %d < 1", ErrInvalidArgument, poolSize)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	s := &Scheduler{
		clock:        cfg.clock,
		logger:       cfg.logger,
		hooks:        cfg.hooks,
		decorator:    cfg.decorator,
		maxQueueSize: cfg.maxQueueSize,
		workers:      make(map[*worker]struct{}),
		corePoolSize: poolSize,
		terminated:   make(chan struct{}),
	}
	_, s.systemClock = cfg.clock.(systemClock)
	s.origin = s.clock.Now()
	s.policy.Store(&cfg.policy)
	s.removeOnCancel.Store(cfg.removeOnCancel)
	s.continuePeriodic.Store(cfg.continuePeriodic)
	s.executeDelayed.Store(cfg.executeDelayed)
	s.q.init()
	return s, nil
}

// now returns the clock's time in nanoseconds since s.origin.
func (s *Scheduler) now() int64 {
	if s.systemClock {
		// time.Since reads only the monotonic clock when origin has a
		// monotonic reading: one vDSO call instead of Now's two.
		return int64(time.Since(s.origin))
	}
	return int64(s.clock.Now().Sub(s.origin))
}

func (s *Scheduler) setStateLocked(st runState) {
	s.state = st
	s.stateA.Store(int32(st))
}

// maxDelay is the JDK's Long.MAX_VALUE >> 1: delays from here on go through
// overflowFree.
const maxDelay = math.MaxInt64 >> 1

// triggerTimeLocked returns the trigger time delay after now (JDK
// triggerTime), keeping it within MaxInt64 of the head's so that comparing
// by subtraction cannot overflow (JDK overflowFree, R-3).
func (s *Scheduler) triggerTimeLocked(now, delay int64) int64 {
	if delay < 0 {
		delay = 0
	}
	if delay >= maxDelay {
		if head := s.q.heap.peek(); head != nil {
			headDelay := head.when - now
			if headDelay < 0 && delay-headDelay < 0 {
				delay = math.MaxInt64 + headDelay
			}
		}
	}
	return now + delay
}

// initTask fills in a new task: sequence number, options, decorated body.
// face is the *Future of a Callable, nil for a Task.
func (s *Scheduler) initTask(t *task, fn Task, period int64, opts []TaskOption, face ScheduledFuture) error {
	t.s = s
	t.period = period
	t.heapIndex = -1
	t.ext = newTaskExt(opts, face)
	if s.decorator == nil {
		t.fn = fn
		return nil
	}
	d, err := s.decorate(fn)
	if err != nil {
		return err
	}
	t.fn = d
	return nil
}

// decorate applies the decorator, turning a panic or a nil result into an
// error: the submission then fails and nothing is queued.
func (s *Scheduler) decorate(fn Task) (d Task, err error) {
	defer func() {
		if r := recover(); r != nil {
			pe := newPanicError(r)
			s.rejected.Add(1)
			s.logger.Error("scheduler: decorator panicked", "panic", r, "stack", string(pe.Stack))
			err = fmt.Errorf("%w: the decorator panicked: %w", ErrRejected, pe)
		}
	}()
	d = s.decorator(fn)
	if d == nil {
		return nil, fmt.Errorf("%w: the decorator returned a nil Task", ErrInvalidArgument)
	}
	return d, nil
}

// delayedExecute queues t to run delay from now, or rejects it (JDK
// delayedExecute). The run-state check and the queueing are one critical
// section, so a task is never queued after Shutdown.
func (s *Scheduler) delayedExecute(t *task, delay time.Duration) (ScheduledFuture, error) {
	now := s.now()
	d := int64(max(delay, 0)) // JDK triggerTime: a negative delay means now
	q := &s.q
	q.mu.Lock()
	// Sequence numbers are per scheduler and handed out under q.mu: no
	// atomic on the hot path, and their order is the order of queueing.
	t.seq = s.seq
	s.seq++
	t.when = s.triggerTimeLocked(now, d)
	if s.state == stateRunning && (s.maxQueueSize <= 0 || q.heap.len() < s.maxQueueSize) {
		q.offerLocked(t)
		s.ensurePrestartLocked()
		q.mu.Unlock()
		return t.face(), nil
	}
	q.mu.Unlock()
	return s.reject(t)
}

// reject hands t to the rejection policy (JDK reject) and makes sure its
// future is not left pending: unless the policy ran it, queued it or
// completed it, it is canceled.
func (s *Scheduler) reject(t *task) (ScheduledFuture, error) {
	s.rejected.Add(1)
	f := t.face()
	err := s.callPolicy(*s.policy.Load(), f)
	if !t.IsDone() && !s.queuedOrRunning(t) {
		t.cancelState()
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// callPolicy calls the policy, turning a panic into an error.
func (s *Scheduler) callPolicy(p RejectionPolicy, f ScheduledFuture) (err error) {
	defer func() {
		if r := recover(); r != nil {
			pe := newPanicError(r)
			s.logger.Error("scheduler: rejection policy panicked", "task", f.Name(), "panic", r,
				"stack", string(pe.Stack))
			err = fmt.Errorf("%w: the rejection policy panicked: %w", ErrRejected, pe)
		}
	}()
	return p.Rejected(s, f)
}

// queuedOrRunning reports whether t is in the queue or on a worker.
func (s *Scheduler) queuedOrRunning(t *task) bool {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	if t.heapIndex >= 0 {
		return true
	}
	for w := range s.workers {
		if w.current == t {
			return true
		}
	}
	return false
}

// taskOf returns the task behind f if it belongs to s, else nil.
func (s *Scheduler) taskOf(f ScheduledFuture) *task {
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

// runInCaller runs f's first run in the calling goroutine, for
// CallerRunsPolicy. It counts as active while it runs.
func (s *Scheduler) runInCaller(f ScheduledFuture) {
	t := s.taskOf(f)
	if t == nil {
		return
	}
	s.q.mu.Lock()
	s.active++
	s.q.mu.Unlock()
	ran := s.runTask(t)
	s.q.mu.Lock()
	s.finishRunLocked(ran)
	s.q.mu.Unlock()
}

// replaceOldest cancels the earliest-due queued task and queues f in its
// place, for DiscardOldestPolicy.
func (s *Scheduler) replaceOldest(f ScheduledFuture) {
	t := s.taskOf(f)
	if t == nil {
		return
	}
	q := &s.q
	q.mu.Lock()
	if s.state != stateRunning {
		q.mu.Unlock()
		return
	}
	var oldest *task
	if q.heap.len() > 0 {
		oldest = q.heap.popHead()
	}
	q.offerLocked(t)
	s.ensurePrestartLocked()
	q.mu.Unlock()
	if oldest != nil {
		oldest.cancelState()
	}
}

// Schedule runs task once, delay from now (JDK schedule(Runnable, delay)).
// A delay <= 0 means now; delays up to math.MaxInt64 are fine. It returns an
// error wrapping ErrInvalidArgument if task is nil, and the rejection
// policy's error if the scheduler is shut down or the queue is full.
func (s *Scheduler) Schedule(task Task, delay time.Duration, opts ...TaskOption) (ScheduledFuture, error) {
	if task == nil {
		return nil, fmt.Errorf("%w: Schedule: nil task", ErrInvalidArgument)
	}
	return s.schedule(task, delay, 0, opts)
}

func (s *Scheduler) schedule(fn Task, delay time.Duration, period int64, opts []TaskOption) (ScheduledFuture, error) {
	t := &task{}
	if err := s.initTask(t, fn, period, opts, nil); err != nil {
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
		return nil, fmt.Errorf("%w: ScheduleAtFixedRate: nil task", ErrInvalidArgument)
	}
	if period <= 0 {
		return nil, fmt.Errorf("%w: ScheduleAtFixedRate: period %v <= 0", ErrInvalidArgument, period)
	}
	return s.schedule(task, initialDelay, int64(period), opts)
}

// ScheduleWithFixedDelay runs task first after initialDelay, then again
// delay after each run ends (JDK scheduleWithFixedDelay). Runs never
// overlap. It ends as [Scheduler.ScheduleAtFixedRate] does, and returns an
// error wrapping ErrInvalidArgument if task is nil or delay <= 0.
func (s *Scheduler) ScheduleWithFixedDelay(task Task, initialDelay, delay time.Duration, opts ...TaskOption) (ScheduledFuture, error) {
	if task == nil {
		return nil, fmt.Errorf("%w: ScheduleWithFixedDelay: nil task", ErrInvalidArgument)
	}
	if delay <= 0 {
		return nil, fmt.Errorf("%w: ScheduleWithFixedDelay: delay %v <= 0", ErrInvalidArgument, delay)
	}
	return s.schedule(task, initialDelay, -int64(delay), opts)
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

// ScheduleCallable runs fn once, delay from now, and returns a Future whose
// Get yields fn's result (JDK schedule(Callable, delay)). Errors are those
// of [Scheduler.Schedule]; a nil s or fn is ErrInvalidArgument.
func ScheduleCallable[T any](s *Scheduler, fn Callable[T], delay time.Duration, opts ...TaskOption) (*Future[T], error) {
	if s == nil || fn == nil {
		return nil, fmt.Errorf("%w: ScheduleCallable: nil scheduler or callable", ErrInvalidArgument)
	}
	f := &Future[T]{}
	body := func(ctx context.Context) error {
		v, err := fn(ctx)
		if err == nil {
			// Read only after the state becomes stateNormal, which
			// complete sets after this body returns.
			f.value = v
		}
		return err
	}
	if err := s.initTask(&f.task, body, 0, opts, f); err != nil {
		return nil, err
	}
	if _, err := s.delayedExecute(&f.task, delay); err != nil {
		return nil, err
	}
	return f, nil
}

// SubmitCallable runs fn as soon as a worker is free (JDK submit(Callable)).
func SubmitCallable[T any](s *Scheduler, fn Callable[T], opts ...TaskOption) (*Future[T], error) {
	return ScheduleCallable(s, fn, 0, opts...)
}

// InvokeAll runs every fn and waits for all of them (JDK invokeAll). It
// returns their futures, in order, all done. If ctx ends first it cancels
// the unfinished ones (with interrupt) and returns all futures with
// ctx.Err(). A nil element is ErrInvalidArgument and schedules nothing; an
// empty list returns an empty result. If a submission is rejected, the
// futures already made are canceled and the error is returned.
func InvokeAll[T any](ctx context.Context, s *Scheduler, fns []Callable[T]) ([]*Future[T], error) {
	if s == nil {
		return nil, fmt.Errorf("%w: InvokeAll: nil scheduler", ErrInvalidArgument)
	}
	if i := slices.IndexFunc(fns, func(fn Callable[T]) bool { return fn == nil }); i >= 0 {
		return nil, fmt.Errorf("%w: InvokeAll: callable %d is nil", ErrInvalidArgument, i)
	}
	futures := make([]*Future[T], 0, len(fns))
	cancelAll := func() { cancelLastFirst(futures) }
	for _, fn := range fns {
		f, err := SubmitCallable(s, fn)
		if err != nil {
			cancelAll()
			return nil, err
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		if f.Wait(ctx) != nil && ctx.Err() != nil {
			cancelAll()
			return futures, ctx.Err()
		}
	}
	return futures, nil
}

// cancelLastFirst cancels futures with interrupt, the last submitted first:
// interrupting a running early task frees its worker, which would otherwise
// start a later, still queued task before the sweep reached it.
func cancelLastFirst[T any](futures []*Future[T]) {
	for i := len(futures) - 1; i >= 0; i-- {
		futures[i].Cancel(true)
	}
}

// InvokeAny runs every fn and returns the result of the first that succeeds,
// canceling the rest (JDK invokeAny). If all fail, the error wraps one of
// their errors; if ctx ends first, ctx.Err(). A nil element or an empty list
// is ErrInvalidArgument and schedules nothing.
func InvokeAny[T any](ctx context.Context, s *Scheduler, fns []Callable[T]) (T, error) {
	var zero T
	if s == nil || len(fns) == 0 {
		return zero, fmt.Errorf("%w: InvokeAny: nil scheduler or no callables", ErrInvalidArgument)
	}
	if i := slices.IndexFunc(fns, func(fn Callable[T]) bool { return fn == nil }); i >= 0 {
		return zero, fmt.Errorf("%w: InvokeAny: callable %d is nil", ErrInvalidArgument, i)
	}
	futures := make([]*Future[T], 0, len(fns))
	defer func() { cancelLastFirst(futures) }()
	for _, fn := range fns {
		f, err := SubmitCallable(s, fn)
		if err != nil {
			return zero, err
		}
		futures = append(futures, f)
	}
	// Wait for whichever finishes first, with one select over every Done
	// channel and ctx: no helper goroutine, and a future canceled by some
	// other path is seen as finished too.
	cases := make([]reflect.SelectCase, len(futures)+1)
	cases[0] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}
	for i, f := range futures {
		cases[i+1] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(f.Done())}
	}
	var lastErr error
	for range futures {
		i, _, _ := reflect.Select(cases)
		if i == 0 {
			return zero, ctx.Err()
		}
		cases[i].Chan = reflect.Value{} // a zero Chan disables the case
		v, err := futures[i-1].Get(ctx)
		if err == nil {
			return v, nil
		}
		lastErr = err
	}
	return zero, fmt.Errorf("scheduler: InvokeAny: all %d tasks failed: %w", len(fns), lastErr)
}

// Shutdown starts an orderly shutdown (JDK shutdown): new submissions are
// rejected; queued one-shot tasks still run when due (unless the
// execute-existing-delayed policy is false, which cancels those not yet
// due); queued periodic tasks are canceled (unless the
// continue-existing-periodic policy is true); canceled tasks still queued
// are removed. Running tasks are not interrupted.
//
// Shutdown does not wait: use [Scheduler.AwaitTermination]. For the abrupt
// form, use [Scheduler.ShutdownNow]. A Scheduler cannot be restarted;
// calling Shutdown again does nothing more.
func (s *Scheduler) Shutdown() {
	s.q.mu.Lock()
	if s.state < stateShutdown {
		s.setStateLocked(stateShutdown)
	}
	s.onShutdownLocked()
	s.q.wakeAllLocked()
	s.unlockAndTryTerminate()
}

// onShutdownLocked removes and cancels the queued tasks that the shutdown
// policies no longer allow to run, and the already-canceled ones (JDK
// onShutdown).
func (s *Scheduler) onShutdownLocked() {
	if s.state != stateShutdown {
		return
	}
	keepDelayed := s.executeDelayed.Load()
	keepPeriodic := s.continuePeriodic.Load()
	now := s.now()
	s.q.filterLocked(func(t *task) bool {
		var drop bool
		if t.period != 0 {
			drop = !keepPeriodic
		} else {
			drop = !keepDelayed && t.when-now > 0
		}
		if drop {
			t.cancelState()
		}
		return drop || t.loadState() == stateCanceled
	})
}

// ShutdownNow stops the scheduler at once (JDK shutdownNow): new
// submissions are rejected, every queued task is removed and returned in due
// order, and the ctx of every running task is canceled. The returned tasks
// never started and are not canceled (the caller may run its own cleanup or
// cancel them); like the JDK, the list includes canceled tasks still queued.
// A running one-shot task that returns nil after its ctx was canceled
// completes normally; a running periodic task ends canceled.
//
// ShutdownNow does not wait for running tasks to return: use
// [Scheduler.AwaitTermination]. For the graceful form, use Shutdown.
func (s *Scheduler) ShutdownNow() []ScheduledFuture {
	s.q.mu.Lock()
	if s.state < stateStop {
		s.setStateLocked(stateStop)
	}
	for w := range s.workers {
		if w.current != nil {
			w.current.interrupt()
		}
	}
	ts := s.q.drainLocked()
	s.q.wakeAllLocked()
	s.unlockAndTryTerminate()
	out := make([]ScheduledFuture, len(ts))
	for i, t := range ts {
		out[i] = t.face()
	}
	return out
}

// unlockAndTryTerminate unlocks q.mu and, if the scheduler may now
// terminate, terminates it: the Terminated hook runs outside the lock.
func (s *Scheduler) unlockAndTryTerminate() {
	term := s.tryTerminateLocked()
	s.q.mu.Unlock()
	if term {
		s.finishTermination()
	}
}

// tryTerminateLocked moves the scheduler to stateTidying if it is shut down
// with no queued task and no worker, and reports whether it did; the caller
// must then call finishTermination once unlocked. If only workers remain, it
// wakes one so that it re-checks and exits, and each exit passes the wave
// on (JDK tryTerminate).
func (s *Scheduler) tryTerminateLocked() bool {
	switch {
	case s.state == stateRunning, s.state >= stateTidying:
		return false
	case s.state == stateShutdown && s.q.heap.len() > 0:
		return false
	case len(s.workers) > 0:
		s.q.wakeOneLocked()
		return false
	}
	s.setStateLocked(stateTidying)
	return true
}

// finishTermination runs the Terminated hook, then publishes termination.
func (s *Scheduler) finishTermination() {
	if h := s.hooks.Terminated; h != nil {
		func() {
			defer func() {
				if r := recover(); r != nil {
					pe := newPanicError(r)
					s.logger.Error("scheduler: hook panicked", "hook", "Terminated", "panic", r,
						"stack", string(pe.Stack))
				}
			}()
			h()
		}()
	}
	s.q.mu.Lock()
	s.setStateLocked(stateTerminated)
	close(s.terminated)
	s.q.notifyIdleLocked()
	s.q.mu.Unlock()
}

// AwaitTermination blocks until the scheduler has terminated after a
// shutdown, returning nil: every worker has exited, the queue is empty, and
// the Terminated hook has run. It returns ctx.Err() if ctx ends first (JDK
// awaitTermination).
func (s *Scheduler) AwaitTermination(ctx context.Context) error {
	select {
	case <-s.terminated:
		return nil
	default:
	}
	select {
	case <-s.terminated:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// IsShutdown reports whether Shutdown or ShutdownNow was called (JDK
// isShutdown).
func (s *Scheduler) IsShutdown() bool { return runState(s.stateA.Load()) >= stateShutdown }

// IsTerminating reports whether the scheduler is shut down but not yet
// terminated (JDK isTerminating).
func (s *Scheduler) IsTerminating() bool {
	st := runState(s.stateA.Load())
	return st >= stateShutdown && st < stateTerminated
}

// IsTerminated reports whether the scheduler has terminated (JDK
// isTerminated).
func (s *Scheduler) IsTerminated() bool { return runState(s.stateA.Load()) == stateTerminated }

// AwaitIdle blocks until, at one instant, no task is running, no queued task
// is due by the scheduler's clock, and every worker is parked (with its
// timer armed if it waits for the head) and none has yet to exit after a
// SetCorePoolSize or a shutdown; then it returns nil. It returns ctx.Err() if ctx ends first, at once if ctx has
// already ended. There is no JDK counterpart.
//
// It is how a test that drives a manual clock waits for the work it made
// due: clk.Advance(d); s.AwaitIdle(ctx). A worker re-reads a manual clock
// after arming its timer, so an Advance racing with it is never missed.
// One Advance(10*period) gives a fixed-rate task its 10 runs back to back
// (the JDK's catch-up); ten Advance(period) calls give 10 runs, each at its
// own instant. A fixed-delay task runs once per jump, as it would after a
// real jump in time: to move time as real time would, step from timer to
// timer (schedulertest.AdvanceAndSettle). On the system clock AwaitIdle
// returns when nothing is due now.
func (s *Scheduler) AwaitIdle(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.q.mu.Lock()
		if s.idleLocked() {
			s.q.mu.Unlock()
			return nil
		}
		ch := s.q.idleChanLocked()
		s.q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// idleLocked is AwaitIdle's condition. Counting parked workers is not
// enough: a worker counts as parked until it re-takes the lock, so a leader
// whose timer fired, or that a new head woke, still counts while nobody waits
// for the head. So a head not yet due also needs a leader whose timer is
// armed for a time still ahead: then the lead is live and a later Advance
// fires it. Workers that must exit (beyond the core size, or shut down with
// nothing queued) have been woken to do so and are not idle yet, and
// stateTidying is not idle: the Terminated hook is running. So after
// AwaitIdle, Stats().PoolSize is settled too.
func (s *Scheduler) idleLocked() bool {
	if s.active > 0 || s.q.parked < len(s.workers) || s.state == stateTidying {
		return false
	}
	if len(s.workers) > s.corePoolSize ||
		(len(s.workers) > 0 && (s.state >= stateStop || (s.state == stateShutdown && s.q.heap.len() == 0))) {
		return false
	}
	head := s.q.heap.peek()
	if head == nil {
		return true
	}
	now := s.now()
	if head.when-now <= 0 {
		return false
	}
	l := s.q.leader
	return l != nil && l.deadline-now > 0
}

// SetRemoveOnCancelPolicy sets the remove-on-cancel policy (JDK
// setRemoveOnCancelPolicy); see [WithRemoveOnCancel]. It does not remove
// tasks canceled before the call: [Scheduler.Purge] does.
func (s *Scheduler) SetRemoveOnCancelPolicy(remove bool) { s.removeOnCancel.Store(remove) }

// RemoveOnCancelPolicy returns the remove-on-cancel policy (JDK
// getRemoveOnCancelPolicy).
func (s *Scheduler) RemoveOnCancelPolicy() bool { return s.removeOnCancel.Load() }

// SetContinueExistingPeriodicTasksAfterShutdownPolicy sets the policy of
// [WithContinueExistingPeriodicTasksAfterShutdown]. Setting it to false
// after Shutdown cancels the queued periodic tasks at once (JDK).
func (s *Scheduler) SetContinueExistingPeriodicTasksAfterShutdownPolicy(keep bool) {
	s.setShutdownPolicy(&s.continuePeriodic, keep)
}

// ContinueExistingPeriodicTasksAfterShutdownPolicy returns the policy set
// by SetContinueExistingPeriodicTasksAfterShutdownPolicy (default false).
func (s *Scheduler) ContinueExistingPeriodicTasksAfterShutdownPolicy() bool {
	return s.continuePeriodic.Load()
}

// SetExecuteExistingDelayedTasksAfterShutdownPolicy sets the policy of
// [WithExecuteExistingDelayedTasksAfterShutdown]. Setting it to false after
// Shutdown cancels the queued one-shot tasks not yet due at once (JDK).
func (s *Scheduler) SetExecuteExistingDelayedTasksAfterShutdownPolicy(keep bool) {
	s.setShutdownPolicy(&s.executeDelayed, keep)
}

// ExecuteExistingDelayedTasksAfterShutdownPolicy returns the policy set by
// SetExecuteExistingDelayedTasksAfterShutdownPolicy (default true).
func (s *Scheduler) ExecuteExistingDelayedTasksAfterShutdownPolicy() bool {
	return s.executeDelayed.Load()
}

func (s *Scheduler) setShutdownPolicy(p *atomic.Bool, keep bool) {
	s.q.mu.Lock()
	p.Store(keep)
	if !keep && s.state == stateShutdown {
		s.onShutdownLocked()
		s.q.wakeAllLocked()
	}
	s.unlockAndTryTerminate()
}

// SetRejectionPolicy replaces the rejection policy (JDK
// setRejectedExecutionHandler). nil means AbortPolicy.
func (s *Scheduler) SetRejectionPolicy(p RejectionPolicy) {
	if p == nil {
		p = AbortPolicy
	}
	s.policy.Store(&p)
}

// SetCorePoolSize sets the number of workers (JDK setCorePoolSize). Growing
// starts new workers at once if tasks are queued, at most one per queued
// task; shrinking lets the extra workers exit once their current task ends
// (idle ones at once). It returns an error wrapping ErrInvalidArgument if
// n < 1.
func (s *Scheduler) SetCorePoolSize(n int) error {
	if n < 1 {
		return fmt.Errorf("%w: SetCorePoolSize: n %d < 1", ErrInvalidArgument, n)
	}
	q := &s.q
	q.mu.Lock()
	defer q.mu.Unlock()
	delta := n - s.corePoolSize
	s.corePoolSize = n
	if len(s.workers) > n {
		q.wakeAllLocked()
		return nil
	}
	// Like the JDK's addWorker(core=true), never past the core size: the
	// pool may hold fewer workers than the old size (they start lazily).
	for k := min(delta, q.heap.len()); k > 0 && len(s.workers) < n && s.canAddWorkerLocked(); k-- {
		s.addWorkerLocked()
	}
	return nil
}

// PrestartAllCoreWorkers starts every worker not yet started and returns
// how many it started (JDK prestartAllCoreThreads).
func (s *Scheduler) PrestartAllCoreWorkers() int {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	n := 0
	for len(s.workers) < s.corePoolSize && s.canAddWorkerLocked() {
		s.addWorkerLocked()
		n++
	}
	return n
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
func (s *Scheduler) removeCanceled(t *task) {
	s.q.mu.Lock()
	s.canceledLocked++
	s.q.removeLocked(t)
	s.unlockAndTryTerminate()
}

// Purge removes every canceled task still queued (JDK purge), in O(n).
func (s *Scheduler) Purge() {
	s.q.mu.Lock()
	s.q.filterLocked(func(t *task) bool { return t.loadState() == stateCanceled })
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

// Stats is a snapshot of a Scheduler's counters (the JDK's getPoolSize,
// getActiveCount, getTaskCount and friends), taken at one instant.
type Stats struct {
	// PoolSize is the number of live workers; CorePoolSize the target;
	// LargestPoolSize the most there ever were.
	PoolSize, CorePoolSize, LargestPoolSize int
	// Active counts tasks running now; Queued the tasks in the queue,
	// canceled ones not yet removed included.
	Active, Queued int
	// TaskCount = Completed + Active + Queued (JDK getTaskCount).
	TaskCount uint64
	// Completed counts finished runs, each periodic run and failed runs
	// included. Failed counts runs that returned an error or panicked;
	// Panicked those that panicked. Rejected counts rejected submissions;
	// Canceled futures canceled by any path.
	Completed, Rejected, Failed, Panicked, Canceled uint64
}

// Stats returns the scheduler's counters.
func (s *Scheduler) Stats() Stats {
	s.q.mu.Lock()
	st := Stats{
		PoolSize:        len(s.workers),
		CorePoolSize:    s.corePoolSize,
		LargestPoolSize: s.largestPoolSize,
		Active:          s.active,
		Queued:          s.q.heap.len(),
		Completed:       s.completed,
		Canceled:        s.canceledLocked,
	}
	s.q.mu.Unlock()
	st.TaskCount = st.Completed + uint64(st.Active) + uint64(st.Queued)
	st.Rejected = s.rejected.Load()
	st.Failed = s.failed.Load()
	st.Panicked = s.panicked.Load()
	st.Canceled += s.canceled.Load()
	return st
}

// String describes the scheduler as JDK ThreadPoolExecutor.toString does.
func (s *Scheduler) String() string {
	st := s.Stats()
	return fmt.Sprintf("scheduler.Scheduler[%v, pool size = %d, active tasks = %d, queued tasks = %d, completed tasks = %d]",
		runState(s.stateA.Load()), st.PoolSize, st.Active, st.Queued, st.Completed)
}
