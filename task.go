package scheduler

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// The scheduled task (JDK ScheduledFutureTask and FutureTask): Task and
// Callable, the ScheduledFuture it is, its state machine, and Future[T].

// Task is a unit of work: the Go counterpart of java.lang.Runnable. The ctx
// it is given is canceled when the task is canceled with interrupt
// (Cancel(true)) or the scheduler is stopped (ShutdownNow): the Go stand-in
// for Thread.interrupt. A returned error fails the run.
type Task func(ctx context.Context) error

// Callable is a unit of work with a result: the Go counterpart of
// java.util.concurrent.Callable. See [Task] for ctx and the error.
type Callable[T any] func(ctx context.Context) (T, error)

// ScheduledFuture is the handle of a scheduled task: the Go counterpart of
// java.util.concurrent.ScheduledFuture (and of RunnableScheduledFuture, as
// the same value is what Queue, ShutdownNow, hooks and rejection policies
// hand out). Its methods are safe for concurrent use.
type ScheduledFuture interface {
	// Cancel attempts to cancel the task (JDK Future.cancel). It returns
	// true if this call canceled it: the task will not run again, the
	// future is done and canceled, and Done is closed before Cancel
	// returns. It returns false if the task had already completed, failed
	// or been canceled. If mayInterruptIfRunning is true and a run is in
	// progress, the ctx given to that run is canceled; with false the run
	// is left to finish, and its outcome is discarded. Cancel does not
	// wait for a run in progress to end.
	Cancel(mayInterruptIfRunning bool) bool
	// IsCanceled reports whether the task was canceled before it
	// completed normally (JDK isCancelled).
	IsCanceled() bool
	// IsDone reports whether the task completed: normally, by failure or
	// by cancel (JDK isDone). A periodic task is done only once canceled
	// or stopped by a failed run.
	IsDone() bool
	// IsPeriodic reports whether the task runs at a fixed rate or with a
	// fixed delay (JDK isPeriodic).
	IsPeriodic() bool
	// Delay returns the time left until the task's next run, by the
	// scheduler's clock; negative when overdue (JDK getDelay). It keeps
	// decreasing once the task is done.
	Delay() time.Duration
	// Done returns a channel that is closed when the future is done.
	Done() <-chan struct{}
	// Wait blocks until the future is done and returns its outcome: nil
	// after a normal run, an error wrapping ErrCanceled after cancel, the
	// task's own error after a failed run, a *PanicError after a panic;
	// or ctx.Err() if ctx ends first.
	Wait(ctx context.Context) error
	// Name returns the name given by WithName, or "".
	Name() string
}

// taskState is a future's state: the JDK FutureTask states, without the
// INTERRUPTING and INTERRUPTED steps (an interrupt here is a context cancel,
// which needs no hand-shake with the runner).
type taskState uint32

const (
	// stateNew: not yet run, running, or (periodic) between runs.
	stateNew taskState = iota
	// stateCompleting: a runner won the race to set the outcome and is
	// writing it; it becomes stateNormal or stateFailed at once.
	stateCompleting
	// stateNormal: completed with a value (one-shot tasks only).
	stateNormal
	// stateFailed: the run returned an error or panicked.
	stateFailed
	// stateCanceled: canceled before it completed.
	stateCanceled
)

func (s taskState) String() string {
	switch s {
	case stateNew:
		return "New"
	case stateCompleting:
		return "Completing"
	case stateNormal:
		return "Normal"
	case stateFailed:
		return "Failed"
	case stateCanceled:
		return "Canceled"
	}
	return fmt.Sprintf("taskState(%d)", uint32(s))
}

// Flag bits or-ed into task.state above the taskState in the low bits.
const (
	// interruptedBit: the task's run context must be canceled.
	interruptedBit = 1 << 8
	// runningBit: a run's body has started and not yet ended (JDK
	// FutureTask's runner field). It is set by a CAS from stateNew, so a
	// Cancel that returned true either came after the body started, or
	// the body never starts.
	runningBit = 1 << 9
	stateMask  = interruptedBit - 1
)

// futureTask is the scheduled task (JDK ScheduledFutureTask): the state machine,
// the heap key and the outcome. One object lives for a task's whole life; a
// periodic task is re-queued, never copied. A plain Task's future is
// the *futureTask itself; a Callable's is the *Future that embeds it.
//
// The struct is 64 bytes, a size class of its own, because it is most of
// the memory of a pending task, and at millions of pending tasks the cost of
// scheduling is the cost of memory: a CPU profile of the grow to 10M puts
// about 60 % of the schedule phase in the first write to each fresh page
// and 10 % in the collector's marking. BenchmarkGrowThenCancel/pending=10M
// took 16-34 % less time per task than with the 80-byte task this replaced.
// Everything a plain one-shot task does not need lives behind aux, which
// such a task does not allocate (TestTaskIs64Bytes keeps it so).
type futureTask struct {
	s    *Scheduler
	fn   Task   // the decorated body; set once at creation
	when int64  // trigger time in clock nanoseconds since s.origin; s.q.mu; written only by setWhenLocked, never while queued
	seq  uint64 // tie-break for equal trigger times: per scheduler, set once under s.q.mu when first queued (JDK sequenceNumber)

	heapIndex int32         // slot in the heap, a timing wheel slot (wheelIndex), or notQueued; guarded by s.q.mu
	state     atomic.Uint32 // taskState, plus interruptedBit and runningBit

	// next and prev link the task into its timing wheel slot's list
	// (wheel.go); nil when the task is not in the wheel. s.q.mu.
	next, prev *futureTask

	// aux is set at creation for a periodic task, a Callable's and a
	// task with options; for any other task it is created on first
	// Done/Wait, first use of the run ctx, or a failure.
	aux atomic.Pointer[taskAux]
}

// taskExt holds what only some tasks have. The fields of the first group
// are written before the task is published and only read afterwards; the
// per-run fields after them say who writes them.
type taskExt struct {
	name            string
	continueOnError bool
	face            ScheduledFuture // the *Future[T] of a Callable; nil for a Task
	labels          context.Context // pprof labels carrying the name, or nil
	trigger         Trigger         // the calendar of a ScheduleWithTrigger task, or nil
	coalesce        bool            // MissedRunPolicy CoalesceMissed (fixed-rate and trigger tasks)
	jitter          int64           // WithJitter's max, in clock nanoseconds; 0 for none

	// Per run; q.mu. They are written before each (re-)queue.
	offset  int64     // this run's jitter: when = due + offset
	dueWall time.Time // a trigger task's due time, exactly as Next returned it

	// Per run of a trigger task, written and read only by the worker
	// running it (nextrun.go): the trigger's next time if
	// CoalesceMissed already asked for it, and the clock's monotonic and
	// wall readings taken together as the run began.
	lookahead triggerLookahead
	clockMono int64
	clockWall time.Time
}

// taskAux holds the part of a task that a plain one-shot task does without:
// its kind and period, its options, the failure, and the done channel and
// run context, made lazily so that a task that nobody waits on and whose
// run never looks at ctx.Done costs no channel. A lazily made aux has a
// zero period and no options, which is what such a task has.
type taskAux struct {
	// Set at creation, before the task is published, then read-only.
	period int64    // the kind, and the period or delay (nextrun.go: encodePeriod, kind)
	ext    *taskExt // the options, or nil (what it points to has per-run fields, see taskExt)

	err error // the failure; written once before state leaves stateCompleting

	mu     sync.Mutex // guards the fields below
	done   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
}

// closedChan is the Done channel of a future that was already done when
// Done was first called.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (t *futureTask) loadState() taskState { return taskState(t.state.Load() & stateMask) }

// face returns the ScheduledFuture value the scheduling call returned: the
// *Future[T] of a callable, else the task itself.
func (t *futureTask) face() ScheduledFuture {
	if ext := t.ext(); ext != nil && ext.face != nil {
		return ext.face
	}
	return t
}

// ext returns the task's options, or nil.
func (t *futureTask) ext() *taskExt {
	if a := t.aux.Load(); a != nil {
		return a.ext
	}
	return nil
}

// schedTask lets the scheduler find the task behind a ScheduledFuture.
func (t *futureTask) schedTask() *futureTask { return t }

// taskHolder is implemented by *futureTask and, through embedding, by *Future[T].
type taskHolder interface{ schedTask() *futureTask }

// logName returns the task's name, or a stand-in for logs.
func (t *futureTask) logName() string {
	if ext := t.ext(); ext != nil && ext.name != "" {
		return ext.name
	}
	return fmt.Sprintf("task-%d", t.seq)
}

func (t *futureTask) continueOnError() bool {
	ext := t.ext()
	return ext != nil && ext.continueOnError
}

// getAux returns the task's aux, creating it on first use.
func (t *futureTask) getAux() *taskAux {
	if a := t.aux.Load(); a != nil {
		return a
	}
	t.aux.CompareAndSwap(nil, &taskAux{})
	return t.aux.Load()
}

// fromNew moves the task out of stateNew with one CAS on the state word,
// keeping the flag bits; set is or-ed into the low bits' replacement. It
// reports false, changing nothing, if the task has already left stateNew.
// Every transition that decides a race (run starts, outcome set, cancel)
// goes through it, so exactly one of them wins (JDK FutureTask's CASes).
func (t *futureTask) fromNew(to taskState, set uint32) bool {
	for {
		old := t.state.Load()
		if taskState(old&stateMask) != stateNew {
			return false
		}
		if t.state.CompareAndSwap(old, old&^stateMask|uint32(to)|set) {
			return true
		}
	}
}

// beginRun marks the body as started, unless the task is no longer
// stateNew (canceled meanwhile). It reports whether the body may run.
func (t *futureTask) beginRun() bool { return t.fromNew(stateNew, runningBit) }

// endRun clears the running mark after the body returned.
func (t *futureTask) endRun() { t.state.And(^uint32(runningBit)) }

// complete sets the outcome of a run (JDK set / setException): it succeeds
// only from stateNew, so a task canceled during its run keeps its canceled
// state and the run's outcome is discarded. err == nil completes normally.
// It reports whether this call set the outcome.
func (t *futureTask) complete(err error) bool {
	if !t.fromNew(stateCompleting, 0) {
		return false
	}
	final := stateNormal
	if err != nil {
		t.getAux().err = err
		final = stateFailed
	}
	// Only this goroutine may leave stateCompleting: a plain store would
	// lose a concurrent interrupt bit, so swap the low bits with a CAS.
	for {
		old := t.state.Load()
		if t.state.CompareAndSwap(old, old&^stateMask|uint32(final)) {
			break
		}
	}
	t.finish()
	return true
}

// cancelState moves the task from stateNew to stateCanceled (JDK cancel's
// CAS), counts it and closes Done. It does not touch the queue; the caller
// does. Cancel does the same, but counts under the queue lock when it takes
// it.
func (t *futureTask) cancelState() bool {
	if !t.fromNew(stateCanceled, 0) {
		return false
	}
	t.s.canceled.Add(1)
	t.finish()
	return true
}

// finish closes Done (JDK finishCompletion). The state is already final, so
// a Done created after this sees it and returns a closed channel.
func (t *futureTask) finish() {
	a := t.aux.Load()
	if a == nil {
		return
	}
	a.mu.Lock()
	if a.done != nil && a.done != closedChan {
		close(a.done)
	}
	a.done = closedChan
	a.mu.Unlock()
}

// Done implements [ScheduledFuture]; the JDK's nearest is FutureTask.done.
func (t *futureTask) Done() <-chan struct{} {
	if t.loadState() > stateCompleting {
		return closedChan
	}
	a := t.getAux()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done == nil {
		// finish stores closedChan under a.mu after the final state, so
		// either it runs after this and closes the new channel, or the
		// state read here is already final.
		if t.loadState() > stateCompleting {
			a.done = closedChan
		} else {
			a.done = make(chan struct{})
		}
	}
	return a.done
}

// Cancel implements [ScheduledFuture] (JDK ScheduledFutureTask.cancel).
// Under the remove-on-cancel policy the task also leaves the queue at once.
func (t *futureTask) Cancel(mayInterruptIfRunning bool) bool {
	if !t.fromNew(stateCanceled, 0) {
		return false
	}
	t.finish()
	if mayInterruptIfRunning {
		t.interrupt()
	}
	if t.s.removeOnCancel.Load() {
		t.s.removeCanceled(t) // counts the cancel under the lock it takes anyway
	} else {
		t.s.canceled.Add(1)
	}
	return true
}

// IsCanceled implements [ScheduledFuture] (JDK isCancelled).
func (t *futureTask) IsCanceled() bool { return t.loadState() == stateCanceled }

// IsDone implements [ScheduledFuture] (JDK isDone). It becomes true when
// Done is closed.
func (t *futureTask) IsDone() bool { return t.loadState() > stateCompleting }

// IsPeriodic implements [ScheduledFuture] (JDK isPeriodic).
func (t *futureTask) IsPeriodic() bool { return t.kind().periodic() }

// Delay implements [ScheduledFuture] (JDK getDelay).
func (t *futureTask) Delay() time.Duration {
	t.s.q.mu.Lock()
	defer t.s.q.mu.Unlock()
	return time.Duration(t.when - t.s.q.now())
}

// Name implements [ScheduledFuture]; the JDK has no task names.
func (t *futureTask) Name() string {
	if ext := t.ext(); ext != nil {
		return ext.name
	}
	return ""
}

// Wait implements [ScheduledFuture] (JDK Future.get without the value).
func (t *futureTask) Wait(ctx context.Context) error {
	if !t.IsDone() {
		select {
		case <-t.Done():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return t.outcome()
}

// outcome returns the error of a done task (JDK report).
func (t *futureTask) outcome() error {
	switch t.loadState() {
	case stateCanceled:
		return ErrCanceled
	case stateFailed:
		return t.aux.Load().err
	}
	return nil
}

// String describes the task the way JDK FutureTask.toString does.
func (t *futureTask) String() string {
	var st string
	switch t.loadState() {
	case stateNormal:
		st = "Completed normally"
	case stateFailed:
		st = "Completed exceptionally: " + t.aux.Load().err.Error()
	case stateCanceled:
		st = "Canceled"
	default:
		st = "Not completed"
	}
	return fmt.Sprintf("scheduler.Future[%s][%s]", t.logName(), st)
}

// Future is the future of a [Callable]: a [ScheduledFuture] whose Get
// returns the callable's result. It is the Go counterpart of the JDK's
// ScheduledFutureTask<V>. A Future comes only from [ScheduleCallable],
// [SubmitCallable] or [InvokeAll]; the zero value is not usable. Its methods
// are safe for concurrent use.
type Future[T any] struct {
	value T // written by the run before the state becomes final; read after
	futureTask
}

// Get waits for the future to be done and returns the callable's result and
// nil; or the zero T and an error wrapping ErrCanceled after cancel, the
// callable's own error after a failure, a *PanicError after a panic; or
// ctx.Err() if ctx ends first (JDK Future.get). A done future answers even
// when ctx has already ended.
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	if err := f.Wait(ctx); err != nil {
		var zero T
		return zero, err
	}
	return f.value, nil
}

// String describes the future (JDK FutureTask.toString).
func (f *Future[T]) String() string { return f.futureTask.String() }

// schedTask lets the scheduler find the task behind the future; a nil
// *Future has none.
func (f *Future[T]) schedTask() *futureTask {
	if f == nil {
		return nil
	}
	return &f.futureTask
}

// newTaskExt builds the optional part of a task, or nil when none is
// needed; kind says which kind of task it is for the defaults and checks
// of the task options. The error wraps ErrInvalidArgument.
func newTaskExt(opts []TaskOption, face ScheduledFuture, kind TaskKind) (*taskExt, error) {
	if len(opts) == 0 && kind != KindTrigger {
		// The common case, kept free of allocation: tc below escapes
		// through the interface call, so it is on the heap.
		if face == nil {
			return nil, nil
		}
		return &taskExt{face: face}, nil
	}
	var tc taskConfig
	for i, o := range opts {
		if o == nil {
			return nil, invalid("TaskOption", "option %d is nil", i)
		}
		o.applyTask(&tc)
	}
	if tc.missed != CatchUpMissed && tc.missed != CoalesceMissed {
		return nil, invalid("WithMissedRuns", "unknown policy %v", tc.missed)
	}
	if tc.jitter < 0 {
		return nil, invalid("WithJitter", "max %v < 0", tc.jitter)
	}
	coalesce := kind.coalescesMissed(&tc)
	if tc.name == "" && !tc.continueOnError && face == nil && !coalesce && tc.jitter == 0 && kind != KindTrigger {
		return nil, nil
	}
	ext := &taskExt{
		name:            tc.name,
		continueOnError: tc.continueOnError,
		face:            face,
		coalesce:        coalesce,
		jitter:          int64(tc.jitter),
	}
	if tc.name != "" {
		ext.labels = pprof.WithLabels(context.Background(), pprof.Labels("scheduler.task", tc.name))
	}
	return ext, nil
}
